using System.Globalization;

namespace Saito.Testing;

/// <summary>
/// Debian's mosquitto_pub and mosquitto_sub (mosquitto-clients 2.0). mosquitto_sub runs with -d, whose
/// "Subscribed (mid: n): q" line is the SUBACK signal, and prints each message through -F as
/// <c>MSG\tqos\tretain\tlength\thex payload\ttopic</c>, so binary payloads survive. It cannot report v5
/// properties in a form we can parse without loss, so <see cref="ReceivedMessage.UserProperties"/> stays null.
/// mosquitto_sub flushes stdout only after a message, so the SUBACK line would sit in its buffer:
/// it runs under <c>stdbuf -oL</c> (coreutils) to get every line as it is written.
/// </summary>
internal sealed class MosquittoCliClient : ExternalMqttClient
{
    private const string MessagePrefix = "MSG\t";
    private const string Format = MessagePrefix + @"%q\t%r\t%l\t%x\t%t";
    private const string SubscribedPrefix = "Subscribed (mid: ";

    /// <summary>Lifetime of a subscriber that has no message count; Dispose normally ends it long before.</summary>
    private static readonly TimeSpan s_openEndedSubscriber = TimeSpan.FromMinutes(2);

    public MosquittoCliClient(MqttVersion version, MqttTransport transport)
        : base("mosquitto", version, transport)
    {
        if (transport == MqttTransport.WebSocket)
        {
            throw new NotSupportedException("mosquitto_pub/sub 2.0 do not speak MQTT over WebSocket");
        }
    }

    /// <summary>mosquitto_pub cannot drop its connection on purpose, so the dropping client is a
    /// mosquitto_sub that is killed (SIGKILL) once subscribed.</summary>
    public override async Task ConnectAndDropAsync(BrokerEndpoint endpoint, ClientOptions options, CancellationToken cancellationToken = default)
    {
        string filter = $"saito-test/will-holder/{Guid.NewGuid():N}";
        await using var holder = await SubscribeAsync(endpoint, [filter], options, cancellationToken: cancellationToken);
        await holder.DropAsync();
    }

    private protected override IEnumerable<ProcessCommand> PublishCommands(
        BrokerEndpoint endpoint, IReadOnlyList<OutgoingMessage> messages, ClientOptions options, ScratchDirectory scratch)
    {
        ExternalClientSettings.EnsureExists(ExternalClientSettings.MosquittoPub, "mosquitto_pub (mosquitto-clients)");
        if (messages.Count == 0)
        {
            // mosquitto_pub always publishes something: to just connect and disconnect,
            // it sends an empty message to a topic nobody reads.
            messages = [new OutgoingMessage($"saito-test/connect-only/{Guid.NewGuid():N}", ReadOnlyMemory<byte>.Empty)];
        }

        // mosquitto_pub publishes to one topic per run; -l sends one message per stdin line over one connection.
        int i = 0;
        while (i < messages.Count)
        {
            var batch = new List<string>();
            string topic = messages[i].Topic;
            while (i < messages.Count && messages[i].Topic == topic && IsCommandLineText(messages[i].Payload, out string text) && !text.Contains('\n', StringComparison.Ordinal) && !text.Contains('\r', StringComparison.Ordinal))
            {
                batch.Add(text);
                i++;
            }

            var args = CommonArguments(endpoint, options);
            args.AddRange(["-t", topic, "-q", Number(options.QoS)]);
            if (options.Retain)
            {
                args.Add("-r");
            }

            foreach (var (key, value) in options.UserProperties)
            {
                args.AddRange(["-D", "publish", "user-property", key, value]);
            }

            if (batch.Count == 1)
            {
                args.AddRange(["-m", batch[0]]);
                yield return new ProcessCommand(ExternalClientSettings.MosquittoPub, args);
            }
            else if (batch.Count > 1)
            {
                args.Add("-l");
                yield return new ProcessCommand(ExternalClientSettings.MosquittoPub, args, string.Join('\n', batch) + "\n");
            }
            else
            {
                var payload = messages[i++].Payload;
                if (payload.IsEmpty)
                {
                    args.Add("-n");
                }
                else
                {
                    args.AddRange(["-f", scratch.WriteFile(payload)]);
                }

                yield return new ProcessCommand(ExternalClientSettings.MosquittoPub, args);
            }
        }
    }

    private protected override ProcessCommand SubscribeCommand(BrokerEndpoint endpoint, IReadOnlyList<string> filters, ClientOptions options, int? exitAfter)
    {
        ExternalClientSettings.EnsureExists(ExternalClientSettings.MosquittoSub, "mosquitto_sub (mosquitto-clients)");
        ExternalClientSettings.EnsureExists(ExternalClientSettings.Stdbuf, "stdbuf (coreutils)");
        var args = CommonArguments(endpoint, options);
        args.AddRange(["-d", "-q", Number(options.QoS), "-F", Format]);
        foreach (string filter in filters)
        {
            args.AddRange(["-t", filter]);
        }

        switch (exitAfter)
        {
            case 0:
                args.Add("-E");
                break;
            case int count:
                args.AddRange(["-C", Number(count), "-W", Seconds(options.Timeout)]);
                break;
            default:
                args.AddRange(["-W", Seconds(s_openEndedSubscriber)]);
                break;
        }

        return new ProcessCommand(ExternalClientSettings.Stdbuf, ["-oL", ExternalClientSettings.MosquittoSub, .. args]);
    }

    private protected override SubscriberEvent? ParseSubscriberLine(string line)
    {
        if (line.StartsWith(MessagePrefix, StringComparison.Ordinal))
        {
            string[] fields = line[MessagePrefix.Length..].Split('\t', 5);
            if (fields.Length != 5)
            {
                throw new FormatException("mosquitto_sub message line with too few fields");
            }

            byte[] payload = Convert.FromHexString(fields[3]);
            if (payload.Length != int.Parse(fields[2], CultureInfo.InvariantCulture))
            {
                throw new FormatException("mosquitto_sub payload length does not match its hex");
            }

            return new SubscriberEvent.Message(new ReceivedMessage(
                fields[4], payload, int.Parse(fields[0], CultureInfo.InvariantCulture), fields[1] == "1"));
        }

        if (line.StartsWith(SubscribedPrefix, StringComparison.Ordinal))
        {
            // "Subscribed (mid: 1): 1, 2"
            string codes = line[(line.IndexOf("):", StringComparison.Ordinal) + 2)..];
            return new SubscriberEvent.Subscribed(
                [.. codes.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).Select(c => int.Parse(c, CultureInfo.InvariantCulture))]);
        }

        return null; // -d chatter: "Client … sending CONNECT" and the like.
    }

    private List<string> CommonArguments(BrokerEndpoint endpoint, ClientOptions options)
    {
        var args = new List<string>
        {
            "-h", endpoint.Host,
            "-V", Version == MqttVersion.V311 ? "311" : "5",
            "--nodelay",
        };
        if (Transport == MqttTransport.Tls)
        {
            args.AddRange(["-p", Number(endpoint.TlsPort!.Value), "--cafile", endpoint.CaCertificatePath!]);
        }
        else
        {
            args.AddRange(["-p", Number(endpoint.Port)]);
        }

        AddSessionArguments(args, options, noCleanFlag: "-c", sessionExpiryFlag: "-x");
        return args;
    }
}

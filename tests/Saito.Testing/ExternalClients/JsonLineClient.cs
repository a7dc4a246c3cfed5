using System.Text.Json;

namespace Saito.Testing;

/// <summary>
/// The two scripts in tests/clients (paho_client.py and mqttjs_client.js) share one command line and
/// print one JSON object per line; this is what they have in common. They differ only in how the
/// broker address is given (host/port vs URL) and in the program that runs them.
/// </summary>
internal abstract class JsonLineClient : ExternalMqttClient
{
    private static readonly TimeSpan s_openEndedSubscriber = TimeSpan.FromMinutes(2);

    private protected JsonLineClient(string family, MqttVersion version, MqttTransport transport)
        : base(family, version, transport)
    {
    }

    /// <summary>The program, the script and the broker address arguments.</summary>
    private protected abstract List<string> Invocation(string command, BrokerEndpoint endpoint, out string fileName);

    private protected override IEnumerable<ProcessCommand> PublishCommands(
        BrokerEndpoint endpoint, IReadOnlyList<OutgoingMessage> messages, ClientOptions options, ScratchDirectory scratch)
    {
        var args = Arguments("pub", endpoint, options, out string fileName);
        args.Add("--timeout");
        args.Add(Seconds(options.Timeout));
        if (options.Retain)
        {
            args.Add("-r");
        }

        foreach (var (key, value) in options.UserProperties)
        {
            args.AddRange(["--user-property", $"{key}={value}"]);
        }

        if (messages.Count == 0)
        {
            return [new ProcessCommand(fileName, args)];
        }

        if (messages.All(m => IsCommandLineText(m.Payload, out _)))
        {
            // One run, one connection, messages in order: the n-th -t goes with the n-th -m.
            var all = new List<string>(args);
            foreach (var message in messages)
            {
                IsCommandLineText(message.Payload, out string text);
                all.AddRange(["-t", message.Topic, "-m", text]);
            }

            return [new ProcessCommand(fileName, all)];
        }

        // Binary, empty or very large payloads go through files, one run per message.
        return messages.Select(message =>
        {
            var one = new List<string>(args) { "-t", message.Topic };
            if (message.Payload.IsEmpty)
            {
                one.Add("-n");
            }
            else
            {
                one.AddRange(["-f", scratch.WriteFile(message.Payload)]);
            }

            return new ProcessCommand(fileName, one);
        }).ToList();
    }

    private protected override ProcessCommand SubscribeCommand(BrokerEndpoint endpoint, IReadOnlyList<string> filters, ClientOptions options, int? exitAfter)
    {
        var args = Arguments("sub", endpoint, options, out string fileName);
        foreach (string filter in filters)
        {
            args.AddRange(["-t", filter]);
        }

        if (exitAfter is int count)
        {
            args.AddRange(["--count", Number(count), "--timeout", Seconds(options.Timeout)]);
        }
        else
        {
            args.AddRange(["--timeout", Seconds(s_openEndedSubscriber)]);
        }

        return new ProcessCommand(fileName, args);
    }

    private protected override ProcessCommand DropCommand(BrokerEndpoint endpoint, ClientOptions options)
    {
        var args = Arguments("pub", endpoint, options, out string fileName);
        args.AddRange(["--timeout", Seconds(options.Timeout), "--disconnect-without-close"]);
        return new ProcessCommand(fileName, args);
    }

    private protected override SubscriberEvent? ParseSubscriberLine(string line)
    {
        JsonElement root;
        try
        {
            using var document = JsonDocument.Parse(line);
            root = document.RootElement.Clone();
        }
        catch (JsonException ex)
        {
            throw new FormatException($"not JSON ({ex.Message})", ex);
        }

        string? kind = root.TryGetProperty("event", out var e) ? e.GetString() : null;
        switch (kind)
        {
            case "connected":
                return new SubscriberEvent.Connected(root.GetProperty("session_present").GetBoolean());
            case "subscribed":
                return new SubscriberEvent.Subscribed([.. root.GetProperty("granted").EnumerateArray().Select(g => g.GetInt32())]);
            case "message":
                var properties = root.TryGetProperty("properties", out var p) ? p : default;
                var userProperties = new List<KeyValuePair<string, string>>();
                string? contentType = null;
                if (properties.ValueKind == JsonValueKind.Object)
                {
                    if (properties.TryGetProperty("user_properties", out var pairs))
                    {
                        userProperties.AddRange(pairs.EnumerateArray().Select(pair =>
                            KeyValuePair.Create(pair[0].GetString()!, pair[1].GetString()!)));
                    }

                    if (properties.TryGetProperty("content_type", out var ct))
                    {
                        contentType = ct.GetString();
                    }
                }

                return new SubscriberEvent.Message(new ReceivedMessage(
                    root.GetProperty("topic").GetString()!,
                    Convert.FromBase64String(root.GetProperty("payload_b64").GetString()!),
                    root.GetProperty("qos").GetInt32(),
                    root.GetProperty("retain").GetBoolean())
                {
                    UserProperties = userProperties,
                    ContentType = contentType,
                });
            default:
                return null;
        }
    }

    private List<string> Arguments(string command, BrokerEndpoint endpoint, ClientOptions options, out string fileName)
    {
        var args = Invocation(command, endpoint, out fileName);
        args.AddRange(["--version", Version == MqttVersion.V311 ? "311" : "5", "-q", Number(options.QoS)]);
        AddSessionArguments(args, options, noCleanFlag: "--no-clean", sessionExpiryFlag: "--session-expiry");
        return args;
    }
}

/// <summary>tests/clients/paho_client.py on Debian's python3-paho-mqtt 1.6 (TCP and TLS).</summary>
internal sealed class PahoClient : JsonLineClient
{
    public PahoClient(MqttVersion version, MqttTransport transport)
        : base("paho", version, transport)
    {
        if (transport == MqttTransport.WebSocket)
        {
            throw new NotSupportedException("paho_client.py speaks TCP and TLS; MQTT.js covers WebSocket");
        }
    }

    private protected override List<string> Invocation(string command, BrokerEndpoint endpoint, out string fileName)
    {
        ExternalClientSettings.EnsureExists(ExternalClientSettings.Python, "Python (SAITO_TEST_PYTHON)");
        ExternalClientSettings.EnsureExists(ExternalClientSettings.PahoScript, "The paho test client");
        fileName = ExternalClientSettings.Python;
        var args = new List<string> { ExternalClientSettings.PahoScript, command, "--host", endpoint.Host };
        if (Transport == MqttTransport.Tls)
        {
            args.AddRange(["--port", Number(endpoint.TlsPort!.Value), "--tls", "--cafile", endpoint.CaCertificatePath!]);
        }
        else
        {
            args.AddRange(["--port", Number(endpoint.Port)]);
        }

        return args;
    }
}

/// <summary>tests/clients/mqttjs_client.js on Node with the mqtt package (MQTT.js 5): mqtt://, mqtts:// and ws://.</summary>
internal sealed class MqttJsClient : JsonLineClient
{
    public MqttJsClient(MqttVersion version, MqttTransport transport)
        : base("MQTT.js", version, transport)
    {
    }

    private protected override List<string> Invocation(string command, BrokerEndpoint endpoint, out string fileName)
    {
        ExternalClientSettings.EnsureMqttJsInstalled();
        fileName = ExternalClientSettings.Node;
        var args = new List<string> { ExternalClientSettings.MqttJsScript, command };
        switch (Transport)
        {
            case MqttTransport.Tls:
                args.AddRange(["--url", $"mqtts://{endpoint.Host}:{Number(endpoint.TlsPort!.Value)}", "--cafile", endpoint.CaCertificatePath!]);
                break;
            case MqttTransport.WebSocket:
                args.AddRange(["--url", endpoint.WebSocketUrl!]);
                break;
            default:
                args.AddRange(["--url", $"mqtt://{endpoint.Host}:{Number(endpoint.Port)}"]);
                break;
        }

        return args;
    }
}

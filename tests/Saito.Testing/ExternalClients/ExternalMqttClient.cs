using System.Globalization;
using System.Text;

namespace Saito.Testing;

/// <summary>
/// An independent MQTT client (mosquitto_pub/sub, paho-mqtt, MQTT.js) run as a process against a
/// <see cref="BrokerEndpoint"/>. One instance is one client family, protocol version and transport,
/// e.g. "paho 5.0 over TLS". Publishing waits for the client to finish (which it does only after
/// the broker acknowledged every QoS 1/2 message); subscribing returns once the SUBACK arrived.
/// </summary>
public abstract class ExternalMqttClient
{
    private protected ExternalMqttClient(string family, MqttVersion version, MqttTransport transport)
    {
        Family = family;
        Version = version;
        Transport = transport;
    }

    public string Family { get; }
    public MqttVersion Version { get; }
    public MqttTransport Transport { get; }

    /// <summary>"mosquitto 3.1.1", "paho 5.0 over TLS", "MQTT.js 5.0 over WebSocket".</summary>
    public string Name => $"{Family} {(Version == MqttVersion.V311 ? "3.1.1" : "5.0")}" + Transport switch
    {
        MqttTransport.Tls => " over TLS",
        MqttTransport.WebSocket => " over WebSocket",
        _ => string.Empty,
    };

    public override string ToString() => Name;

    /// <summary>Skips the running test when <paramref name="endpoint"/> lacks this client's transport.</summary>
    public void SkipUnlessSupportedBy(BrokerEndpoint endpoint)
    {
        switch (Transport)
        {
            case MqttTransport.Tls when endpoint.TlsPort is null || endpoint.CaCertificatePath is null:
                Assert.Skip($"{endpoint.Name} has no TLS listener (BrokerEndpoint.TlsPort or CaCertificatePath is null), needed by {Name}.");
                break;
            case MqttTransport.WebSocket when endpoint.WebSocketUrl is null:
                Assert.Skip($"{endpoint.Name} has no WebSocket listener (BrokerEndpoint.WebSocketUrl is null), needed by {Name}.");
                break;
        }
    }

    public Task PublishAsync(BrokerEndpoint endpoint, OutgoingMessage message, ClientOptions? options = null, CancellationToken cancellationToken = default) =>
        PublishAsync(endpoint, [message], options, cancellationToken);

    /// <summary>Publishes the messages in order (over one connection where the client allows it) and
    /// returns when the client has finished, i.e. every QoS 1/2 message was acknowledged.</summary>
    public async Task PublishAsync(BrokerEndpoint endpoint, IReadOnlyList<OutgoingMessage> messages, ClientOptions? options = null, CancellationToken cancellationToken = default)
    {
        options ??= ClientOptions.Default;
        SkipUnlessSupportedBy(endpoint);
        using var scratch = new ScratchDirectory();
        foreach (var command in PublishCommands(endpoint, messages, options, scratch))
        {
            await RunToCompletionAsync(command, "publish", options.Timeout, cancellationToken);
        }
    }

    /// <summary>
    /// Starts a subscriber and returns once its SUBACK arrived, so whatever is published next reaches it.
    /// With <paramref name="exitAfter"/> the client leaves by itself after that many messages
    /// (0: right after the SUBACK, and this returns once it has left cleanly).
    /// </summary>
    public async Task<ExternalSubscriber> SubscribeAsync(
        BrokerEndpoint endpoint, IReadOnlyList<string> filters, ClientOptions? options = null, int? exitAfter = null, CancellationToken cancellationToken = default)
    {
        options ??= ClientOptions.Default;
        SkipUnlessSupportedBy(endpoint);
        var subscriber = new ExternalSubscriber(Name, ParseSubscriberLine);
        subscriber.Start(SubscribeCommand(endpoint, filters, options, exitAfter));
        try
        {
            if (exitAfter == 0)
            {
                await subscriber.WaitForExitAsync(options.Timeout, cancellationToken);
                if (subscriber.GrantedQoS is null)
                {
                    throw subscriber.Failure("exited without reporting a SUBACK");
                }
            }
            else
            {
                await subscriber.WaitUntilSubscribedAsync(options.Timeout, cancellationToken);
            }
        }
        catch
        {
            await subscriber.DisposeAsync();
            throw;
        }

        return subscriber;
    }

    /// <summary>Connects (with <see cref="ClientOptions.Will"/>, typically) and then drops the connection
    /// without DISCONNECT, as a crashed device would. Returns once the connection is gone.</summary>
    public virtual async Task ConnectAndDropAsync(BrokerEndpoint endpoint, ClientOptions options, CancellationToken cancellationToken = default)
    {
        SkipUnlessSupportedBy(endpoint);
        await RunToCompletionAsync(DropCommand(endpoint, options), "connect and drop", options.Timeout, cancellationToken);
    }

    /// <summary>Connects and leaves with a normal DISCONNECT, publishing nothing.</summary>
    public virtual async Task ConnectAndDisconnectAsync(BrokerEndpoint endpoint, ClientOptions options, CancellationToken cancellationToken = default) =>
        await PublishAsync(endpoint, [], options, cancellationToken);

    private protected abstract IEnumerable<ProcessCommand> PublishCommands(BrokerEndpoint endpoint, IReadOnlyList<OutgoingMessage> messages, ClientOptions options, ScratchDirectory scratch);

    private protected abstract ProcessCommand SubscribeCommand(BrokerEndpoint endpoint, IReadOnlyList<string> filters, ClientOptions options, int? exitAfter);

    private protected virtual ProcessCommand DropCommand(BrokerEndpoint endpoint, ClientOptions options) =>
        throw new NotSupportedException($"{Name} cannot drop its connection on purpose");

    private protected abstract SubscriberEvent? ParseSubscriberLine(string line);

    private protected static string Seconds(TimeSpan timeout) =>
        Math.Ceiling(timeout.TotalSeconds).ToString(CultureInfo.InvariantCulture);

    private protected static string Number(long value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>
    /// The client id (<c>-i</c>), clean session, session expiry and will of <paramref name="options"/> as command-line
    /// arguments; the two flags whose names differ between the clients are given.
    /// </summary>
    private protected static void AddSessionArguments(List<string> args, ClientOptions options, string noCleanFlag, string sessionExpiryFlag)
    {
        if (options.ClientId is { } id)
        {
            args.AddRange(["-i", id]);
        }

        if (!options.CleanSession)
        {
            args.Add(noCleanFlag);
        }

        if (options.SessionExpirySeconds is { } expiry)
        {
            args.AddRange([sessionExpiryFlag, Number(expiry)]);
        }

        if (options.Will is { } will)
        {
            args.AddRange(["--will-topic", will.Topic, "--will-payload", will.Payload, "--will-qos", Number(will.QoS)]);
            if (will.Retain)
            {
                args.Add("--will-retain");
            }
        }
    }

    /// <summary>A payload that can go on a command line as text (-m) instead of through a file.</summary>
    private protected static bool IsCommandLineText(ReadOnlyMemory<byte> payload, out string text)
    {
        text = string.Empty;
        if (payload.Length is 0 or > 32 * 1024 || payload.Span.Contains((byte)0))
        {
            return false;
        }

        try
        {
            text = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(payload.Span);
            return true;
        }
        catch (DecoderFallbackException)
        {
            return false;
        }
    }

    private async Task RunToCompletionAsync(ProcessCommand command, string what, TimeSpan timeout, CancellationToken cancellationToken)
    {
        await using var process = ExternalProcess.Start(Name, command);
        int exitCode = await process.WaitForExitAsync(timeout, cancellationToken);
        if (exitCode != 0)
        {
            throw new ExternalClientException($"{Name} failed to {what} (exit code {exitCode}).\n{process.Describe()}");
        }
    }
}

/// <summary>A temporary folder for payload files, deleted afterwards.</summary>
internal sealed class ScratchDirectory : IDisposable
{
    private string? _path;
    private int _files;

    public string WriteFile(ReadOnlyMemory<byte> content)
    {
        _path ??= Directory.CreateDirectory(Path.Combine(Path.GetTempPath(), "saito-client-" + Guid.NewGuid().ToString("N")[..8])).FullName;
        string file = Path.Combine(_path, $"payload-{++_files}.bin");
        File.WriteAllBytes(file, content.ToArray());
        return file;
    }

    public void Dispose()
    {
        if (_path is not null)
        {
            try
            {
                Directory.Delete(_path, recursive: true);
            }
            catch (IOException)
            {
                // A leftover temp folder is harmless.
            }
        }
    }
}

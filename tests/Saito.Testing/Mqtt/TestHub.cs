using MQTTnet;
using MQTTnet.Exceptions;
using MQTTnet.Protocol;
using Saito.Mqtt.Packets;
using MqttNetProtocolVersion = MQTTnet.Formatter.MqttProtocolVersion;

namespace Saito.Testing;

/// <summary>How a <see cref="TestHub"/> connects.</summary>
public sealed record TestHubOptions
{
    public string Host { get; init; } = "127.0.0.1";

    public required int Port { get; init; }

    public MqttProtocolVersion ProtocolVersion { get; init; } = MqttProtocolVersion.V500;

    public string ClientId { get; init; } = "hub-" + Guid.NewGuid().ToString("N")[..8];

    /// <summary>Off: a persistent session (with <see cref="SessionExpiry"/> on 5.0).</summary>
    public bool CleanStart { get; init; } = true;

    public TimeSpan SessionExpiry { get; init; } = TimeSpan.Zero;

    /// <summary>A publish after the connection dropped connects again first (once; a failure throws <see cref="TestHubDisconnectedException"/>).</summary>
    public bool Reconnect { get; init; }
}

/// <summary>The hub's connection is closed (or was closed while the publish waited for its acknowledgement).</summary>
public sealed class TestHubDisconnectedException(string message, Exception? innerException) : Exception(message, innerException);

/// <summary>
/// A hub for end-to-end tests, on MQTTnet's client: connects over TCP (3.1.1 or 5.0), publishes at QoS 0, 1 or 2 and
/// returns the broker's reason code (PUBACK or PUBREC; 3.1.1 has none, so success), or throws
/// <see cref="TestHubDisconnectedException"/> when the connection is closed. Publishes may run concurrently.
/// </summary>
public sealed class TestHub : IAsyncDisposable
{
    private readonly IMqttClient _client = new MqttClientFactory().CreateMqttClient();
    private readonly MqttClientOptions _mqttOptions;
    private readonly TestHubOptions _options;
    private readonly SemaphoreSlim _connecting = new(1, 1);

    private TestHub(TestHubOptions options)
    {
        _options = options;
        bool v5 = options.ProtocolVersion == MqttProtocolVersion.V500;
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer(options.Host, options.Port)
            .WithClientId(options.ClientId)
            .WithProtocolVersion(v5 ? MqttNetProtocolVersion.V500 : MqttNetProtocolVersion.V311)
            .WithCleanStart(options.CleanStart)
            .WithKeepAlivePeriod(TimeSpan.FromSeconds(30))

            // Tests hold acknowledgements back on purpose (a locked database, a full disk) and wait with their own deadlines.
            .WithTimeout(TimeSpan.FromMinutes(5));
        if (v5 && options.SessionExpiry > TimeSpan.Zero)
        {
            builder.WithSessionExpiryInterval((uint)options.SessionExpiry.TotalSeconds);
        }

        _mqttOptions = builder.Build();
    }

    public bool IsConnected => _client.IsConnected;

    public static async Task<TestHub> ConnectAsync(TestHubOptions options, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(options);
        var hub = new TestHub(options);
        try
        {
            var result = await hub._client.ConnectAsync(hub._mqttOptions, cancellationToken);
            if (result.ResultCode != MqttClientConnectResultCode.Success)
            {
                throw new InvalidOperationException($"{options.Host}:{options.Port} refused the connection: {result.ResultCode} {result.ReasonString}");
            }
        }
        catch
        {
            await hub.DisposeAsync();
            throw;
        }

        return hub;
    }

    /// <summary>The broker's reason code for the publish (QoS 0: success once sent).</summary>
    public async Task<MqttReasonCode> PublishAsync(string topic, byte[] payload, MqttQoS qos, CancellationToken cancellationToken = default)
    {
        var message = new MqttApplicationMessageBuilder()
            .WithTopic(topic)
            .WithPayload(payload)
            .WithQualityOfServiceLevel((MqttQualityOfServiceLevel)(int)qos)
            .Build();
        try
        {
            if (_options.Reconnect && !_client.IsConnected)
            {
                await ReconnectAsync(cancellationToken);
            }

            var result = await _client.PublishAsync(message, cancellationToken);
            return (MqttReasonCode)(byte)result.ReasonCode;
        }
        catch (Exception ex) when (!_client.IsConnected
                                   && ex is not MqttCommunicationTimedOutException
                                   && !(ex is OperationCanceledException && cancellationToken.IsCancellationRequested))
        {
            throw new TestHubDisconnectedException($"The connection to {_options.Host}:{_options.Port} is closed: {ex.Message}", ex);
        }
    }

    private async Task ReconnectAsync(CancellationToken cancellationToken)
    {
        await _connecting.WaitAsync(cancellationToken);
        try
        {
            if (!_client.IsConnected)
            {
                await _client.ConnectAsync(_mqttOptions, cancellationToken);
            }
        }
        finally
        {
            _connecting.Release();
        }
    }

    public async ValueTask DisposeAsync()
    {
        try
        {
            if (_client.IsConnected)
            {
                await _client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().Build());
            }
        }
        catch (MqttCommunicationException)
        {
            // Already gone.
        }

        _client.Dispose();
        _connecting.Dispose();
    }
}

using System.Buffers;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using MQTTnet;
using MQTTnet.Protocol;
using Saito.Mqtt.Packets;
using MqttNetProtocolVersion = MQTTnet.Formatter.MqttProtocolVersion;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// External mode on MQTTnet 5's client, with manual acknowledgement
/// (<c>AutoAcknowledge = false</c>, then <c>AcknowledgeAsync</c> once the readings are committed). What MQTTnet does not
/// do and this adds:
/// <list type="bullet">
/// <item>acknowledgements in arrival order (MQTTnet sends each as soon as it is asked);</item>
/// <item>no acknowledgement of a message from a connection that has since dropped (MQTTnet would send its packet id on
/// the new connection, where it may name another message);</item>
/// <item>reconnects with backoff and a subscription again after each (MQTTnet 5 has no managed client).</item>
/// </list>
/// </summary>
internal sealed partial class MqttNetExternalBrokerClient : IAsyncDisposable
{
    private static readonly TimeSpan InitialReconnectDelay = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan MaxReconnectDelay = TimeSpan.FromSeconds(60);

    private readonly IMqttClient _client;
    private readonly MqttClientOptions _options;
    private readonly ILogger _logger;
    private readonly Channel<ExternalBrokerMessage> _messages;

    // Held while acknowledging and while connecting, so an acknowledgement never reaches a newer connection.
    private readonly SemaphoreSlim _gate = new(1, 1);
    private readonly SemaphoreSlim _connectionLost = new(0);
    private readonly CancellationTokenSource _stop = new();
    private Connection _connection = new(0);
    private Task _lastAcknowledgement = Task.CompletedTask;
    private long _lastAcknowledgementGeneration;
    private (string Filter, MqttQualityOfServiceLevel QoS)? _subscription;
    private Task? _reconnecting;
    private volatile bool _stopping;

    public MqttNetExternalBrokerClient(ExternalBrokerOptions options, string clientId, ILogger<MqttNetExternalBrokerClient> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        _logger = logger;
        bool v5 = options.ParsedProtocolVersion == MqttProtocolVersion.V500;
        var builder = new MqttClientOptionsBuilder()
            .WithTcpServer(options.Host, options.Port)
            .WithClientId(clientId)
            .WithProtocolVersion(v5 ? MqttNetProtocolVersion.V500 : MqttNetProtocolVersion.V311)
            .WithCleanStart(false)
            .WithKeepAlivePeriod(TimeSpan.FromSeconds(options.KeepAliveSeconds))
            .WithTimeout(TimeSpan.FromSeconds(10));
        if (v5)
        {
            builder.WithSessionExpiryInterval((uint)options.SessionExpirySeconds).WithReceiveMaximum((ushort)options.ReceiveMaximum);
        }

        if (options.HasCredentials)
        {
            builder.WithCredentials(options.UserName, options.Password ?? string.Empty);
        }

        if (options.Tls)
        {
            builder.WithTlsOptions(tls =>
            {
                tls.UseTls();
                if (options.CaCertificatePath is { Length: > 0 } ca)
                {
                    tls.WithTrustChain([X509CertificateLoader.LoadCertificateFromFile(ca)]);
                }
            });
        }

        _options = builder.Build();

        // 3.1.1 has no Receive Maximum: the broker's own limit (Mosquitto's max_inflight_messages) holds it back, and
        // this bound stops MQTTnet's reader while the consumer catches up.
        _messages = Channel.CreateBounded<ExternalBrokerMessage>(new BoundedChannelOptions(options.ReceiveMaximum) { SingleReader = true, SingleWriter = true });
        _client = new MqttClientFactory().CreateMqttClient();
        _client.ApplicationMessageReceivedAsync += OnMessageAsync;
        _client.DisconnectedAsync += OnDisconnectedAsync;
    }

    public bool IsConnected => _client.IsConnected;

    /// <summary>Inbound messages, in arrival order, across reconnects.</summary>
    public IAsyncEnumerable<ExternalBrokerMessage> ReadMessagesAsync(CancellationToken cancellationToken) => _messages.Reader.ReadAllAsync(cancellationToken);

    /// <summary>Connects once; returns whether the broker kept the session. Reconnects after that are the client's.</summary>
    public async Task<bool> ConnectAsync(CancellationToken cancellationToken)
    {
        var result = await ConnectOnceAsync(cancellationToken);
        _reconnecting ??= ReconnectLoopAsync(_stop.Token);
        return result;
    }

    /// <summary>Subscribes (and subscribes again after every reconnect); returns the broker's reason code and reason string.</summary>
    public async Task<(byte Code, string? Reason)> SubscribeAsync(string topicFilter, int qos, CancellationToken cancellationToken)
    {
        _subscription = (topicFilter, qos == 2 ? MqttQualityOfServiceLevel.ExactlyOnce : MqttQualityOfServiceLevel.AtLeastOnce);
        return await SubscribeOnceAsync(cancellationToken);
    }

    public async Task DisconnectAsync(CancellationToken cancellationToken)
    {
        _stopping = true;
        if (_client.IsConnected)
        {
            await _client.DisconnectAsync(new MqttClientDisconnectOptionsBuilder().Build(), cancellationToken);
        }
    }

    public async ValueTask DisposeAsync()
    {
        _stopping = true;
        await _stop.CancelAsync();
        if (_reconnecting is { } reconnecting)
        {
            await reconnecting;
        }

        _client.Dispose();
        await _connection.Lost.CancelAsync();
        _messages.Writer.TryComplete();
        _stop.Dispose();
    }

    private async Task<bool> ConnectOnceAsync(CancellationToken cancellationToken)
    {
        await _gate.WaitAsync(cancellationToken);
        try
        {
            // Before CONNECT: a kept session's messages arrive right after CONNACK and belong to this connection.
            var connection = new Connection(_connection.Generation + 1);
            _connection = connection;
            try
            {
                var result = await _client.ConnectAsync(_options, cancellationToken);
                if (result.ResultCode != MqttClientConnectResultCode.Success)
                {
                    throw new InvalidOperationException($"The broker refused the connection: {result.ResultCode} {result.ReasonString}");
                }

                return result.IsSessionPresent;
            }
            catch
            {
                await connection.Lost.CancelAsync();
                throw;
            }
        }
        finally
        {
            _gate.Release();
        }
    }

    private async Task<(byte Code, string? Reason)> SubscribeOnceAsync(CancellationToken cancellationToken)
    {
        var (filter, qos) = _subscription!.Value;
        var result = await _client.SubscribeAsync(
            new MqttClientSubscribeOptionsBuilder().WithTopicFilter(f => f.WithTopic(filter).WithQualityOfServiceLevel(qos)).Build(), cancellationToken);
        var item = result.Items.FirstOrDefault();
        return (item is null ? (byte)MqttReasonCode.UnspecifiedError : (byte)item.ResultCode, result.ReasonString);
    }

    private async Task OnDisconnectedAsync(MqttClientDisconnectedEventArgs e)
    {
        if (e.ClientWasConnected)
        {
            // Messages of this connection can no longer be acknowledged: the broker sends them again.
            await _connection.Lost.CancelAsync();
            if (!_stopping)
            {
                _connectionLost.Release();
            }
        }
    }

    private async Task OnMessageAsync(MqttApplicationMessageReceivedEventArgs e)
    {
        e.AutoAcknowledge = false;
        var connection = _connection;
        if (_lastAcknowledgementGeneration != connection.Generation)
        {
            _lastAcknowledgementGeneration = connection.Generation;
            _lastAcknowledgement = Task.CompletedTask;
        }

        var application = e.ApplicationMessage;
        var message = new Message(this, e, connection, _lastAcknowledgement, application.Topic, application.Payload.ToArray(), application.ContentType);
        _lastAcknowledgement = message.Acknowledged;
        try
        {
            await _messages.Writer.WriteAsync(message, _stop.Token);
        }
        catch (OperationCanceledException)
        {
            // Stopping: not acknowledged, so the broker sends it again.
        }
    }

    private async Task ReconnectLoopAsync(CancellationToken stoppingToken)
    {
        try
        {
            while (true)
            {
                await _connectionLost.WaitAsync(stoppingToken);
                var delay = InitialReconnectDelay;
                for (int attempt = 1; !_client.IsConnected; attempt++)
                {
                    await Task.Delay(Jitter(delay), stoppingToken);
                    try
                    {
                        bool sessionPresent = await ConnectOnceAsync(stoppingToken);
                        var (code, reason) = await SubscribeOnceAsync(stoppingToken);
                        LogReconnected(attempt, sessionPresent, code);
                        if (code >= 0x80)
                        {
                            LogResubscribeRefused(code, reason);
                        }
                    }
                    catch (Exception ex) when (ex is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
                    {
                        LogReconnectFailed(attempt, ex.Message);
                        delay = TimeSpan.FromTicks(Math.Min(MaxReconnectDelay.Ticks, delay.Ticks * 2));
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    private static TimeSpan Jitter(TimeSpan delay) => delay * (0.8 + (0.4 * Random.Shared.NextDouble()));

    [LoggerMessage(2311, LogLevel.Information, "MQTTnet client: reconnected to the external broker at attempt {Attempt} (session present: {SessionPresent}); subscribed again ({Code})")]
    private partial void LogReconnected(int attempt, bool sessionPresent, byte code);

    [LoggerMessage(2312, LogLevel.Warning, "MQTTnet client: reconnecting to the external broker failed (attempt {Attempt}): {Error}")]
    private partial void LogReconnectFailed(int attempt, string error);

    [LoggerMessage(2313, LogLevel.Error, "MQTTnet client: the external broker refused the subscription after a reconnect: 0x{Code:X2} {Reason}")]
    private partial void LogResubscribeRefused(byte code, string? reason);

    /// <summary>One connection: its messages are acknowledged on it or not at all.</summary>
    private sealed class Connection(long generation)
    {
        public long Generation { get; } = generation;

        public CancellationTokenSource Lost { get; } = new();
    }

    private sealed class Message(MqttNetExternalBrokerClient owner, MqttApplicationMessageReceivedEventArgs e, Connection connection, Task previous,
        string topic, ReadOnlyMemory<byte> payload, string? contentType) : ExternalBrokerMessage(topic, payload, contentType)
    {
        private readonly TaskCompletionSource _acknowledged = new(TaskCreationOptions.RunContinuationsAsynchronously);

        /// <summary>Completes when this message is acknowledged, or can no longer be: the next one may go.</summary>
        public Task Acknowledged => _acknowledged.Task;

        public override bool IsConnectionOpen => !connection.Lost.IsCancellationRequested && owner._client.IsConnected;

        public override async ValueTask<bool> AcknowledgeAsync()
        {
            try
            {
                await previous.WaitAsync(connection.Lost.Token);
                await owner._gate.WaitAsync(connection.Lost.Token);
                try
                {
                    if (!IsConnectionOpen)
                    {
                        return false;
                    }

                    await e.AcknowledgeAsync(connection.Lost.Token);
                    return true;
                }
                finally
                {
                    owner._gate.Release();
                }
            }
            catch (Exception ex) when (ex is OperationCanceledException || connection.Lost.IsCancellationRequested || !owner._client.IsConnected)
            {
                return false;
            }
            finally
            {
                _acknowledged.TrySetResult();
            }
        }
    }
}

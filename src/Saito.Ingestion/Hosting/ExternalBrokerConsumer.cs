using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Packets;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// <c>Mqtt:Mode=external</c>: Saito subscribes to an external broker (through a shared subscription, so that
/// several instances split one stream) with a persistent session, and acknowledges each message only once its
/// readings are committed. Messages are ingested concurrently (up to <see cref="ExternalBrokerOptions.ReceiveMaximum"/>)
/// and acknowledged in arrival order, as MQTT requires. If Saito stops or the connection drops before a commit,
/// the message is not acknowledged and the broker sends it again (readings are stored once).
/// <para>
/// A message Saito fails to store for any reason (the database refusing even the dead letter, a bug, a cancellation)
/// is never acknowledged, neither as a success nor as a refusal: a 3.1.1 acknowledgement has no reason code, so a
/// refusal would go out as success, and a 5.0 broker drops a refused message. It is tried again with backoff while
/// its connection lasts (its acknowledgement, and those after it, wait: the broker stops sending once
/// <see cref="ExternalBrokerOptions.ReceiveMaximum"/> are waiting), and /health says so. If the connection drops or
/// Saito stops first, the broker sends it again.
/// </para>
/// </summary>
internal sealed partial class ExternalBrokerConsumer : BackgroundService
{
    private readonly MessageIngestor _ingestor;
    private readonly StorageStartup _storage;
    private readonly StorageHealth _health;
    private readonly ExternalBrokerOptions _options;
    private readonly IngestionOptions _ingestion;
    private readonly TimeProvider _time;
    private readonly ILoggerFactory _loggerFactory;
    private readonly ILogger<ExternalBrokerConsumer> _logger;
    private readonly object _inflightLock = new();
    private readonly HashSet<Task> _inflight = [];
    private MqttNetExternalBrokerClient? _client;

    private static readonly TimeSpan FirstRetryDelay = TimeSpan.FromMilliseconds(250);
    private static readonly TimeSpan MaxRetryDelay = TimeSpan.FromSeconds(10);
    private static readonly TimeSpan DisconnectTimeout = TimeSpan.FromSeconds(3);

    public ExternalBrokerConsumer(MessageIngestor ingestor, StorageStartup storage, StorageHealth health, IOptions<ExternalBrokerOptions> options,
        IOptions<IngestionOptions> ingestion, TimeProvider timeProvider, ILoggerFactory loggerFactory)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(ingestion);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        _ingestor = ingestor;
        _storage = storage;
        _health = health;
        _options = options.Value;
        _ingestion = ingestion.Value;
        _time = timeProvider;
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger<ExternalBrokerConsumer>();
    }

    /// <summary>The topic filter Saito subscribes to.</summary>
    public string TopicFilter => string.IsNullOrEmpty(_options.SharedGroup)
        ? $"{_ingestion.TopicPrefix}/+/+/+"
        : $"$share/{_options.SharedGroup}/{_ingestion.TopicPrefix}/+/+/+";

    public bool IsConnected => _client?.IsConnected ?? false;

    /// <summary>Set once the broker granted the subscription.</summary>
    public bool IsSubscribed { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await _storage.Ready.WaitAsync(stoppingToken);
        string clientId = string.IsNullOrEmpty(_options.ClientId) ? $"saito-{Environment.MachineName}" : _options.ClientId;
        if (_options.SendsCredentialsInClear)
        {
            LogCredentialsInClear(_options.Host, _options.Port);
        }

        _client = new MqttNetExternalBrokerClient(_options, clientId, _loggerFactory.CreateLogger<MqttNetExternalBrokerClient>());
        await ConnectWithBackoffAsync(_client, stoppingToken);
        var (granted, reason) = await _client.SubscribeAsync(TopicFilter, _options.QoS, stoppingToken);
        if (granted >= 0x80)
        {
            throw new InvalidOperationException(
                $"The external broker {_options.Host}:{_options.Port} refused the subscription to {TopicFilter}: {(MqttReasonCode)granted} (0x{granted:X2}) {reason}");
        }

        LogSubscribed(TopicFilter, _options.Host, _options.Port, clientId, ((MqttReasonCode)granted).ToString());
        IsSubscribed = true;

        try
        {
            await foreach (var message in _client.ReadMessagesAsync(stoppingToken))
            {
                var handling = HandleAsync(message, stoppingToken);
                lock (_inflightLock)
                {
                    if (!handling.IsCompleted)
                    {
                        _inflight.Add(handling);
                    }
                }

                _ = handling.ContinueWith(
                    (done, state) =>
                    {
                        var self = (ExternalBrokerConsumer)state!;
                        lock (self._inflightLock)
                        {
                            self._inflight.Remove(done);
                        }
                    },
                    this, CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        await base.StopAsync(cancellationToken);
        Task[] inflight;
        lock (_inflightLock)
        {
            inflight = [.. _inflight];
        }

        // Let what is being committed finish and be acknowledged, then leave with the session kept.
        try
        {
            await Task.WhenAll(inflight).WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException)
        {
            LogUnacknowledged(inflight.Count(t => !t.IsCompleted));
        }

        if (_client is { } client)
        {
            // Its own few seconds: the shutdown token may be spent already (a held message waited it out), and a
            // cancelled disconnect must not make the host's shutdown throw.
            using var disconnect = new CancellationTokenSource(DisconnectTimeout);
            try
            {
                await client.DisconnectAsync(disconnect.Token);
            }
            catch (Exception ex)
            {
                LogDisconnectFailed(ex);
            }

            await client.DisposeAsync();
        }
    }

    private async Task HandleAsync(ExternalBrokerMessage message, CancellationToken stoppingToken)
    {
        var inbound = new InboundMessage(message.Topic, message.Payload, null, message.ContentType, _time.GetUtcNow().UtcDateTime);
        var delay = FirstRetryDelay;
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                // Not cancelled by stoppingToken: what is queued is committed while the writers drain.
                await _ingestor.IngestAsync(inbound, CancellationToken.None);
            }
            catch (IngestionStoppedException)
            {
                return; // Not acknowledged: the broker keeps it for our session and sends it again.
            }
            catch (Exception ex)
            {
                // Nothing in ingestion throws for bad input: this is the database refusing even the dead letter, or a
                // bug. Acknowledging would lose the message (see the class remarks): hold it and try again.
                if (stoppingToken.IsCancellationRequested || !message.IsConnectionOpen)
                {
                    LogGaveUp(ex, message.Topic, attempt);
                    return;
                }

                _health.MarkFailing(_time.GetUtcNow(), $"a message on {message.Topic} could not be stored ({ex.GetType().Name}: {ex.Message}); not acknowledged, trying again");
                if (attempt <= 3 || attempt % 20 == 0)
                {
                    LogFailed(ex, message.Topic, attempt, delay.TotalSeconds);
                }

                try
                {
                    await Task.Delay(delay, _time, stoppingToken);
                }
                catch (OperationCanceledException)
                {
                    return;
                }

                delay = TimeSpan.FromTicks(Math.Min(MaxRetryDelay.Ticks, delay.Ticks * 2));
                continue;
            }

            if (attempt > 1)
            {
                LogStoredAfterRetries(message.Topic, attempt);
            }

            await message.AcknowledgeAsync();
            return;
        }
    }

    private async Task ConnectWithBackoffAsync(MqttNetExternalBrokerClient client, CancellationToken stoppingToken)
    {
        var delay = TimeSpan.FromSeconds(1);
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                bool sessionPresent = await client.ConnectAsync(stoppingToken);
                LogConnected(_options.Host, _options.Port, sessionPresent);
                return;
            }
            catch (Exception ex) when (ex is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
            {
                LogConnectFailed(_options.Host, _options.Port, attempt, delay.TotalSeconds, ex.Message);
                await Task.Delay(delay, _time, stoppingToken);
                delay = TimeSpan.FromSeconds(Math.Min(30, delay.TotalSeconds * 2));
            }
        }
    }

    [LoggerMessage(2301, LogLevel.Information, "Connected to the external broker {Host}:{Port} (session present: {SessionPresent})")]
    private partial void LogConnected(string host, int port, bool sessionPresent);

    [LoggerMessage(2302, LogLevel.Warning, "Cannot reach the external broker {Host}:{Port} (attempt {Attempt}); trying again in {DelaySeconds} s: {Error}")]
    private partial void LogConnectFailed(string host, int port, int attempt, double delaySeconds, string error);

    [LoggerMessage(2303, LogLevel.Information, "Subscribed to {Filter} on {Host}:{Port} as {ClientId} ({Result})")]
    private partial void LogSubscribed(string filter, string host, int port, string clientId, string result);

    // 2304 ("Could not store a message on {Topic}; refused") is retired: such a message is no longer refused (2308).

    [LoggerMessage(2305, LogLevel.Warning, "Stopped with {Count} message(s) not yet committed; the broker will send them again")]
    private partial void LogUnacknowledged(int count);

    [LoggerMessage(2306, LogLevel.Warning, "Disconnecting from the external broker failed")]
    private partial void LogDisconnectFailed(Exception exception);

    [LoggerMessage(2307, LogLevel.Warning, "Sending the user name and password to {Host}:{Port} without TLS (Mqtt:External:AllowCredentialsWithoutTls=true): anyone on the network path can read them")]
    private partial void LogCredentialsInClear(string host, int port);

    [LoggerMessage(2308, LogLevel.Error, "Could not store a message on {Topic} (attempt {Attempt}); not acknowledged, trying again in {DelaySeconds} s")]
    private partial void LogFailed(Exception exception, string topic, int attempt, double delaySeconds);

    [LoggerMessage(2309, LogLevel.Warning, "Stopped trying to store a message on {Topic} after {Attempts} attempt(s) (Saito is stopping or the connection closed); not acknowledged, the broker will send it again")]
    private partial void LogGaveUp(Exception exception, string topic, int attempts);

    [LoggerMessage(2310, LogLevel.Information, "Stored a message on {Topic} at attempt {Attempt}; acknowledged")]
    private partial void LogStoredAfterRetries(string topic, int attempt);
}

using System.Diagnostics.Metrics;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The broker's instruments (meter <c>Saito.Mqtt</c>), for OpenTelemetry or <c>dotnet-counters</c>.
/// Every message the broker does not deliver is counted in <c>saito.mqtt.messages.dropped</c> with its cause.
/// Names and units follow OpenTelemetry's conventions; docs/metrics.md lists every instrument.
/// </summary>
public sealed class MqttBrokerMetrics : IDisposable
{
    public const string MeterName = "Saito.Mqtt";

    private readonly Meter _meter;
    private readonly UpDownCounter<long> _connections;
    private readonly Counter<long> _dropped;
    private readonly Counter<long> _protocolErrors;
    private readonly Counter<long> _connectRefused;
    private readonly Counter<long> _publishRefused;
    private readonly Counter<long> _limitsHit;
    private readonly Counter<long> _denied;
    private readonly Histogram<double> _publishToAck;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, long> _limitHitTotals = new(StringComparer.Ordinal);
    private long _deniedTotal;
    private long _droppedTotal;
    private long _messagesReceivedTotal;
    private long _messagesSentTotal;

    // Touched for every packet: plain sums read when metrics are collected (observable counters), not a measurement
    // recorded per packet through every listener (a few per cent of Saito's CPU at one reading per message).
    private long _packetsReceivedTotal;
    private long _packetsSentTotal;
    private long _bytesReceivedTotal;
    private long _bytesSentTotal;

    /// <summary>Bucket boundaries for durations in seconds: 0.5 ms to 30 s.</summary>
    private static readonly IReadOnlyList<double> s_secondsBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

    private static readonly KeyValuePair<string, object?> s_receive = new("direction", "receive");
    private static readonly KeyValuePair<string, object?> s_transmit = new("direction", "transmit");

    public MqttBrokerMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);
        _meter = meterFactory.Create(MeterName);
        // An up-down counter, which Prometheus shows as a gauge: the open connections now.
        _connections = _meter.CreateUpDownCounter<long>("saito.mqtt.connections", "{connection}", "Open network connections");
        _meter.CreateObservableCounter("saito.mqtt.packets.received", () => Interlocked.Read(ref _packetsReceivedTotal), "{packet}", "MQTT packets read");
        _meter.CreateObservableCounter("saito.mqtt.packets.sent", () => Interlocked.Read(ref _packetsSentTotal), "{packet}", "MQTT packets written");
        _meter.CreateObservableCounter("saito.mqtt.io", () => (IEnumerable<Measurement<long>>)
            [new(Interlocked.Read(ref _bytesReceivedTotal), s_receive), new(Interlocked.Read(ref _bytesSentTotal), s_transmit)],
            "By", "Bytes of MQTT packets read (direction receive) and written (transmit)");
        _meter.CreateObservableCounter("saito.mqtt.messages.received", () => Interlocked.Read(ref _messagesReceivedTotal), "{message}", "PUBLISH routed (clients, wills, in-process)");
        _meter.CreateObservableCounter("saito.mqtt.messages.sent", () => Interlocked.Read(ref _messagesSentTotal), "{message}", "PUBLISH written to subscribers");
        _dropped = _meter.CreateCounter<long>("saito.mqtt.messages.dropped", "{message}", "Messages not delivered, by cause");
        _protocolErrors = _meter.CreateCounter<long>("saito.mqtt.protocol_errors", "{connection}", "Connections closed for breaking the protocol, by reason code");
        _connectRefused = _meter.CreateCounter<long>("saito.mqtt.connect.refused", "{connection}", "CONNECTs refused");
        _publishRefused = _meter.CreateCounter<long>("saito.mqtt.publish.refused", "{message}", "Publishes the hook did not accept");
        _limitsHit = _meter.CreateCounter<long>("saito.mqtt.limits.hit", "{event}", "Times a configured limit held a client back or refused it, by limit");
        _denied = _meter.CreateCounter<long>("saito.mqtt.denied", "{request}", "Publishes and subscriptions the topic ACL refused, by action");
        _publishToAck = _meter.CreateHistogram("saito.mqtt.publish.ack.duration", "s",
            "From a QoS 1 or 2 PUBLISH read to its PUBACK or PUBREC sent, for publishes the hook accepted (with ingestion: once their readings are committed)",
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = s_secondsBuckets });
    }

    /// <summary>
    /// Registers <c>saito.mqtt.subscriber.dropped</c>: messages dropped for each session whose queue overflowed, by
    /// <c>client_id</c>. Only sessions that dropped something appear, so the series are the slow subscribers, not every hub.
    /// </summary>
    internal void ObserveSubscriberDrops(Func<List<(string ClientId, long Dropped)>> drops) =>
        _meter.CreateObservableCounter("saito.mqtt.subscriber.dropped",
            () => drops().Select(d => new Measurement<long>(d.Dropped, new KeyValuePair<string, object?>("client_id", d.ClientId))),
            "{message}", "Messages dropped for one subscriber because its queue was full (Mqtt:MaxQueuedMessages, Mqtt:MaxQueuedBytesPerSession), by client id");

    /// <summary>Publishes and subscriptions refused by the topic ACL since start.</summary>
    internal long DeniedTotal => Interlocked.Read(ref _deniedTotal);

    /// <summary>Times the limit named <paramref name="limit"/> (its option name, e.g. <c>MaxTopicLevels</c>) was hit since start.</summary>
    internal long LimitHits(string limit) => _limitHitTotals.TryGetValue(limit, out long count) ? count : 0;

    internal void LimitHit(string limit)
    {
        _limitHitTotals.AddOrUpdate(limit, 1, static (_, count) => count + 1);
        _limitsHit.Add(1, new KeyValuePair<string, object?>("limit", limit));
    }

    internal void Denied(string action)
    {
        Interlocked.Increment(ref _deniedTotal);
        _denied.Add(1, new KeyValuePair<string, object?>("action", action));
    }

    public long DroppedTotal => Interlocked.Read(ref _droppedTotal);
    public long MessagesReceivedTotal => Interlocked.Read(ref _messagesReceivedTotal);
    public long MessagesSentTotal => Interlocked.Read(ref _messagesSentTotal);

    internal void ConnectionOpened() => _connections.Add(1);
    internal void ConnectionClosed() => _connections.Add(-1);

    internal void PacketReceived(int size)
    {
        Interlocked.Increment(ref _packetsReceivedTotal);
        Interlocked.Add(ref _bytesReceivedTotal, size);
    }

    internal void PacketSent(int size)
    {
        Interlocked.Increment(ref _packetsSentTotal);
        Interlocked.Add(ref _bytesSentTotal, size);
    }

    internal void MessageReceived() => Interlocked.Increment(ref _messagesReceivedTotal);

    internal void MessageSent(int size)
    {
        Interlocked.Increment(ref _messagesSentTotal);
        PacketSent(size);
    }

    internal void Dropped(string reason)
    {
        Interlocked.Increment(ref _droppedTotal);
        _dropped.Add(1, new KeyValuePair<string, object?>("cause", reason));
    }

    /// <summary>A publish the hook accepted is acknowledged: <paramref name="readAt"/> is its <see cref="System.Diagnostics.Stopwatch"/> timestamp when read.</summary>
    internal void Acknowledged(long readAt) => _publishToAck.Record(System.Diagnostics.Stopwatch.GetElapsedTime(readAt).TotalSeconds);

    internal void ProtocolError(MqttReasonCode code) => _protocolErrors.Add(1, new KeyValuePair<string, object?>("reason", code.ToString()));
    internal void ConnectRefused() => _connectRefused.Add(1);
    internal void PublishRefused() => _publishRefused.Add(1);

    public void Dispose() => _meter.Dispose();
}

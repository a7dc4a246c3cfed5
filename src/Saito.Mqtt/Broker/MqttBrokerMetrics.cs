using System.Diagnostics.Metrics;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The broker's instruments (meter <c>Saito.Mqtt</c>), for OpenTelemetry or <c>dotnet-counters</c>.
/// Every message the broker does not deliver is counted in <c>saito.mqtt.messages.dropped</c> with its reason.
/// </summary>
public sealed class MqttBrokerMetrics : IDisposable
{
    public const string MeterName = "Saito.Mqtt";

    private readonly Meter _meter;
    private readonly UpDownCounter<long> _connections;
    private readonly Counter<long> _packetsReceived;
    private readonly Counter<long> _bytesReceived;
    private readonly Counter<long> _packetsSent;
    private readonly Counter<long> _bytesSent;
    private readonly Counter<long> _messagesReceived;
    private readonly Counter<long> _messagesSent;
    private readonly Counter<long> _dropped;
    private readonly Counter<long> _protocolErrors;
    private readonly Counter<long> _connectRefused;
    private readonly Counter<long> _publishRefused;
    private readonly Counter<long> _limitsHit;
    private readonly Counter<long> _denied;
    private readonly System.Collections.Concurrent.ConcurrentDictionary<string, long> _limitHitTotals = new(StringComparer.Ordinal);
    private long _deniedTotal;
    private long _droppedTotal;
    private long _messagesReceivedTotal;
    private long _messagesSentTotal;

    public MqttBrokerMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);
        _meter = meterFactory.Create(MeterName);
        _connections = _meter.CreateUpDownCounter<long>("saito.mqtt.connections", description: "Open network connections");
        _packetsReceived = _meter.CreateCounter<long>("saito.mqtt.packets.received");
        _bytesReceived = _meter.CreateCounter<long>("saito.mqtt.bytes.received", "By");
        _packetsSent = _meter.CreateCounter<long>("saito.mqtt.packets.sent");
        _bytesSent = _meter.CreateCounter<long>("saito.mqtt.bytes.sent", "By");
        _messagesReceived = _meter.CreateCounter<long>("saito.mqtt.messages.received", description: "PUBLISH routed (clients, wills, in-process)");
        _messagesSent = _meter.CreateCounter<long>("saito.mqtt.messages.sent", description: "PUBLISH written to subscribers");
        _dropped = _meter.CreateCounter<long>("saito.mqtt.messages.dropped", description: "Messages not delivered, by reason");
        _protocolErrors = _meter.CreateCounter<long>("saito.mqtt.protocol_errors", description: "Connections closed for breaking the protocol");
        _connectRefused = _meter.CreateCounter<long>("saito.mqtt.connect.refused");
        _publishRefused = _meter.CreateCounter<long>("saito.mqtt.publish.refused", description: "Publishes the hook did not accept");
        _limitsHit = _meter.CreateCounter<long>("saito.mqtt.limits.hit", description: "Times a configured limit held a client back or refused it, by limit");
        _denied = _meter.CreateCounter<long>("saito.mqtt.denied", description: "Publishes and subscriptions the topic ACL refused, by action");
    }

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
        _packetsReceived.Add(1);
        _bytesReceived.Add(size);
    }

    internal void PacketSent(int size)
    {
        _packetsSent.Add(1);
        _bytesSent.Add(size);
    }

    internal void MessageReceived()
    {
        Interlocked.Increment(ref _messagesReceivedTotal);
        _messagesReceived.Add(1);
    }

    internal void MessageSent(int size)
    {
        Interlocked.Increment(ref _messagesSentTotal);
        _messagesSent.Add(1);
        PacketSent(size);
    }

    internal void Dropped(string reason)
    {
        Interlocked.Increment(ref _droppedTotal);
        _dropped.Add(1, new KeyValuePair<string, object?>("reason", reason));
    }

    internal void ProtocolError(MqttReasonCode code) => _protocolErrors.Add(1, new KeyValuePair<string, object?>("reason", code.ToString()));
    internal void ConnectRefused() => _connectRefused.Add(1);
    internal void PublishRefused() => _publishRefused.Add(1);

    public void Dispose() => _meter.Dispose();
}

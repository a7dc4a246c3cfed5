using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>A message as the broker holds it: immutable once made, shared by every subscriber it goes to.</summary>
internal sealed class MqttMessage
{
    public required string Topic { get; init; }
    public required ReadOnlyMemory<byte> Payload { get; init; }
    public MqttQoS QoS { get; init; }
    public bool Retain { get; init; }

    /// <summary>Properties to forward (never topic alias or subscription identifiers; those are per connection).</summary>
    public MqttProperties? Properties { get; init; }

    /// <summary>Environment.TickCount64 at which the message expires, or null.</summary>
    public long? ExpiresAt { get; init; }

    /// <summary>The session that published it (for no-local), or null for wills and retained replays.</summary>
    public MqttSession? Sender { get; init; }

    public bool IsExpired(long now) => ExpiresAt is { } at && now >= at;

    public static MqttMessage Create(string topic, ReadOnlyMemory<byte> payload, MqttQoS qos, bool retain, MqttProperties? properties,
        MqttSession? sender, long now)
    {
        long? expiresAt = null;
        if (properties is not null)
        {
            if (properties.TopicAlias is not null || properties.SubscriptionIdentifiers is not null)
            {
                properties = properties.Clone();
                properties.TopicAlias = null;
                properties.SubscriptionIdentifiers = null;
            }

            if (properties.MessageExpiryInterval is { } seconds)
            {
                expiresAt = now + (seconds * 1000L);
            }

            if (properties.IsEmpty)
            {
                properties = null;
            }
        }

        return new MqttMessage
        {
            Topic = topic,
            Payload = payload,
            QoS = qos,
            Retain = retain,
            Properties = properties,
            ExpiresAt = expiresAt,
            Sender = sender,
        };
    }
}

/// <summary>One delivery of a message to one session: the granted QoS, the retain flag it carries, its subscription ids.</summary>
internal readonly record struct OutboundMessage(MqttMessage Message, MqttQoS QoS, bool Retain, uint[]? SubscriptionIds);

internal sealed class InflightMessage
{
    public required OutboundMessage Outbound { get; init; }
    public ushort PacketId { get; init; }

    /// <summary>QoS 2: PUBREC came, PUBREL sent, waiting for PUBCOMP.</summary>
    public bool Released { get; set; }
}

/// <summary>A subscription as the session records it (the tree holds the same options for matching).</summary>
internal sealed record SessionSubscription(MqttSubscription Options, uint SubscriptionId, string? ShareGroup, string Filter);

/// <summary>
/// An MQTT session: outlives connections when the client asks for it. All mutable state is guarded by
/// <see cref="Sync"/>; the queue and the inflight window are bounded by the broker's options.
/// </summary>
internal sealed class MqttSession
{
    private ushort _lastPacketId;

    public MqttSession(string clientId, string owner = "")
    {
        ClientId = clientId;
        Owner = owner;
    }

    public string ClientId { get; }

    /// <summary>
    /// The name of the identity that made the session: only a connection of that identity may take it over
    /// (<see cref="MqttSessionStore.Attach"/>), so a client id does not let another identity read its subscriptions.
    /// </summary>
    public string Owner { get; }

    public object Sync { get; } = new();

    // The collections below are made on first use: a hub that only publishes never subscribes, never has a queue or
    // an outbound window, and 5 empty collections were about 450 B of every idle connection (issue 15).
    private Dictionary<string, SessionSubscription>? _subscriptions;
    private Queue<OutboundMessage>? _queue;
    private OrderedDictionary<ushort, InflightMessage>? _inflight;
    private HashSet<ushort>? _inboundQoS2;
    private Dictionary<ushort, PendingAck>? _inboundQoS2Pending;

    /// <summary>Topic filter as the client sent it (with any $share prefix) -> subscription.</summary>
    public Dictionary<string, SessionSubscription> Subscriptions => _subscriptions ??= new(StringComparer.Ordinal);

    /// <summary>Made on first use. Private: every change goes through <see cref="EnqueueQueued"/> and <see cref="DequeueQueued"/>, which keep <see cref="QueuedBytes"/> and the peak.</summary>
    private Queue<OutboundMessage> Queue => _queue ??= new();

    /// <summary>Outbound QoS 1/2 messages sent and not yet completed, in the order they were first sent.</summary>
    public OrderedDictionary<ushort, InflightMessage> Inflight => _inflight ??= new();

    /// <summary>Inbound QoS 2 packet ids whose PUBLISH arrived and whose PUBREL has not (method A: the message was routed once).</summary>
    public HashSet<ushort> InboundQoS2 => _inboundQoS2 ??= [];

    /// <summary>
    /// Inbound QoS 2 publishes whose hook verdict (the commit) is still pending, by packet id: a DUP that arrives on a
    /// resumed session meanwhile gets its PUBREC only when that verdict is in, never before the data is safe.
    /// </summary>
    public Dictionary<ushort, PendingAck> InboundQoS2Pending => _inboundQoS2Pending ??= [];

    /// <summary>
    /// A queue that grew past this many messages is let go once it is empty, so a subscriber that fell behind for a
    /// moment (a server's first seconds, a burst) does not keep its largest array for the rest of its connection. One
    /// at or under it is kept: a subscriber that keeps up drains to empty between messages, and would otherwise make a
    /// new queue every time.
    /// </summary>
    public const int KeptQueueMessages = 1024;

    private int _queuePeak;

    /// <summary>Whether the session holds a queue now (made on first use, let go after a backlog drains).</summary>
    internal bool HoldsQueue => _queue is not null;

    /// <summary>Queues one message and counts its bytes. Call under <see cref="Sync"/>.</summary>
    public void EnqueueQueued(OutboundMessage outbound)
    {
        var queue = Queue;
        queue.Enqueue(outbound);
        QueuedBytes += QueuedSize(outbound.Message);
        if (queue.Count > _queuePeak)
        {
            _queuePeak = queue.Count;
        }
    }

    /// <summary>
    /// Takes the next queued message and uncounts its bytes; lets the queue go when that empties one that had grown
    /// past <see cref="KeptQueueMessages"/>. Call under <see cref="Sync"/> after <see cref="TryPeekQueued"/>.
    /// </summary>
    public OutboundMessage DequeueQueued()
    {
        var queue = _queue!;
        var next = queue.Dequeue();
        QueuedBytes -= QueuedSize(next.Message);
        if (queue.Count == 0 && _queuePeak > KeptQueueMessages)
        {
            _queue = null;
            _queuePeak = 0;
        }

        return next;
    }

    /// <summary>Messages waiting in <see cref="Queue"/>, without making it. Call under <see cref="Sync"/>.</summary>
    public int QueuedCount => _queue?.Count ?? 0;

    /// <summary>Outbound messages in flight, without making the window. Call under <see cref="Sync"/>.</summary>
    public int InflightCount => _inflight?.Count ?? 0;

    /// <summary>The next queued message, if any, without making the queue. Call under <see cref="Sync"/>.</summary>
    public bool TryPeekQueued(out OutboundMessage next)
    {
        if (_queue is null)
        {
            next = default;
            return false;
        }

        return _queue.TryPeek(out next);
    }

    /// <summary>The session's subscriptions, without making the dictionary. Call under <see cref="Sync"/>.</summary>
    public IEnumerable<SessionSubscription> SubscriptionList => _subscriptions?.Values ?? Enumerable.Empty<SessionSubscription>();

    /// <summary>Forgets subscriptions, queue, window and QoS 2 state (the session ends). Call under <see cref="Sync"/>.</summary>
    public void ClearState()
    {
        _subscriptions = null;
        _queue = null;
        _queuePeak = 0;
        _inflight = null;
        _inboundQoS2 = null;
        _inboundQoS2Pending = null;
        QueuedBytes = 0;
    }

    public MqttServerConnection? Connection { get; set; }

    /// <summary>Seconds the session outlives its connection: 0 ends it with the connection, uint.MaxValue never.</summary>
    public uint ExpiryInterval { get; set; }

    /// <summary>TickCount64 when a disconnected session expires; null while connected or when it never expires.</summary>
    public long? ExpiresAt { get; set; }

    /// <summary>A will waiting for its delay (5.0) while the session is disconnected.</summary>
    public MqttWill? DelayedWill { get; set; }

    public long DelayedWillAt { get; set; }

    /// <summary>
    /// Bookkeeping a queued message costs beside its payload and topic: its slot in <see cref="Queue"/> and its share of
    /// the shared message object. Counted in <see cref="QueuedBytes"/>, so a flood of tiny messages is bounded too.
    /// </summary>
    public const int QueuedOverheadBytes = 64;

    private long _droppedAtLastLog;
    private long _lastDropLogAt;

    /// <summary>Messages for this session dropped because its queue was full, since it began. Guarded by <see cref="Sync"/>.</summary>
    public long Dropped { get; private set; }

    /// <summary>
    /// Bytes in <see cref="Queue"/> as <see cref="QueuedSize"/> counts them (bounded by the broker's
    /// MaxQueuedBytesPerSession). Guarded by <see cref="Sync"/>.
    /// </summary>
    public long QueuedBytes;

    /// <summary>What one queued message counts against MaxQueuedBytesPerSession: payload, topic, properties and bookkeeping.</summary>
    public static long QueuedSize(MqttMessage message) =>
        message.Payload.Length + message.Topic.Length + (message.Properties?.HeldBytes() ?? 0) + QueuedOverheadBytes;

    /// <summary>
    /// Counts one dropped message. Returns how many were dropped since the last report when a report is due (the first
    /// drop, then at most once per <paramref name="intervalMs"/>), otherwise 0. Call under <see cref="Sync"/>.
    /// </summary>
    public long RecordDrop(long now, long intervalMs)
    {
        Dropped++;
        if (Dropped != 1 && now - _lastDropLogAt < intervalMs)
        {
            return 0;
        }

        long since = Dropped - _droppedAtLastLog;
        _droppedAtLastLog = Dropped;
        _lastDropLogAt = now;
        return since;
    }

    /// <summary>Next free packet identifier (1..65535, skipping ids still in flight). Call under <see cref="Sync"/>.</summary>
    public ushort NextPacketId()
    {
        for (int i = 0; i < 65535; i++)
        {
            _lastPacketId = _lastPacketId == ushort.MaxValue ? (ushort)1 : (ushort)(_lastPacketId + 1);
            if (_inflight is null || !_inflight.ContainsKey(_lastPacketId))
            {
                return _lastPacketId;
            }
        }

        throw new InvalidOperationException("No free packet identifier");
    }
}

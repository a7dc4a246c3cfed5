using System.Buffers;
using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>Publishing, subscribing and the session state behind them (packet identifiers, flows in flight).</summary>
public sealed partial class MqttClient
{
    /// <summary>Outbound QoS 1/2 flows at once, at most: leaves identifiers free for SUBSCRIBE/UNSUBSCRIBE.</summary>
    private const int MaxOutboundInFlight = ushort.MaxValue - 1024;

    private const int ResubscribeBatch = 100;

    // Guarded by _sync: the session as the client keeps it across connections.
    private readonly Dictionary<ushort, OutboundFlow> _outbound = [];
    private readonly Dictionary<ushort, PendingRequest> _requests = [];
    private readonly Dictionary<string, MqttSubscription> _subscriptions = new(StringComparer.Ordinal);
    private readonly AsyncLimiter _outboundQuota;
    private long _outboundSequence;
    private ushort _lastPacketId;
    private MqttQoS _serverMaximumQoS = MqttQoS.ExactlyOnce;
    private long _serverMaximumPacketSize = MqttClientOptions.MaxPossiblePacketSize;

    private enum FlowState
    {
        AwaitingPubAck,
        AwaitingPubRec,
        AwaitingPubComp,
    }

    public Task<MqttPublishResult> PublishAsync(string topic, ReadOnlyMemory<byte> payload, MqttQoS qos = MqttQoS.AtMostOnce, bool retain = false,
        CancellationToken cancellationToken = default) =>
        PublishAsync(new MqttApplicationMessage { Topic = topic, Payload = payload, QoS = qos, Retain = retain }, cancellationToken);

    /// <summary>
    /// Publishes and completes when the flow does: QoS 0 once written, QoS 1 at PUBACK, QoS 2 at PUBCOMP (or at a
    /// PUBREC that refuses). A 5.0 refusal comes back as a result with <see cref="MqttPublishResult.IsSuccess"/>
    /// false (<see cref="MqttPublishResult.EnsureSuccess"/> turns it into an exception).
    /// <para>
    /// QoS 1/2 messages belong to the session once this is called: if the connection drops they are resent (DUP
    /// set) after reconnecting, and the task completes then. They are also resent when the broker lost the session,
    /// as new messages (at least once rather than lost). Waits while the broker's Receive Maximum is reached.
    /// Cancelling stops the wait, not the flow.
    /// </para>
    /// </summary>
    public async Task<MqttPublishResult> PublishAsync(MqttApplicationMessage message, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(message);
        ValidateTopicName(message.Topic);
        if (message.QoS is not (MqttQoS.AtMostOnce or MqttQoS.AtLeastOnce or MqttQoS.ExactlyOnce))
        {
            throw new ArgumentOutOfRangeException(nameof(message), message.QoS, "QoS is 0, 1 or 2.");
        }

        var version = _options.ProtocolVersion;
        var packet = new PublishPacket
        {
            Topic = message.Topic,
            Payload = message.Payload,
            QoS = message.QoS,
            Retain = message.Retain,
            Properties = version == MqttProtocolVersion.V500 ? message.Properties : null,
        };
        lock (_sync)
        {
            CheckServerLimits(packet, version);
        }

        if (packet.Properties is not null)
        {
            // A property the codec cannot write (a string over 64 KiB) would fail in the writer loop, close the
            // connection, and fail again at every resend: refuse it here instead, where the caller sees it.
            var headerOnly = new PublishPacket { Topic = packet.Topic, QoS = packet.QoS, PacketId = 1, Properties = packet.Properties };
            MqttPacketEncoder.Encode(new ArrayBufferWriter<byte>(), headerOnly, version);
        }

        if (message.QoS == MqttQoS.AtMostOnce)
        {
            var connection = await WaitForConnectionAsync(cancellationToken);
            var written = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            connection.TryEnqueue(packet, written);
            await written.Task.WaitAsync(cancellationToken);
            return MqttPublishResult.Written;
        }

        lock (_sync)
        {
            ThrowIfNotStarted();
        }

        await _outboundQuota.WaitAsync(cancellationToken);
        OutboundFlow flow;
        lock (_sync)
        {
            if (_state is not (ClientState.Connecting or ClientState.Connected))
            {
                _outboundQuota.Release();
                ThrowIfNotStarted();
            }

            packet.PacketId = AllocatePacketId();
            flow = new OutboundFlow(packet, ++_outboundSequence, message.QoS == MqttQoS.AtLeastOnce ? FlowState.AwaitingPubAck : FlowState.AwaitingPubRec);
            _outbound[packet.PacketId] = flow;

            // Not connected right now: the resend after the next CONNACK sends it.
            if (_current is { } connection && connection.TryEnqueue(packet))
            {
                flow.Sent = true;
            }
        }

        return await flow.Completion.Task.WaitAsync(cancellationToken);
    }

    public Task<MqttSubscribeResult> SubscribeAsync(string topicFilter, MqttQoS qos = MqttQoS.AtLeastOnce, CancellationToken cancellationToken = default) =>
        SubscribeAsync([new MqttSubscription { TopicFilter = topicFilter, QoS = qos }], cancellationToken);

    /// <summary>
    /// Subscribes and returns the broker's code for each filter (granted QoS, or a failure at 0x80 and up).
    /// Shared subscriptions are plain filters: <c>$share/{group}/{filter}</c>. Granted filters are remembered
    /// and subscribed again whenever a reconnect finds the session gone.
    /// </summary>
    public async Task<MqttSubscribeResult> SubscribeAsync(IReadOnlyList<MqttSubscription> subscriptions, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(subscriptions);
        if (subscriptions.Count == 0)
        {
            throw new ArgumentException("SUBSCRIBE needs at least one topic filter.", nameof(subscriptions));
        }

        var copies = new List<MqttSubscription>(subscriptions.Count);
        foreach (var s in subscriptions)
        {
            ArgumentNullException.ThrowIfNull(s, nameof(subscriptions));
            ValidateSubscription(s);
            copies.Add(new MqttSubscription
            {
                TopicFilter = s.TopicFilter,
                QoS = s.QoS,
                NoLocal = s.NoLocal,
                RetainAsPublished = s.RetainAsPublished,
                RetainHandling = s.RetainHandling,
            });
        }

        var connection = await WaitForConnectionAsync(cancellationToken);
        var ack = (SubAckPacket)await SendRequestAsync(connection, id => new SubscribePacket { PacketId = id, Subscriptions = copies }, cancellationToken);
        if (ack.ReasonCodes.Count != copies.Count)
        {
            throw new MqttProtocolException(MqttReasonCode.ProtocolError,
                $"SUBACK has {ack.ReasonCodes.Count} codes for {copies.Count} topic filters");
        }

        lock (_sync)
        {
            for (int i = 0; i < copies.Count; i++)
            {
                if ((byte)ack.ReasonCodes[i] < 0x80)
                {
                    _subscriptions[copies[i].TopicFilter] = copies[i];
                }
            }
        }

        return new MqttSubscribeResult(ack.ReasonCodes, ack.Properties?.ReasonString);
    }

    public Task<MqttUnsubscribeResult> UnsubscribeAsync(string topicFilter, CancellationToken cancellationToken = default) =>
        UnsubscribeAsync([topicFilter], cancellationToken);

    public async Task<MqttUnsubscribeResult> UnsubscribeAsync(IReadOnlyList<string> topicFilters, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(topicFilters);
        if (topicFilters.Count == 0)
        {
            throw new ArgumentException("UNSUBSCRIBE needs at least one topic filter.", nameof(topicFilters));
        }

        foreach (string filter in topicFilters)
        {
            ValidateTopicFilter(filter);
        }

        List<string> filters = [.. topicFilters];

        // Forgotten first: a reconnect racing with this call must not subscribe them again.
        lock (_sync)
        {
            foreach (string filter in filters)
            {
                _subscriptions.Remove(filter);
            }
        }

        var connection = await WaitForConnectionAsync(cancellationToken);
        var ack = (UnsubAckPacket)await SendRequestAsync(connection, id => new UnsubscribePacket { PacketId = id, TopicFilters = filters }, cancellationToken);
        return new MqttUnsubscribeResult(ack.ReasonCodes, ack.Properties?.ReasonString);
    }

    /// <summary>Sends a SUBSCRIBE or UNSUBSCRIBE on <paramref name="connection"/> and waits for its answer.</summary>
    private async Task<MqttPacket> SendRequestAsync(MqttClientConnection connection, Func<ushort, MqttPacket> build, CancellationToken cancellationToken)
    {
        var request = new PendingRequest(connection);
        ushort id;
        lock (_sync)
        {
            if (connection.IsClosed)
            {
                throw new MqttClientDisconnectedException("The connection closed before the request was sent.");
            }

            id = AllocatePacketId();
            _requests[id] = request;
            if (!connection.TryEnqueue(build(id)))
            {
                _requests.Remove(id);
                throw new MqttClientDisconnectedException("The connection closed before the request was sent.");
            }
        }

        try
        {
            return await request.Completion.Task.WaitAsync(cancellationToken);
        }
        catch (OperationCanceledException)
        {
            lock (_sync)
            {
                if (_requests.TryGetValue(id, out var current) && current == request)
                {
                    _requests.Remove(id);
                }
            }

            throw;
        }
    }

    private async Task ResubscribeAsync(MqttClientConnection connection, List<MqttSubscription> subscriptions, CancellationToken cancellationToken)
    {
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timeout.CancelAfter(_options.ConnectTimeout);
            foreach (var batch in subscriptions.Chunk(ResubscribeBatch))
            {
                List<MqttSubscription> filters = [.. batch];
                var ack = (SubAckPacket)await SendRequestAsync(connection, id => new SubscribePacket { PacketId = id, Subscriptions = filters }, timeout.Token);
                for (int i = 0; i < ack.ReasonCodes.Count && i < filters.Count; i++)
                {
                    if ((byte)ack.ReasonCodes[i] >= 0x80)
                    {
                        MqttClientLog.ResubscribeRefused(_logger, filters[i].TopicFilter, (byte)ack.ReasonCodes[i]);
                    }
                }
            }

            MqttClientLog.Resubscribed(_logger, subscriptions.Count);
        }
        catch (Exception ex) when (ex is MqttClientDisconnectedException or OperationCanceledException && !cancellationToken.IsCancellationRequested)
        {
            // The connection died again or the broker did not answer: close it so the next reconnect tries again.
            MqttClientLog.ResubscribeFailed(_logger, ex);
            connection.Abort(new MqttClientDisconnectedException("Resubscribing after reconnect failed.", ex));
        }
    }

    /// <summary>Under the lock, right after CONNACK: what the session owes the broker goes out first, in its original order.</summary>
    private (int Publishes, int Releases) ResendInFlight(MqttClientConnection connection, bool sessionPresent)
    {
        int publishes = 0;
        int releases = 0;
        List<(OutboundFlow Flow, MqttPublishResult Result)>? completed = null;
        foreach (var flow in _outbound.Values.OrderBy(f => f.Sequence))
        {
            if (flow.State == FlowState.AwaitingPubComp)
            {
                if (sessionPresent)
                {
                    connection.TryEnqueue(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = flow.Packet.PacketId });
                    releases++;
                }
                else
                {
                    // The broker took the message at PUBREC; only the release handshake was lost with the session.
                    (completed ??= []).Add((flow, new MqttPublishResult(flow.Packet.PacketId, flow.PubRecCode, flow.ReasonString)));
                }

                continue;
            }

            var resend = new PublishPacket
            {
                Topic = flow.Packet.Topic,
                Payload = flow.Packet.Payload,
                QoS = flow.Packet.QoS,
                Retain = flow.Packet.Retain,
                Dup = flow.Sent,
                PacketId = flow.Packet.PacketId,
                Properties = flow.Packet.Properties,
            };
            flow.Sent = true;
            connection.TryEnqueue(resend);
            publishes++;
        }

        if (completed is not null)
        {
            foreach (var (flow, result) in completed)
            {
                _outbound.Remove(flow.Packet.PacketId);
                _outboundQuota.Release();
                flow.Completion.TrySetResult(result);
            }
        }

        return (publishes, releases);
    }

    /// <summary>PUBACK, PUBREC or PUBCOMP from the broker.</summary>
    private void OnPublishAcknowledgement(MqttClientConnection connection, PublishAckPacket ack)
    {
        string? reasonString = ack.Properties?.ReasonString;
        lock (_sync)
        {
            if (!_outbound.TryGetValue(ack.PacketId, out var flow))
            {
                MqttClientLog.UnknownPacketId(_logger, ack.Type, ack.PacketId);
                if (ack.Type == MqttPacketType.PubRec && (byte)ack.ReasonCode < 0x80)
                {
                    connection.TryEnqueue(new PublishAckPacket(MqttPacketType.PubRel)
                    {
                        PacketId = ack.PacketId,
                        ReasonCode = MqttReasonCode.PacketIdentifierNotFound,
                    });
                }

                return;
            }

            switch (ack.Type, flow.State)
            {
                case (MqttPacketType.PubAck, FlowState.AwaitingPubAck):
                    Complete(flow, new MqttPublishResult(ack.PacketId, ack.ReasonCode, reasonString));
                    break;
                case (MqttPacketType.PubRec, FlowState.AwaitingPubRec) when (byte)ack.ReasonCode >= 0x80:
                    Complete(flow, new MqttPublishResult(ack.PacketId, ack.ReasonCode, reasonString));
                    break;
                case (MqttPacketType.PubRec, FlowState.AwaitingPubRec):
                    flow.State = FlowState.AwaitingPubComp;
                    flow.PubRecCode = ack.ReasonCode;
                    flow.ReasonString = reasonString;
                    connection.TryEnqueue(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = ack.PacketId });
                    break;
                case (MqttPacketType.PubRec, FlowState.AwaitingPubComp):
                    // Our PUBREL crossed a repeated PUBREC: release again.
                    connection.TryEnqueue(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = ack.PacketId });
                    break;
                case (MqttPacketType.PubComp, FlowState.AwaitingPubComp):
                    var code = (byte)ack.ReasonCode >= 0x80 ? ack.ReasonCode : flow.PubRecCode;
                    Complete(flow, new MqttPublishResult(ack.PacketId, code, reasonString ?? flow.ReasonString));
                    break;
                default:
                    throw new MqttProtocolException(MqttReasonCode.ProtocolError,
                        $"{ack.Type} for packet {ack.PacketId}, a QoS {(int)flow.Packet.QoS} flow in state {flow.State}");
            }
        }
    }

    private void OnRequestAcknowledgement(MqttPacket ack, ushort packetId)
    {
        PendingRequest? request;
        lock (_sync)
        {
            if (!_requests.Remove(packetId, out request))
            {
                MqttClientLog.UnknownPacketId(_logger, ack.Type, packetId);
                return;
            }
        }

        request.Completion.TrySetResult(ack);
    }

    /// <summary>Under the lock.</summary>
    private void Complete(OutboundFlow flow, MqttPublishResult result)
    {
        _outbound.Remove(flow.Packet.PacketId);
        _outboundQuota.Release();
        flow.Completion.TrySetResult(result);
    }

    /// <summary>Under the lock.</summary>
    private List<PendingRequest> TakeRequests(MqttClientConnection connection)
    {
        List<PendingRequest> taken = [];
        foreach (var (id, request) in _requests.Where(r => r.Value.Connection == connection).ToList())
        {
            _requests.Remove(id);
            taken.Add(request);
        }

        return taken;
    }

    /// <summary>Under the lock.</summary>
    private void FailOutbound(Exception reason)
    {
        foreach (var flow in _outbound.Values)
        {
            flow.Completion.TrySetException(reason);
        }

        _outbound.Clear();
        _outboundQuota.Reset();
    }

    /// <summary>Under the lock.</summary>
    private ushort AllocatePacketId()
    {
        for (int i = 0; i < ushort.MaxValue; i++)
        {
            _lastPacketId = _lastPacketId == ushort.MaxValue ? (ushort)1 : (ushort)(_lastPacketId + 1);
            if (!_outbound.ContainsKey(_lastPacketId) && !_requests.ContainsKey(_lastPacketId))
            {
                return _lastPacketId;
            }
        }

        throw new MqttClientException("All 65,535 packet identifiers are in use.");
    }

    /// <summary>Under the lock: CONNACK's Receive Maximum, Maximum QoS and Maximum Packet Size (5.0; absent means no limit).</summary>
    private void ApplyServerLimits(MqttProperties? properties)
    {
        _serverMaximumQoS = properties?.MaximumQoS is { } qos ? (MqttQoS)qos : MqttQoS.ExactlyOnce;
        _serverMaximumPacketSize = properties?.MaximumPacketSize ?? MqttClientOptions.MaxPossiblePacketSize;
        _outboundQuota.SetLimit(Math.Min((int)(properties?.ReceiveMaximum ?? ushort.MaxValue), MaxOutboundInFlight));
    }

    private void CheckServerLimits(PublishPacket packet, MqttProtocolVersion version)
    {
        if (packet.QoS > _serverMaximumQoS)
        {
            throw new MqttClientException($"The broker accepts QoS {(int)_serverMaximumQoS} at most; the message asks for QoS {(int)packet.QoS}.");
        }

        int size = MqttPacketEncoder.PublishSize(version, packet.Topic, packet.Payload.Length, packet.QoS, packet.Properties);
        if (size > _serverMaximumPacketSize)
        {
            throw new MqttClientException($"The PUBLISH would be {size} bytes; the broker accepts {_serverMaximumPacketSize} at most.");
        }
    }

    private void ThrowIfNotStarted()
    {
        ObjectDisposedException.ThrowIf(_state == ClientState.Disposed, this);
        if (_state is not (ClientState.Connecting or ClientState.Connected))
        {
            throw new InvalidOperationException("The client is not connected: call ConnectAsync first.");
        }
    }

    private static void ValidateTopicName(string topic)
    {
        ArgumentException.ThrowIfNullOrEmpty(topic);
        if (topic.AsSpan().IndexOfAny('+', '#') >= 0 || topic.Contains('\0', StringComparison.Ordinal))
        {
            throw new ArgumentException($"'{topic}' is not a topic name: wildcards and U+0000 are not allowed.", nameof(topic));
        }

        if (Encoding.UTF8.GetByteCount(topic) > ushort.MaxValue)
        {
            throw new ArgumentException("A topic is at most 65,535 bytes of UTF-8.", nameof(topic));
        }
    }

    private void ValidateSubscription(MqttSubscription subscription)
    {
        ValidateTopicFilter(subscription.TopicFilter);
        if (subscription.QoS is not (MqttQoS.AtMostOnce or MqttQoS.AtLeastOnce or MqttQoS.ExactlyOnce))
        {
            throw new ArgumentOutOfRangeException(nameof(subscription), subscription.QoS, "QoS is 0, 1 or 2.");
        }

        if (subscription.NoLocal && _options.ProtocolVersion == MqttProtocolVersion.V500
            && subscription.TopicFilter.StartsWith("$share/", StringComparison.Ordinal))
        {
            throw new ArgumentException("No Local is not allowed on a shared subscription (MQTT 5.0, 3.8.3.1).", nameof(subscription));
        }
    }

    /// <summary>Filter syntax (4.7): '#' alone and last, '+' a whole level; $share/{group}/{filter} with a group free of wildcards.</summary>
    internal static void ValidateTopicFilter(string filter)
    {
        ArgumentException.ThrowIfNullOrEmpty(filter);
        if (Encoding.UTF8.GetByteCount(filter) > ushort.MaxValue || filter.Contains('\0', StringComparison.Ordinal))
        {
            throw new ArgumentException("A topic filter is at most 65,535 bytes of UTF-8, without U+0000.", nameof(filter));
        }

        string plain = filter;
        if (filter.StartsWith("$share/", StringComparison.Ordinal))
        {
            int slash = filter.IndexOf('/', 7);
            string group = slash < 0 ? string.Empty : filter[7..slash];
            if (group.Length == 0 || group.AsSpan().IndexOfAny('+', '#') >= 0 || slash == filter.Length - 1)
            {
                throw new ArgumentException($"'{filter}' is not a shared subscription: $share/{{group}}/{{filter}}.", nameof(filter));
            }

            plain = filter[(slash + 1)..];
        }

        string[] levels = plain.Split('/');
        for (int i = 0; i < levels.Length; i++)
        {
            string level = levels[i];
            bool bad = (level.Contains('#', StringComparison.Ordinal) && (level.Length != 1 || i != levels.Length - 1))
                || (level.Contains('+', StringComparison.Ordinal) && level.Length != 1);
            if (bad)
            {
                throw new ArgumentException($"'{filter}' is not a valid topic filter.", nameof(filter));
            }
        }
    }

    private sealed class OutboundFlow(PublishPacket packet, long sequence, FlowState state)
    {
        public PublishPacket Packet { get; } = packet;

        public long Sequence { get; } = sequence;

        public FlowState State { get; set; } = state;

        /// <summary>Written to a connection at least once: a resend carries DUP.</summary>
        public bool Sent { get; set; }

        public MqttReasonCode PubRecCode { get; set; }

        public string? ReasonString { get; set; }

        public TaskCompletionSource<MqttPublishResult> Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    private sealed class PendingRequest(MqttClientConnection connection)
    {
        public MqttClientConnection Connection { get; } = connection;

        public TaskCompletionSource<MqttPacket> Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }
}

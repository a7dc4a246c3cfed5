using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// Subscriptions and routing: a publish goes through the subscription tree to each matching session's bounded queue.
public sealed partial class MqttBroker
{
    [ThreadStatic]
    private static List<Subscriber>? t_matches;

    // Retained messages not kept for a limit, in all, and when to log them.
    private long _retainedNotKept;
    private readonly ReportThrottle _retainedNotKeptReports = new(DropLogInterval);

    // ------------------------------------------------------------ subscriptions

    internal MqttReasonCode Subscribe(MqttSession session, MqttClientIdentity identity, MqttSubscription subscription, uint subscriptionId,
        MqttProtocolVersion version, out bool isNew)
    {
        isNew = false;
        string filter = subscription.TopicFilter;
        string? group = null;
        string inner = filter;
        if (MqttTopic.TryParseShared(filter, out var shareGroup, out var shareFilter, out bool validShare))
        {
            if (!validShare)
            {
                return version == MqttProtocolVersion.V500 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
            }

            if (subscription.NoLocal && version == MqttProtocolVersion.V500)
            {
                throw MqttProtocolException.Protocol("No Local on a shared subscription");
            }

            group = shareGroup;
            inner = shareFilter;
        }
        else if (!MqttTopic.IsValidFilter(filter))
        {
            return version == MqttProtocolVersion.V500 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
        }

        bool v5 = version == MqttProtocolVersion.V500;
        if (!MqttTopic.IsWithinLimits(filter, Options.MaxTopicLength, Options.MaxTopicLevels))
        {
            Metrics.LimitHit(filter.Length > Options.MaxTopicLength ? nameof(MqttBrokerOptions.MaxTopicLength) : nameof(MqttBrokerOptions.MaxTopicLevels));
            return v5 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
        }

        if (_authorizer is not null && !_authorizer.MaySubscribe(identity, inner))
        {
            Metrics.Denied("subscribe");
            LogSubscribeDenied(identity.Name, LogText.Safe(session.ClientId), LogText.Safe(filter));
            return v5 ? MqttReasonCode.NotAuthorized : MqttReasonCode.UnspecifiedError;
        }

        var subscriber = new Subscriber(session, subscription.QoS, subscription.NoLocal, subscription.RetainAsPublished, subscriptionId);
        lock (session.Sync)
        {
            if (session.Subscriptions.Count >= Options.MaxSubscriptionsPerSession && !session.Subscriptions.ContainsKey(filter))
            {
                Metrics.LimitHit(nameof(MqttBrokerOptions.MaxSubscriptionsPerSession));
                return v5 ? MqttReasonCode.QuotaExceeded : MqttReasonCode.UnspecifiedError;
            }

            isNew = _tree.Add(inner, group, subscriber);
            session.Subscriptions[filter] = new SessionSubscription(subscription, subscriptionId, group, inner);
        }

        return (MqttReasonCode)subscription.QoS;
    }

    internal bool Unsubscribe(MqttSession session, string filter)
    {
        lock (session.Sync)
        {
            if (!session.Subscriptions.Remove(filter, out var subscription))
            {
                return false;
            }

            _tree.Remove(subscription.Filter, subscription.ShareGroup, session);
            return true;
        }
    }

    /// <summary>Queues the retained messages matching a new subscription (<see cref="MqttRetainedMessageStore.ForSubscription"/>).</summary>
    internal void EnqueueRetained(MqttSession session, MqttSubscription subscription, uint subscriptionId)
    {
        foreach (var outbound in _retained.ForSubscription(subscription, subscriptionId))
        {
            Enqueue(session, outbound);
        }
    }

    // ------------------------------------------------------------ routing

    /// <summary>Stores a retained message and hands the message to every matching session's queue.</summary>
    internal void Route(MqttMessage message, long now)
    {
        Metrics.MessageReceived();
        if (message.Retain && _retained.Store(message) is { } limit)
        {
            ReportRetainedNotKept(limit, message.Topic);
        }

        var matches = t_matches ??= [];
        matches.Clear();
        _tree.Match(message.Topic, matches);
        if (matches.Count == 1)
        {
            var only = matches[0];
            if (!(only.NoLocal && ReferenceEquals(only.Session, message.Sender)))
            {
                Deliver(message, only.Session, only.QoS, only.RetainAsPublished, only.SubscriptionId == 0 ? null : [only.SubscriptionId]);
            }
        }
        else if (matches.Count > 1)
        {
            RouteToMany(message, matches);
        }

        matches.Clear();
    }

    /// <summary>Overlapping subscriptions of one session: one delivery, the highest QoS, every subscription id [MQTT-3.3.5-1].</summary>
    private void RouteToMany(MqttMessage message, List<Subscriber> matches)
    {
        var bySession = new Dictionary<MqttSession, (MqttQoS QoS, bool Rap, List<uint>? Ids)>(ReferenceEqualityComparer.Instance);
        foreach (var s in matches)
        {
            if (s.NoLocal && ReferenceEquals(s.Session, message.Sender))
            {
                continue;
            }

            bySession.TryGetValue(s.Session, out var current);
            var ids = current.Ids;
            if (s.SubscriptionId != 0)
            {
                (ids ??= []).Add(s.SubscriptionId);
            }

            bySession[s.Session] = ((MqttQoS)Math.Max((int)current.QoS, (int)s.QoS), current.Rap || s.RetainAsPublished, ids);
        }

        foreach (var (session, (qos, rap, ids)) in bySession)
        {
            Deliver(message, session, qos, rap, ids?.ToArray());
        }
    }

    private void Deliver(MqttMessage message, MqttSession session, MqttQoS subscriptionQoS, bool retainAsPublished, uint[]? ids)
    {
        var qos = (MqttQoS)Math.Min((int)message.QoS, (int)subscriptionQoS);

        // QoS 0 is not queued for a disconnected session (as Mosquitto does by default).
        if (qos == MqttQoS.AtMostOnce && session.Connection is null)
        {
            return;
        }

        Enqueue(session, new OutboundMessage(message, qos, retainAsPublished && message.Retain, ids));
    }

    /// <summary>
    /// Queues a message for a session. A full queue (<see cref="MqttBrokerOptions.MaxQueuedMessages"/> or
    /// <see cref="MqttBrokerOptions.MaxQueuedBytesPerSession"/>) drops the new message: counted per cause and per session
    /// (<c>saito.mqtt.subscriber.dropped</c>), and logged at most once per <see cref="DropLogInterval"/> per session.
    /// The publisher is never held back by a subscriber (docs/mqtt.md, "A slow subscriber").
    /// </summary>
    private void Enqueue(MqttSession session, OutboundMessage outbound)
    {
        long size = MqttSession.QueuedSize(outbound.Message);
        long droppedSinceLog;
        long droppedTotal;
        lock (session.Sync)
        {
            bool bytesFull = session.QueuedBytes > 0 && session.QueuedBytes + size > Options.MaxQueuedBytesPerSession;
            if (session.QueuedCount < Options.MaxQueuedMessages && !bytesFull)
            {
                session.EnqueueQueued(outbound);
                droppedSinceLog = 0;
                droppedTotal = 0;
            }
            else
            {
                Metrics.Dropped(bytesFull ? "queue_bytes_full" : "queue_full");
                droppedSinceLog = session.RecordDrop(Environment.TickCount64, (long)DropLogInterval.TotalMilliseconds);
                droppedTotal = session.Dropped;
                if (droppedSinceLog == 0)
                {
                    return;
                }
            }
        }

        if (droppedTotal > 0)
        {
            LogQueueFull(LogText.Safe(session.ClientId), Options.MaxQueuedMessages, Options.MaxQueuedBytesPerSession, droppedSinceLog, droppedTotal);
            return;
        }

        session.Connection?.Signal();
    }

    /// <summary>
    /// Logs a retained message that a limit kept out: the first, then at most once per <see cref="DropLogInterval"/> with
    /// how many since the last report, so a client that floods new retained topics cannot flood the log.
    /// </summary>
    private void ReportRetainedNotKept(string limit, string topic)
    {
        long total = Interlocked.Increment(ref _retainedNotKept);
        if (_retainedNotKeptReports.Due(total) is not (> 0 and var since))
        {
            return;
        }

        LogRetainedNotKept(LogText.Safe(topic), limit, limit == nameof(MqttBrokerOptions.MaxRetainedMessages) ? Options.MaxRetainedMessages : Options.MaxRetainedBytes,
            since, total);
    }
}

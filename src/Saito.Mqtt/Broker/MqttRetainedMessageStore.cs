using System.Collections.Concurrent;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The retained message of each topic, bounded by <see cref="MqttBrokerOptions.MaxRetainedMessages"/> and
/// <see cref="MqttBrokerOptions.MaxRetainedBytes"/>. Safe for concurrent use: routing stores, subscribers read.
/// </summary>
internal sealed class MqttRetainedMessageStore(MqttBrokerOptions options, MqttBrokerMetrics metrics)
{
    private readonly ConcurrentDictionary<string, MqttMessage> _retained = new(StringComparer.Ordinal);

    // The topics held, as a tree of levels, for ForSubscription. A topic enters and leaves the dictionary and the index
    // together under this lock (new topics, clears and expiries only; a replacement of a held topic does not take it).
    private readonly RetainedTopicIndex _index = new();
    private long _bytes;

    // Topics held plus slots reserved by stores about to add one. A store reserves its slot before it adds, so
    // concurrent stores of new topics cannot pass MaxRetainedMessages between a check and an add; it is also cheaper
    // than ConcurrentDictionary.Count, which takes every lock of the dictionary.
    private int _slots;

    public int Count => _retained.Count;

    /// <summary>Payload bytes held, as counted against <see cref="MqttBrokerOptions.MaxRetainedBytes"/>.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>
    /// Keeps a retained message as its topic's, or clears the topic's when the payload is empty. A message over
    /// <see cref="MqttBrokerOptions.MaxRetainedMessages"/> (a new topic only) or <see cref="MqttBrokerOptions.MaxRetainedBytes"/>
    /// is not kept: counted as dropped (<c>retained_limit</c>) and as a limit hit. Its publisher is not told: the broker still
    /// routes the message to current subscribers and the publish hook decides the acknowledgement.
    /// </summary>
    /// <returns>The name of the limit that kept the message out, or null when it was kept (or cleared its topic).</returns>
    public string? Store(MqttMessage message)
    {
        if (message.Payload.IsEmpty)
        {
            lock (_index)
            {
                if (_retained.TryRemove(message.Topic, out var removed))
                {
                    _index.Remove(message.Topic);
                    Released(removed);
                }
            }

            return null;
        }

        // Kept without the sender so no-local does not apply to later subscribers.
        var retained = new MqttMessage
        {
            Topic = message.Topic,
            Payload = message.Payload,
            QoS = message.QoS,
            Retain = true,
            Properties = message.Properties,
            ExpiresAt = message.ExpiresAt,
        };
        long length = HeldBytes(message);

        // A replacement and a new topic each claim what they need, then add; when another store on the same topic
        // changed it in between (added, replaced or cleared it), the claim is given back and the store looks again.
        while (true)
        {
            if (_retained.TryGetValue(message.Topic, out var previous))
            {
                // Only what the new payload adds: a replacement of the same size must fit however full the store is.
                long more = length - HeldBytes(previous);
                if (!TryReserveBytes(more))
                {
                    return nameof(MqttBrokerOptions.MaxRetainedBytes);
                }

                if (_retained.TryUpdate(message.Topic, retained, previous))
                {
                    return null;
                }

                Interlocked.Add(ref _bytes, -more);
                continue;
            }

            if (Interlocked.Increment(ref _slots) > options.MaxRetainedMessages)
            {
                Interlocked.Decrement(ref _slots);
                metrics.Dropped("retained_limit");
                metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedMessages));
                return nameof(MqttBrokerOptions.MaxRetainedMessages);
            }

            if (!TryReserveBytes(length))
            {
                Interlocked.Decrement(ref _slots);
                return nameof(MqttBrokerOptions.MaxRetainedBytes);
            }

            lock (_index)
            {
                if (_retained.TryAdd(message.Topic, retained))
                {
                    _index.Add(message.Topic);
                    return null;
                }
            }

            Interlocked.Decrement(ref _slots);
            Interlocked.Add(ref _bytes, -length);
        }
    }

    /// <summary>What a retained message counts against MaxRetainedBytes: its payload and its properties (<see cref="MqttProperties.HeldBytes"/>).</summary>
    private static long HeldBytes(MqttMessage message) => message.Payload.Length + (message.Properties?.HeldBytes() ?? 0);

    /// <summary>Claims <paramref name="length"/> bytes under <see cref="MqttBrokerOptions.MaxRetainedBytes"/>; past it counts the drop.</summary>
    private bool TryReserveBytes(long length)
    {
        if (Interlocked.Add(ref _bytes, length) <= options.MaxRetainedBytes)
        {
            return true;
        }

        Interlocked.Add(ref _bytes, -length);
        metrics.Dropped("retained_limit");
        metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedBytes));
        return false;
    }

    /// <summary>Gives back the slot and bytes of a message removed from the store.</summary>
    private void Released(MqttMessage removed)
    {
        Interlocked.Decrement(ref _slots);
        Interlocked.Add(ref _bytes, -HeldBytes(removed));
    }

    /// <summary>
    /// The deliveries of the retained messages matching a new subscription (retain flag set, as the standard requires), at
    /// most <see cref="MqttBrokerOptions.MaxRetainedPerSubscribe"/>; expired ones met on the way are removed. The topics
    /// are found through <see cref="RetainedTopicIndex"/>, so a filter costs what it matches and the levels it names, not
    /// the whole store (a SUBSCRIBE of 100 filters that match nothing scanned 100,000 retained topics 100 times).
    /// </summary>
    public IEnumerable<OutboundMessage> ForSubscription(MqttSubscription subscription, uint subscriptionId)
    {
        long now = Environment.TickCount64;
        uint[]? ids = subscriptionId == 0 ? null : [subscriptionId];
        int budget = options.MaxRetainedPerSubscribe;
        var found = new List<MqttMessage>();
        List<MqttMessage>? expired = null;
        bool overBudget = false;
        lock (_index)
        {
            _index.Match(subscription.TopicFilter, topic =>
            {
                if (!_retained.TryGetValue(topic, out var message))
                {
                    return true;
                }

                if (message.IsExpired(now))
                {
                    (expired ??= []).Add(message);
                    return true;
                }

                if (found.Count == budget)
                {
                    overBudget = true;
                    return false;
                }

                found.Add(message);
                return true;
            });

            foreach (var message in expired ?? [])
            {
                if (_retained.TryRemove(new KeyValuePair<string, MqttMessage>(message.Topic, message)))
                {
                    _index.Remove(message.Topic);
                    Released(message);
                }
            }
        }

        if (overBudget)
        {
            metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedPerSubscribe));
        }

        foreach (var message in found)
        {
            var qos = (MqttQoS)Math.Min((int)message.QoS, (int)subscription.QoS);
            yield return new OutboundMessage(message, qos, Retain: true, ids);
        }
    }
}

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
    private long _bytes;

    public int Count => _retained.Count;

    /// <summary>Payload bytes held, as counted against <see cref="MqttBrokerOptions.MaxRetainedBytes"/>.</summary>
    public long Bytes => Interlocked.Read(ref _bytes);

    /// <summary>Keeps a retained message as its topic's, or clears the topic's when the payload is empty.</summary>
    public void Store(MqttMessage message)
    {
        if (message.Payload.IsEmpty)
        {
            if (_retained.TryRemove(message.Topic, out var removed))
            {
                Interlocked.Add(ref _bytes, -removed.Payload.Length);
            }

            return;
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
        if (_retained.Count >= options.MaxRetainedMessages && !_retained.ContainsKey(message.Topic))
        {
            metrics.Dropped("retained_limit");
            metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedMessages));
            return;
        }

        if (Interlocked.Add(ref _bytes, message.Payload.Length) > options.MaxRetainedBytes)
        {
            Interlocked.Add(ref _bytes, -message.Payload.Length);
            metrics.Dropped("retained_limit");
            metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedBytes));
            return;
        }

        _retained.AddOrUpdate(message.Topic, retained, (_, previous) =>
        {
            Interlocked.Add(ref _bytes, -previous.Payload.Length);
            return retained;
        });
    }

    /// <summary>
    /// The deliveries of the retained messages matching a new subscription (retain flag set, as the standard requires), at
    /// most <see cref="MqttBrokerOptions.MaxRetainedPerSubscribe"/>; expired ones met on the way are removed. The scan is
    /// bounded by <see cref="MqttBrokerOptions.MaxRetainedMessages"/>.
    /// </summary>
    public IEnumerable<OutboundMessage> ForSubscription(MqttSubscription subscription, uint subscriptionId)
    {
        long now = Environment.TickCount64;
        uint[]? ids = subscriptionId == 0 ? null : [subscriptionId];
        int budget = options.MaxRetainedPerSubscribe;
        foreach (var (topic, message) in _retained)
        {
            if (message.IsExpired(now))
            {
                if (_retained.TryRemove(new KeyValuePair<string, MqttMessage>(topic, message)))
                {
                    Interlocked.Add(ref _bytes, -message.Payload.Length);
                }

                continue;
            }

            if (MqttTopic.Matches(subscription.TopicFilter, topic))
            {
                if (budget-- <= 0)
                {
                    metrics.LimitHit(nameof(MqttBrokerOptions.MaxRetainedPerSubscribe));
                    yield break;
                }

                var qos = (MqttQoS)Math.Min((int)message.QoS, (int)subscription.QoS);
                yield return new OutboundMessage(message, qos, Retain: true, ids);
            }
        }
    }
}

using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// SUBSCRIBE and UNSUBSCRIBE.
internal sealed partial class MqttServerConnection
{
    private async ValueTask HandleSubscribeAsync(SubscribePacket subscribe, CancellationToken token)
    {
        await ThrottleAsync(token);
        uint subscriptionId = 0;
        if (subscribe.Properties?.SubscriptionIdentifiers is [var requestedId, ..])
        {
            subscriptionId = requestedId;
        }

        var codes = new List<MqttReasonCode>(subscribe.Subscriptions.Count);
        var retainedToSend = new List<(MqttSubscription Options, uint Id)>();
        foreach (var s in subscribe.Subscriptions)
        {
            var code = _broker.Subscribe(Session!, Identity, s, subscriptionId, Version, out bool isNew);
            codes.Add(code);
            if ((byte)code < 0x80 && !MqttTopic.TryParseShared(s.TopicFilter, out _, out _, out _) &&
                (s.RetainHandling == MqttRetainHandling.SendAtSubscribe || (s.RetainHandling == MqttRetainHandling.SendAtSubscribeIfNew && isNew)))
            {
                retainedToSend.Add((s, subscriptionId));
            }

            Log.Subscribed(_logger, LogId, LogText.Safe(s.TopicFilter), (byte)code);
        }

        await SendControlAsync(new SubAckPacket { PacketId = subscribe.PacketId, ReasonCodes = codes }, token);
        foreach (var (options, id) in retainedToSend)
        {
            _broker.EnqueueRetained(Session!, options, id);
        }
    }

    private async ValueTask HandleUnsubscribeAsync(UnsubscribePacket unsubscribe, CancellationToken token)
    {
        var codes = new List<MqttReasonCode>(unsubscribe.TopicFilters.Count);
        foreach (var filter in unsubscribe.TopicFilters)
        {
            codes.Add(_broker.Unsubscribe(Session!, filter) ? MqttReasonCode.Success : MqttReasonCode.NoSubscriptionExisted);
        }

        await SendControlAsync(new UnsubAckPacket { PacketId = unsubscribe.PacketId, ReasonCodes = codes }, token);
    }
}

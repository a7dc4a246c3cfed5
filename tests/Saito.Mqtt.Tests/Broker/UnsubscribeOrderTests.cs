using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>
/// Issue 32, item 15: Paho's 3.1.1 test_unsubscribe was reported to fail about one run in three. Its sequence, many
/// times over real sockets: the UNSUBSCRIBE is sent (its UNSUBACK not awaited, as Paho's client does) before the
/// publisher even connects. Saito reads each connection on its own, so when the subscriber's connection is read late
/// (seen once in a full test run on 2 cores, 2026-12-06) the publisher's first message on the filter can be routed
/// before the UNSUBSCRIBE is: it is then already buffered for the subscriber, which MQTT lets a server still deliver
/// ([MQTT-3.10.4-3] forbids only adding new ones), and it may arrive after the UNSUBACK. Mosquitto, one loop for all
/// sockets, reads the two in the order they arrived. What must always hold: that one message at most, and nothing on
/// the filter published after the UNSUBACK.
/// </summary>
public sealed class UnsubscribeOrderTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_publish_from_a_client_that_connects_after_an_unsubscribe_was_sent_never_reaches_the_unsubscribed_filter()
    {
        await using var saito = await SaitoHost.StartAsync();
        string run = Guid.NewGuid().ToString("N")[..8];
        string[] topics = [$"{run}/TopicA", $"{run}/TopicA/B", $"{run}/Topic/C"];
        for (int i = 0; i < 50; i++)
        {
            await using var b = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            (await b.ConnectAsync(MqttProtocolVersion.V311, $"unsub-b-{run}")).ReasonCode.ShouldBe((byte)0);
            foreach (string topic in topics)
            {
                await b.SendAsync(new SubscribePacket { PacketId = b.NextPacketId(), Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = MqttQoS.ExactlyOnce }] });
                await b.ExpectAsync<SubAckPacket>();
            }

            await b.SendAsync(new UnsubscribePacket { PacketId = b.NextPacketId(), TopicFilters = [topics[0]] });

            await using var a = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            (await a.ConnectAsync(MqttProtocolVersion.V311, $"unsub-a-{run}")).ReasonCode.ShouldBe((byte)0);
            foreach (string topic in topics)
            {
                await a.SendAsync(new PublishPacket { Topic = topic, Payload = new byte[] { 1 }, QoS = MqttQoS.AtLeastOnce, PacketId = a.NextPacketId() });
                await a.ExpectAsync<PublishAckPacket>();
            }

            await b.ExpectSkippingPublishesAsync<UnsubAckPacket>();
            var received = new List<string>();
            while (!topics[1..].All(received.Contains))
            {
                received.Add((await b.ExpectAsync<PublishPacket>()).Topic);
            }

            received.Count(t => t == topics[0]).ShouldBeLessThanOrEqualTo(1, $"run {i}: at most the one message routed before the UNSUBSCRIBE was read ({string.Join(", ", received)})");

            // Published after the UNSUBACK: never delivered on the filter given up; the held filter's marker arrives.
            await a.SendAsync(new PublishPacket { Topic = topics[0], Payload = new byte[] { 2 }, QoS = MqttQoS.AtLeastOnce, PacketId = a.NextPacketId() });
            await a.ExpectAsync<PublishAckPacket>();
            await a.SendAsync(new PublishPacket { Topic = topics[1], Payload = new byte[] { 2 }, QoS = MqttQoS.AtLeastOnce, PacketId = a.NextPacketId() });
            await a.ExpectAsync<PublishAckPacket>();
            (await b.ExpectAsync<PublishPacket>()).Topic.ShouldBe(topics[1], $"run {i}: a message on {topics[0]} published after the UNSUBACK reached the subscriber");
            await b.ExpectNothingAsync(TimeSpan.FromMilliseconds(50));
        }
    }
}

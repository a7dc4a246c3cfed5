using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Broker;

public sealed class BoundedMemoryTests
{
    [Fact]
    public async Task A_subscriber_that_stops_reading_loses_its_own_messages_counted_and_nobody_else_waits()
    {
        const int Messages = 2000;
        const int Queue = 100;
        const int Inflight = 10;
        await using var saito = await SaitoBrokerInstance.StartAsync([$"Mqtt:MaxQueuedMessages={Queue}", $"Mqtt:MaxInflightMessages={Inflight}"]);
        var token = TestContext.Current.CancellationToken;
        string topic = "bounded/" + Guid.NewGuid().ToString("N");

        // The stuck subscriber never reads and never acknowledges.
        await using var stuck = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await stuck.ConnectAsync(MqttProtocolVersion.V311, "stuck-" + Guid.NewGuid().ToString("N")[..8], keepAliveSeconds: 0);
        await stuck.SendAsync(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = MqttQoS.AtLeastOnce }] });
        await stuck.ExpectAsync<SubAckPacket>();

        await using var healthy = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await healthy.ConnectAsync(MqttProtocolVersion.V311, "healthy-" + Guid.NewGuid().ToString("N")[..8], keepAliveSeconds: 0);
        await healthy.SendAsync(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = MqttQoS.AtMostOnce }] });
        await healthy.ExpectAsync<SubAckPacket>();

        await using var publisher = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await publisher.ConnectAsync(MqttProtocolVersion.V311, "pub-" + Guid.NewGuid().ToString("N")[..8], keepAliveSeconds: 0);
        var payload = new byte[1000];
        var received = Task.Run(async () =>
        {
            int count = 0;
            while (count < Messages)
            {
                await healthy.ExpectAsync<PublishPacket>(TimeSpan.FromSeconds(10));
                count++;
            }

            return count;
        }, token);
        for (int i = 0; i < Messages; i++)
        {
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = payload, QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)(i + 1) });
            (await publisher.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).PacketId.ShouldBe((ushort)(i + 1));
        }

        (await received).ShouldBe(Messages, "the healthy subscriber gets every message");

        // At most the inflight window and the queue are held for the stuck one; the rest is dropped and counted.
        long dropped = saito.Broker.Metrics.DroppedTotal;
        dropped.ShouldBeGreaterThanOrEqualTo(Messages - Queue - Inflight);
        dropped.ShouldBeLessThan(Messages);
    }
}

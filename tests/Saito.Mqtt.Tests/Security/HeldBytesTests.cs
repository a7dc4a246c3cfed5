using System.Text;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Security;

/// <summary>Bytes, not only messages: what one client can make Saito hold while the database is slow, and what one subscriber's queue holds.</summary>
public sealed class HeldBytesTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_client_stops_being_read_once_its_unacknowledged_payload_bytes_reach_the_limit_and_carries_on_after_the_commit()
    {
        await using var saito = await SaitoBrokerInstance.StartAsync(["Mqtt:MaxPendingBytesPerClient=4096", "Storage:CommandTimeoutSeconds=1"]);
        string device = "held-" + Guid.NewGuid().ToString("N")[..8];

        // The database is held: verdicts wait, and so do the bytes of each publish.
        await using var held = await HeldDatabase.HoldAsync(saito, Token);
        await using var client = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await client.ConnectAsync(MqttProtocolVersion.V500, device);
        long ts = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000;
        for (int i = 0; i < 3; i++)
        {
            // About 3 KB each: the second one no longer fits beside the first.
            string padding = new('x', 3000);
            byte[] payload = Encoding.UTF8.GetBytes($"{{\"ts\":{ts + i},\"hr\":70,\"note\":\"{padding}\"}}");
            await client.SendAsync(new PublishPacket { Topic = $"saito/hub-1/{device}/biosensor", Payload = payload, QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)(i + 1) });
        }

        await Eventually.TrueAsync(() => saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxPendingBytesPerClient)) > 0,
            "the read loop waits at the byte limit");

        await client.ExpectNothingAsync(TimeSpan.FromMilliseconds(500));
        await held.ReleaseAsync(Token);
        var acked = new HashSet<ushort>();
        while (acked.Count < 3)
        {
            acked.Add((await client.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(30))).PacketId);
        }
    }

    [Fact]
    public async Task A_subscriber_that_never_reads_holds_at_most_its_queued_bytes_and_the_rest_is_dropped_and_counted()
    {
        await using var saito = await SaitoBrokerInstance.StartAsync(["Mqtt:MaxQueuedBytesPerSession=10240", "Mqtt:MaxInflightMessages=1"]);
        string topic = "bytes/" + Guid.NewGuid().ToString("N");
        await using var stuck = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await stuck.ConnectAsync(MqttProtocolVersion.V311, "stuck-" + Guid.NewGuid().ToString("N")[..8]);
        await stuck.SendAsync(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = MqttQoS.AtLeastOnce }] });
        await stuck.ExpectAsync<SubAckPacket>();

        await using var publisher = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await publisher.ConnectAsync(MqttProtocolVersion.V311, "pub-" + Guid.NewGuid().ToString("N")[..8]);
        for (int i = 1; i <= 20; i++)
        {
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = new byte[2048], QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)i });
            await publisher.ExpectAsync<PublishAckPacket>();
        }

        // At most one in flight (never acknowledged) and 10 KB queued (5 messages of 2 KB): at least 14 dropped; 15 when the
        // first was still queued, not yet sent, as the later ones arrived.
        saito.Broker.Metrics.DroppedTotal.ShouldBeInRange(14, 15);
    }
}

using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Security;

/// <summary>
/// Bytes, not only messages: what one client can make Saito hold while the database is slow (its unacknowledged bytes,
/// the readings queued for the writers), and what one subscriber's queue holds.
/// </summary>
public sealed class HeldBytesTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_client_stops_being_read_once_its_unacknowledged_payload_bytes_reach_the_limit_and_carries_on_after_the_commit()
    {
        await using var saito = await SaitoHost.StartAsync(["Mqtt:MaxPendingBytesPerClient=4096", "Storage:CommandTimeoutSeconds=1"]);
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
    public async Task A_hub_that_fills_the_write_queue_waits_unacknowledged_counted_and_logged_and_every_reading_is_stored_once_the_database_frees()
    {
        const int Published = 10;
        const int Capacity = 4;
        var logs = new CapturedLog();
        await using var saito = await SaitoHost.StartAsync(
            ["Storage:BatchSize=2", $"Storage:QueueCapacity={Capacity}", "Storage:CommandTimeoutSeconds=1"],
            builder => builder.Logging.AddProvider(logs));
        var pool = saito.Services.GetRequiredService<ReadingWriterPool>();
        var metrics = saito.Services.GetRequiredService<IngestionMetrics>();
        pool.QueueCapacity.ShouldBe(Capacity);
        string device = "queue-" + Guid.NewGuid().ToString("N")[..8];
        string topic = $"saito/hub-1/{device}/biosensor";
        long ts = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 60_000;
        await using var hub = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await hub.ConnectAsync(MqttProtocolVersion.V500, "hub-" + device);

        // The device is registered before the hold: a new device's registration would wait on the held file before its
        // reading ever reached the queue, and the bound would not be what held it.
        await hub.SendAsync(Reading(topic, ts, packetId: 1));
        (await hub.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe(MqttReasonCode.Success);

        await using var held = await HeldDatabase.HoldAsync(saito, Token);
        pool.QueuedReadings.ShouldBe(0);
        metrics.QueueWaitsTotal.ShouldBe(0);
        for (int i = 1; i <= Published; i++)
        {
            await hub.SendAsync(Reading(topic, ts + i, packetId: (ushort)(i + 1)));
        }

        // Four fit (in the queue, or in a writer's batch that cannot commit); the other six wait for room, counted.
        await Eventually.TrueAsync(() => pool.QueuedReadings == Capacity, "the queue fills to Storage:QueueCapacity");
        await Eventually.TrueAsync(() => metrics.QueueWaitsTotal == Published - Capacity, "the publishes that do not fit wait for room");
        await hub.ExpectNothingAsync(TimeSpan.FromMilliseconds(500));
        pool.QueuedReadings.ShouldBe(Capacity, "the waiting publishes are not queued: memory stays bounded");
        pool.QueuedMessages.ShouldBe(Capacity);
        metrics.QueueWaitsTotal.ShouldBe(Published - Capacity);
        var warning = logs.Lines(2018).ShouldHaveSingleItem("the first wait is logged, the next ones within 10 s are not");
        warning.ShouldContain("Storage:QueueCapacity");

        // The broker still serves everyone else: another client connects and its publish is acknowledged.
        await using (var other = await RawMqttConnection.OpenAsync(saito.Endpoint, Token))
        {
            await other.ConnectAsync(MqttProtocolVersion.V500, "other-" + Guid.NewGuid().ToString("N")[..8]);
            await other.SendAsync(new PublishPacket { Topic = "chat/" + device, Payload = "hello"u8.ToArray(), QoS = MqttQoS.AtLeastOnce, PacketId = 7 });
            (await other.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).ReasonCode.ShouldBe(MqttReasonCode.Success);
        }

        await held.ReleaseAsync(Token);
        var acked = new HashSet<ushort>();
        while (acked.Count < Published)
        {
            var ack = await hub.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(30));
            ack.ReasonCode.ShouldBe(MqttReasonCode.Success);
            acked.Add(ack.PacketId).ShouldBeTrue($"packet {ack.PacketId} acknowledged once");
        }

        acked.ShouldBe(Enumerable.Range(2, Published).Select(i => (ushort)i), ignoreOrder: true);
        await Eventually.TrueAsync(() => pool.QueuedReadings == 0 && pool.QueuedMessages == 0, "the queue drains");
        (await StoredReadings.BiosensorCountAsync(held.Connection, device, Token)).ShouldBe(1 + Published);
    }

    [Fact]
    public async Task A_subscriber_that_never_reads_holds_at_most_its_queued_bytes_and_the_rest_is_dropped_and_counted()
    {
        await using var saito = await SaitoHost.StartAsync(["Mqtt:MaxQueuedBytesPerSession=10240", "Mqtt:MaxInflightMessages=1"]);
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

    private static PublishPacket Reading(string topic, long ts, ushort packetId) => new()
    {
        Topic = topic,
        Payload = Encoding.UTF8.GetBytes($"{{\"ts\":{ts},\"hr\":70}}"),
        QoS = MqttQoS.AtLeastOnce,
        PacketId = packetId,
    };
}

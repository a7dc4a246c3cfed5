using System.Diagnostics;
using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>
/// Subscribers that fall behind: the slow-subscriber policy (docs/mqtt.md) bounds what Saito holds for one (its queue
/// in messages and bytes), drops the rest counted for it (<c>saito.mqtt.subscriber.dropped</c>) and logged at a limited
/// rate, while publishers are acknowledged as before and other subscribers get everything.
/// </summary>
public sealed class BoundedMemoryTests
{
    [Fact]
    public void A_queued_message_counts_its_properties_against_the_session_bytes()
    {
        // A 1-byte payload with 100 KB of user properties counted as 66 bytes: a 16 MiB session limit held gigabytes.
        var properties = new MqttProperties { UserProperties = [new MqttUserProperty("k", new string('v', 50_000))], CorrelationData = new byte[1000] };
        var message = new MqttMessage { Topic = "t/1", Payload = new byte[1], Properties = properties };

        MqttSession.QueuedSize(message).ShouldBeGreaterThanOrEqualTo(101_000);
        MqttSession.QueuedSize(new MqttMessage { Topic = "t/1", Payload = new byte[1] }).ShouldBe(1 + 3 + MqttSession.QueuedOverheadBytes);
    }

    [Fact]
    public void A_queue_that_grew_past_the_kept_size_is_let_go_once_drained_and_a_short_one_is_kept()
    {
        // Mqtt:MaxQueuedMessages is 50,000: a subscriber that fell that far behind for a moment must not keep the
        // queue's grown array for the rest of its connection.
        var session = new MqttSession("behind");
        var outbound = new OutboundMessage(new MqttMessage { Topic = "t/1", Payload = new byte[10] }, MqttQoS.AtLeastOnce, false, null);
        lock (session.Sync)
        {
            Fill(MqttSession.KeptQueueMessages);
            Drain().ShouldBe(MqttSession.KeptQueueMessages);
            session.HoldsQueue.ShouldBeTrue("a queue that stayed at the kept size is kept for the next messages");

            Fill(MqttSession.KeptQueueMessages + 1);
            session.QueuedBytes.ShouldBe((MqttSession.KeptQueueMessages + 1) * MqttSession.QueuedSize(outbound.Message));
            Drain().ShouldBe(MqttSession.KeptQueueMessages + 1);
            session.HoldsQueue.ShouldBeFalse("a queue that grew past the kept size is let go once empty");
            session.QueuedBytes.ShouldBe(0);

            session.EnqueueQueued(outbound);
            session.QueuedCount.ShouldBe(1, "the next message makes a new queue");
        }

        void Fill(int count)
        {
            for (int i = 0; i < count; i++)
            {
                session.EnqueueQueued(outbound);
            }
        }

        int Drain()
        {
            int taken = 0;
            while (session.TryPeekQueued(out _))
            {
                session.DequeueQueued();
                taken++;
            }

            return taken;
        }
    }

    [Fact]
    public async Task A_subscriber_that_stops_reading_loses_its_own_messages_counted_and_nobody_else_waits()
    {
        const int Messages = 2000;
        const int Queue = 100;
        const int Inflight = 10;
        await using var saito = await SaitoHost.StartAsync([$"Mqtt:MaxQueuedMessages={Queue}", $"Mqtt:MaxInflightMessages={Inflight}"]);
        var token = TestContext.Current.CancellationToken;
        string topic = "bounded/" + Guid.NewGuid().ToString("N");

        // The stuck subscriber never reads and never acknowledges.
        await using var stuck = await SubscribedAsync(saito, "stuck-" + Guid.NewGuid().ToString("N")[..8], topic, MqttQoS.AtLeastOnce, token);
        await using var healthy = await SubscribedAsync(saito, "healthy-" + Guid.NewGuid().ToString("N")[..8], topic, MqttQoS.AtMostOnce, token);

        await using var publisher = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await publisher.ConnectAsync(MqttProtocolVersion.V311, "pub-" + Guid.NewGuid().ToString("N")[..8], keepAliveSeconds: 0);
        var payload = new byte[1000];
        using var arrivals = new SemaphoreSlim(0);
        var received = ReceiveAsync(healthy, Messages, arrivals, token);
        for (int i = 0; i < Messages; i++)
        {
            await KeepUpAsync(arrivals, i, token);
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = payload, QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)(i + 1) });
            (await publisher.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).PacketId.ShouldBe((ushort)(i + 1));
        }

        (await received).ShouldBe(Messages, "the healthy subscriber gets every message");

        // At most the inflight window and the queue are held for the stuck one; the rest is dropped and counted.
        long dropped = saito.Broker.Metrics.DroppedTotal;
        dropped.ShouldBeGreaterThanOrEqualTo(Messages - Queue - Inflight);
        dropped.ShouldBeLessThan(Messages);
    }

    [Fact]
    public async Task A_stalled_subscriber_is_bounded_in_bytes_and_its_drops_are_counted_for_it_logged_and_in_metrics()
    {
        const int Messages = 2000;
        const long QueueBytes = 64 * 1024;
        var logs = new CapturedLog();
        await using var saito = await SaitoHost.StartAsync(
            [$"Mqtt:MaxQueuedBytesPerSession={QueueBytes}", "Mqtt:MaxQueuedMessages=1000000", "Mqtt:MaxInflightMessages=10"],
            builder => builder.Logging.AddProvider(logs));
        var token = TestContext.Current.CancellationToken;
        string topic = "slow/" + Guid.NewGuid().ToString("N");
        string stuckId = "stuck-" + Guid.NewGuid().ToString("N")[..8];
        string healthyId = "healthy-" + Guid.NewGuid().ToString("N")[..8];
        var clock = Stopwatch.StartNew();

        // The stalled subscriber subscribes at QoS 1, then never reads nor acknowledges again.
        await using var stuck = await SubscribedAsync(saito, stuckId, topic, MqttQoS.AtLeastOnce, token);
        await using var healthy = await SubscribedAsync(saito, healthyId, topic, MqttQoS.AtMostOnce, token);
        using var arrivals = new SemaphoreSlim(0);
        var received = ReceiveAsync(healthy, Messages, arrivals, token);

        // The publisher is acknowledged for every message, promptly: a stalled subscriber does not hold it back.
        await using var publisher = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await publisher.ConnectAsync(MqttProtocolVersion.V311, "pub-" + Guid.NewGuid().ToString("N")[..8], keepAliveSeconds: 0);
        var payload = new byte[1000];
        long maxQueued = 0;
        for (int i = 0; i < Messages; i++)
        {
            await KeepUpAsync(arrivals, i, token);
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = payload, QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)(i + 1) });
            (await publisher.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).PacketId.ShouldBe((ushort)(i + 1));
            maxQueued = Math.Max(maxQueued, saito.Broker.QueueOf(stuckId)!.Value.Bytes);
        }

        (await received).ShouldBe(Messages, "the healthy subscriber gets every message");

        // The stalled subscriber's queue never held more than the bound; everything past the window and the queue was dropped.
        var queue = saito.Broker.QueueOf(stuckId)!.Value;
        maxQueued.ShouldBeLessThanOrEqualTo(QueueBytes);
        queue.Bytes.ShouldBeLessThanOrEqualTo(QueueBytes);
        queue.Messages.ShouldBeGreaterThan(0);
        queue.Dropped.ShouldBe(Messages - 10 - queue.Messages, "all but the inflight window and the queue");

        // Counted for that subscriber, by client id, and only for it.
        var drops = SubscriberDrops(saito.Services);
        drops.ShouldContainKey(stuckId);
        drops[stuckId].ShouldBe(queue.Dropped);
        drops.ShouldNotContainKey(healthyId);

        // Logged: the first drop at once, then at most once per 10 s per subscriber, with the count.
        var lines = logs.Lines(1012).Where(l => l.Contains(stuckId, StringComparison.Ordinal)).ToList();
        lines.Count.ShouldBeGreaterThanOrEqualTo(1);
        lines.Count.ShouldBeLessThanOrEqualTo(1 + (int)(clock.Elapsed.TotalSeconds / 10));
        lines[0].ShouldContain("Mqtt:MaxQueuedBytesPerSession");
    }

    /// <summary>Reads <c>saito.mqtt.subscriber.dropped</c> of this server's meter, by client id.</summary>
    private static Dictionary<string, long> SubscriberDrops(IServiceProvider services)
    {
        var factory = services.GetRequiredService<IMeterFactory>();
        var drops = new Dictionary<string, long>(StringComparer.Ordinal);
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (ReferenceEquals(instrument.Meter.Scope, factory) && instrument.Name == "saito.mqtt.subscriber.dropped")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            foreach (var tag in tags)
            {
                if (tag.Key == "client_id")
                {
                    drops[(string)tag.Value!] = value;
                }
            }
        });
        listener.Start();
        listener.RecordObservableInstruments();
        return drops;
    }

    /// <summary>A raw 3.1.1 connection subscribed to <paramref name="topic"/>.</summary>
    private static async Task<RawMqttConnection> SubscribedAsync(SaitoHost saito, string clientId, string topic, MqttQoS qos, CancellationToken token)
    {
        var connection = await RawMqttConnection.OpenAsync(saito.Endpoint, token);
        await connection.ConnectAsync(MqttProtocolVersion.V311, clientId, keepAliveSeconds: 0);
        await connection.SendAsync(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = qos }] });
        await connection.ExpectAsync<SubAckPacket>();
        return connection;
    }

    /// <summary>Reads PUBLISHes until <paramref name="count"/> have come (each within 10 s), releasing <paramref name="arrivals"/> for each.</summary>
    private static Task<int> ReceiveAsync(RawMqttConnection connection, int count, SemaphoreSlim arrivals, CancellationToken token) => Task.Run(async () =>
    {
        int received = 0;
        while (received < count)
        {
            await connection.ExpectAsync<PublishPacket>(TimeSpan.FromSeconds(10));
            received++;
            arrivals.Release();
        }

        return received;
    }, token);

    /// <summary>
    /// The healthy subscriber reads as it should, and is never more than <see cref="HealthyLag"/> messages behind: before
    /// message <paramref name="index"/> goes out, message <c>index - HealthyLag</c> has reached it (within 10 s). The bound
    /// applies to every session, so a reader starved of CPU on a busy machine would otherwise fall behind by more than the
    /// bound and lose messages by the very policy under test.
    /// </summary>
    private static async Task KeepUpAsync(SemaphoreSlim arrivals, int index, CancellationToken token)
    {
        if (index >= HealthyLag)
        {
            (await arrivals.WaitAsync(TimeSpan.FromSeconds(10), token)).ShouldBeTrue($"message {index - HealthyLag + 1} reached the healthy subscriber");
        }
    }

    /// <summary>Messages the healthy subscriber may be behind: 16 KB of 1,000-byte payloads, well inside both tests' bounds.</summary>
    private const int HealthyLag = 16;
}

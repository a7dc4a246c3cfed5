using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>The retained store's counts follow what it holds, so Mqtt:MaxRetainedBytes and Mqtt:MaxRetainedMessages refuse only what is really over.</summary>
public sealed class RetainedMessageStoreTests : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();

    public void Dispose() => _services.Dispose();

    [Fact]
    public void An_expired_retained_message_removed_by_a_subscribe_gives_its_bytes_back()
    {
        using var metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        var store = new MqttRetainedMessageStore(new MqttBrokerOptions { MaxRetainedBytes = 100 }, metrics);
        store.Store(Retained("room/1/old", 80, expiresAt: Environment.TickCount64 - 1));
        store.Bytes.ShouldBe(80);

        store.ForSubscription(new MqttSubscription { TopicFilter = "#" }, 0).ShouldBeEmpty("expired: not delivered, and removed");
        store.Count.ShouldBe(0);
        store.Bytes.ShouldBe(0);

        store.Store(Retained("room/1/new", 80, expiresAt: null));
        store.Count.ShouldBe(1, "80 bytes fit in 100 once the expired 80 are gone");
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedBytes)).ShouldBe(0);
    }

    [Fact]
    public void Replacing_and_clearing_a_topic_keeps_the_count_exact_and_the_limit_refuses_what_is_over()
    {
        using var metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        var store = new MqttRetainedMessageStore(new MqttBrokerOptions { MaxRetainedBytes = 100 }, metrics);
        store.Store(Retained("a", 60, null));
        store.Store(Retained("a", 30, null));
        store.Bytes.ShouldBe(30);
        store.Store(Retained("b", 80, null));
        store.Count.ShouldBe(1, "30 + 80 is over 100");
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedBytes)).ShouldBe(1);
        store.Store(Retained("a", 0, null));
        store.Bytes.ShouldBe(0);
        store.Count.ShouldBe(0);
    }

    [Fact]
    public void A_kept_topic_can_be_replaced_by_one_as_large_however_full_the_bytes_are()
    {
        // 60 kept of 100: a new 60-byte value for the same topic changes nothing in total. Reserving all of it before
        // giving the old 60 back refused it, and later subscribers were left with the old value.
        using var metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        var store = new MqttRetainedMessageStore(new MqttBrokerOptions { MaxRetainedBytes = 100 }, metrics);
        store.Store(Retained("a", 60, null));
        var newer = new MqttMessage { Topic = "a", Payload = Enumerable.Repeat((byte)7, 60).ToArray(), QoS = MqttQoS.AtLeastOnce, Retain = true };

        store.Store(newer);

        store.Bytes.ShouldBe(60);
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedBytes)).ShouldBe(0);
        store.ForSubscription(new MqttSubscription { TopicFilter = "#" }, 0).ShouldHaveSingleItem().Message.Payload.ToArray().ShouldAllBe(b => b == 7);
        store.Store(Retained("a", 101, null));
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedBytes)).ShouldBe(1, "a value larger than the whole budget is still refused");
        store.Bytes.ShouldBe(60);
    }

    [Fact]
    public void New_topics_stored_at_the_same_moment_never_pass_the_count()
    {
        // Eight publishers released together on a store with room for two, round after round: a check of the count
        // followed by a separate add let every one of them in (up to 8 kept); a slot reserved before the add does not.
        const int Publishers = 8;
        const int Rounds = 2_000;
        const int Limit = 2;
        using var metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        var options = new MqttBrokerOptions { MaxRetainedMessages = Limit };
        var store = new MqttRetainedMessageStore(options, metrics);
        int highest = 0;
        using var barrier = new Barrier(Publishers, _ =>
        {
            highest = Math.Max(highest, store.Count);
            store = new MqttRetainedMessageStore(options, metrics);
        });
        var publishers = Enumerable.Range(0, Publishers).Select(p => new Thread(() =>
        {
            for (int round = 0; round < Rounds; round++)
            {
                store.Store(Retained($"race/{p}", 1, null));
                barrier.SignalAndWait();
            }
        })).ToList();
        publishers.ForEach(t => t.Start());
        publishers.ForEach(t => t.Join());

        highest.ShouldBe(Limit);
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedMessages)).ShouldBe((long)Rounds * (Publishers - Limit));
    }

    [Fact]
    public void Racing_stores_and_clears_never_pass_the_count_and_every_freed_slot_is_taken_again()
    {
        // Stores and clears of the same topics racing: a store that loses a race on its topic gives its reserved slot
        // back, so when all is cleared the full count is free again.
        const int Limit = 50;
        using var metrics = new MqttBrokerMetrics(_services.GetRequiredService<IMeterFactory>());
        var store = new MqttRetainedMessageStore(new MqttBrokerOptions { MaxRetainedMessages = Limit }, metrics);
        int highest = 0;
        Parallel.For(0, 50_000, new ParallelOptions { MaxDegreeOfParallelism = 8, CancellationToken = TestContext.Current.CancellationToken }, i =>
        {
            store.Store(Retained($"race/{i % 400}", i % 7 == 0 ? 0 : 1, null));
            int count = store.Count;
            int seen;
            while (count > (seen = Volatile.Read(ref highest)) && Interlocked.CompareExchange(ref highest, count, seen) != seen)
            {
            }
        });

        highest.ShouldBeLessThanOrEqualTo(Limit);
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedMessages)).ShouldBeGreaterThan(0, "the bound was reached");
        for (int i = 0; i < 400; i++)
        {
            store.Store(Retained($"race/{i}", 0, null));
        }

        store.Count.ShouldBe(0);
        store.Bytes.ShouldBe(0);
        long hits = metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedMessages));
        for (int i = 0; i < Limit; i++)
        {
            store.Store(Retained($"after/{i}", 1, null));
        }

        store.Count.ShouldBe(Limit);
        metrics.LimitHits(nameof(MqttBrokerOptions.MaxRetainedMessages)).ShouldBe(hits, "every slot given back by a clear or a lost race can be taken again");
    }

    private static MqttMessage Retained(string topic, int bytes, long? expiresAt) => new()
    {
        Topic = topic,
        Payload = new byte[bytes],
        QoS = MqttQoS.AtLeastOnce,
        Retain = true,
        ExpiresAt = expiresAt,
    };
}

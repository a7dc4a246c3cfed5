using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>The retained store's byte count follows what it holds, so Mqtt:MaxRetainedBytes refuses only what is really over.</summary>
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

    private static MqttMessage Retained(string topic, int bytes, long? expiresAt) => new()
    {
        Topic = topic,
        Payload = new byte[bytes],
        QoS = MqttQoS.AtLeastOnce,
        Retain = true,
        ExpiresAt = expiresAt,
    };
}

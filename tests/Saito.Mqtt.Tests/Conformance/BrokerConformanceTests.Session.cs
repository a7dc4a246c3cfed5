using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>Session state: clean start, session expiry, message expiry.</summary>
public abstract partial class BrokerConformanceTests
{
    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Clean_start_discards_the_existing_session_and_its_subscriptions(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;
        await using (var first = await ConnectedAsync(version, clientId, cleanStart: version == V500, properties: persistent))
        {
            await SubscribeAsync(first, topic, QoS1);
            await first.DisconnectAsync();
        }

        await using var publisher = await ConnectedAsync(version);
        await PublishAsync(publisher, topic, "queued for the old session", QoS1);

        // 3.1.1 [MQTT-3.1.2-6] / 5.0 [MQTT-3.1.2-4]: Clean Start discards the session: no
        // Session Present, no queued messages, no subscriptions.
        await using var fresh = await OpenAsync();
        var connAck = await fresh.ConnectAsync(version, clientId, cleanStart: true, properties: persistent);
        connAck.SessionPresent.ShouldBeFalse();
        await fresh.ExpectNothingAsync();
        await PublishAsync(publisher, topic, "after the clean start", QoS1);
        await fresh.ExpectNothingAsync();
    }

    [Fact]
    public async Task Session_ends_with_the_connection_when_no_expiry_is_given_and_after_its_expiry_interval()
    {
        string topic = NewTopic();
        string clientId = NewClientId();

        // 5.0 section 3.1.2.11.2: absent Session Expiry Interval means 0, the session ends with
        // the network connection ([MQTT-3.1.2-23] only keeps it when the interval is above 0).
        await using (var first = await ConnectedAsync(V500, clientId))
        {
            await SubscribeAsync(first, topic, QoS1);
            await first.DisconnectAsync();
        }

        await using (var second = await OpenAsync())
        {
            (await second.ConnectAsync(V500, clientId, cleanStart: false, properties: SessionExpiry(1))).SessionPresent.ShouldBeFalse("expiry 0: gone at disconnect");
            await SubscribeAsync(second, topic, QoS1);
            await second.DisconnectAsync();
        }

        await using var publisher = await ConnectedAsync(V500);
        await PauseAsync(TimeSpan.FromSeconds(1) + TimerSlack);
        await PublishAsync(publisher, topic, "after expiry", QoS1);

        // 5.0 [MQTT-4.1.0-2]: the server discards the session once the connection is closed and
        // the Session Expiry Interval has passed: nothing to resume, nothing queued.
        await using var third = await OpenAsync();
        (await third.ConnectAsync(V500, clientId, cleanStart: false)).SessionPresent.ShouldBeFalse("expiry 1 s: gone after it");
        await third.ExpectNothingAsync();
    }

    [Fact]
    public async Task Expired_message_is_not_delivered_and_the_remaining_expiry_is_forwarded()
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        await using (var subscriber = await ConnectedAsync(V500, clientId, properties: SessionExpiry(60)))
        {
            await SubscribeAsync(subscriber, topic, QoS1);
            await subscriber.DisconnectAsync();
        }

        await using var publisher = await ConnectedAsync(V500);
        await PublishAsync(publisher, topic, "short-lived", QoS1, properties: new MqttProperties { MessageExpiryInterval = 1 });
        await PublishAsync(publisher, topic, "long-lived", QoS1, properties: new MqttProperties { MessageExpiryInterval = 60 });
        await PauseAsync(TimeSpan.FromSeconds(2.1));

        // [MQTT-3.3.2-5]: an expired message is not delivered to the subscriber it waited for.
        // [MQTT-3.3.2-6]: the one delivered carries the interval minus the time it waited (2.1 s).
        await using var resumed = await OpenAsync();
        (await resumed.ConnectAsync(V500, clientId, cleanStart: false, properties: SessionExpiry(60))).SessionPresent.ShouldBeTrue();
        var received = await ReceiveAllAsync(resumed);
        received.Select(Text).ShouldBe(["long-lived"]);
        var remaining = received[0].Properties.ShouldNotBeNull().MessageExpiryInterval.ShouldNotBeNull();
        remaining.ShouldBeInRange(50u, 58u);
    }
}

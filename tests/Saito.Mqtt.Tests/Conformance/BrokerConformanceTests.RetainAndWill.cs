using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>Retained messages and will messages.</summary>
public abstract partial class BrokerConformanceTests
{
    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Retained_message_is_stored_replaced_and_cleared_by_an_empty_payload(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var publisher = await ConnectedAsync(version);

        // Stored, and sent to a new subscriber with RETAIN 1.
        // 3.1.1 [MQTT-3.3.1-5], [MQTT-3.3.1-6], [MQTT-3.3.1-8]; 5.0 [MQTT-3.3.1-5], [MQTT-3.3.1-9].
        await PublishAsync(publisher, topic, "one", QoS1, retain: true);
        (await RetainedAtSubscribeAsync(version, topic)).ShouldBe(["one"]);

        // Replaced by the next retained message. 3.1.1 [MQTT-3.3.1-5] / 5.0 [MQTT-3.3.1-5].
        await PublishAsync(publisher, topic, "two", QoS1, retain: true);
        (await RetainedAtSubscribeAsync(version, topic)).ShouldBe(["two"]);

        // A message without RETAIN neither replaces nor removes it. 3.1.1 [MQTT-3.3.1-12] / 5.0 [MQTT-3.3.1-8].
        await PublishAsync(publisher, topic, "not retained", QoS1);
        (await RetainedAtSubscribeAsync(version, topic)).ShouldBe(["two"]);

        // An empty retained message goes to current subscribers as usual, removes the retained
        // message, and is not stored itself. 3.1.1 [MQTT-3.3.1-10], [MQTT-3.3.1-11];
        // 5.0 [MQTT-3.3.1-6], [MQTT-3.3.1-7].
        await using var current = await ConnectedAsync(version);
        await SubscribeAsync(current, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.DoNotSend });
        if (version == V311)
        {
            Text(await ReceiveAsync(current, topic)).ShouldBe("two"); // 3.1.1 has no retain handling
        }

        await PublishAsync(publisher, topic, string.Empty, QoS1, retain: true);
        var cleared = await ReceiveAsync(current, topic);
        cleared.Payload.Length.ShouldBe(0);
        (await RetainedAtSubscribeAsync(version, topic)).ShouldBeEmpty();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Will_is_published_when_the_connection_drops_without_disconnect(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var watcher = await ConnectedAsync(version);
        await SubscribeAsync(watcher, topic, QoS1);
        var will = new MqttWill
        {
            Topic = topic,
            Payload = Utf8("gone"),
            QoS = QoS1,
            Retain = true,
            Properties = version == V500 ? new MqttProperties { ContentType = "text/plain", UserProperties = [new("device", "d1"), new("site", "s1")] } : null,
        };
        var client = await ConnectedAsync(version, will: will);
        client.Abort();
        await client.DisposeAsync();

        // 3.1.1 [MQTT-3.1.2-8] / 5.0 [MQTT-3.1.2-8]: published when the connection closes without DISCONNECT.
        var message = await ReceiveAsync(watcher, topic);
        Text(message).ShouldBe("gone");
        message.QoS.ShouldBe(QoS1);
        if (version == V500)
        {
            // 5.0 [MQTT-3.1.3-10]: will user properties keep their order; the rest pass through.
            var properties = message.Properties.ShouldNotBeNull();
            properties.ContentType.ShouldBe("text/plain");
            properties.UserProperties.ShouldBe([new MqttUserProperty("device", "d1"), new MqttUserProperty("site", "s1")]);
        }

        // Will Retain 1: published as a retained message (3.1.1 [MQTT-3.1.2-17] / 5.0 [MQTT-3.1.2-15]).
        (await RetainedAtSubscribeAsync(version, topic)).ShouldBe(["gone"]);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Will_is_not_published_after_a_normal_disconnect(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var watcher = await ConnectedAsync(version);
        await SubscribeAsync(watcher, topic, QoS1);
        await using (var client = await ConnectedAsync(version, will: new MqttWill { Topic = topic, Payload = Utf8("gone"), QoS = QoS1 }))
        {
            await client.DisconnectAsync();
        }

        // 3.1.1 [MQTT-3.1.2-10], [MQTT-3.14.4-3]; 5.0 [MQTT-3.1.2-10], [MQTT-3.14.4-3].
        await watcher.ExpectNothingAsync();
    }

    [Fact]
    public async Task Will_is_published_after_disconnect_with_will_message()
    {
        string topic = NewTopic();
        await using var watcher = await ConnectedAsync(V500);
        await SubscribeAsync(watcher, topic, QoS1);
        await using (var client = await ConnectedAsync(V500, will: new MqttWill { Topic = topic, Payload = Utf8("asked for"), QoS = QoS1 }))
        {
            await client.DisconnectAsync(MqttReasonCode.DisconnectWithWillMessage);
        }

        // 5.0 section 3.14.2.1: reason 0x04 asks the server to publish the will; only 0x00 discards it ([MQTT-3.14.4-3]).
        Text(await ReceiveAsync(watcher, topic)).ShouldBe("asked for");
    }

    [Fact]
    public async Task Will_delay_holds_the_will_back_until_the_delay_has_passed()
    {
        string topic = NewTopic();
        await using var watcher = await ConnectedAsync(V500);
        await SubscribeAsync(watcher, topic, QoS1);
        var will = new MqttWill { Topic = topic, Payload = Utf8("late"), QoS = QoS1, Properties = new MqttProperties { WillDelayInterval = 1 } };
        var client = await ConnectedAsync(V500, properties: SessionExpiry(30), will: will);
        client.Abort();
        await client.DisposeAsync();

        // 5.0 [MQTT-3.1.2-8]: published once the Will Delay Interval has passed (or the session ended).
        await watcher.ExpectNothingAsync(TimeSpan.FromMilliseconds(700));
        Text(await ReceiveAsync(watcher, topic, TimeSpan.FromSeconds(1) + ArrivalSlack)).ShouldBe("late");
    }

    [Fact]
    public async Task Reconnecting_within_the_will_delay_cancels_the_will()
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        await using var watcher = await ConnectedAsync(V500);
        await SubscribeAsync(watcher, topic, QoS1);
        // A delay of 5 s: the reconnect below must come within it, and on a busy machine a connect can take over a second.
        var will = new MqttWill { Topic = topic, Payload = Utf8("never"), QoS = QoS1, Properties = new MqttProperties { WillDelayInterval = 5 } };
        var client = await ConnectedAsync(V500, clientId, properties: SessionExpiry(30), will: will);
        client.Abort();
        await client.DisposeAsync();

        // 5.0 [MQTT-3.1.3-9]: a new connection to the session before the delay has passed
        // means the will MUST NOT be sent (Clean Start 0 keeps the session; Clean Start 1 would
        // end it, and the will would go out at once).
        await using var back = await ConnectedAsync(V500, clientId, cleanStart: false, properties: SessionExpiry(30));
        await watcher.ExpectNothingAsync(TimeSpan.FromSeconds(5) + TimerSlack);
    }

    /// <summary>The payloads a new subscriber to <paramref name="topic"/> gets at once, each checked to carry RETAIN 1.</summary>
    private async Task<List<string>> RetainedAtSubscribeAsync(MqttProtocolVersion version, string topic)
    {
        await using var subscriber = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS1);
        var received = await ReceiveAllAsync(subscriber);
        received.ShouldAllBe(m => m.Retain, "retained messages sent at subscribe carry RETAIN 1 (3.1.1 [MQTT-3.3.1-8] / 5.0 section 3.3.1.3)");
        return [.. received.Select(Text)];
    }
}

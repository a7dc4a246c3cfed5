using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>MQTT 5.0 properties: topic aliases, maximum packet size, properties passed through.</summary>
public abstract partial class BrokerConformanceTests
{
    [Fact]
    public async Task Topic_alias_set_by_the_client_stands_for_its_topic_in_later_publishes()
    {
        string root = NewTopic();
        await using var subscriber = await ConnectedAsync(V500);
        await SubscribeAsync(subscriber, $"{root}/#", QoS1);
        await using var publisher = await OpenAsync();
        var connAck = await publisher.ConnectAsync(V500, NewClientId());
        connAck.ReasonCode.ShouldBe((byte)0);

        // [MQTT-3.2.2-18]: without a Topic Alias Maximum from the server, a client sends no aliases.
        ushort aliasMaximum = connAck.Properties?.TopicAliasMaximum ?? 0;
        Assert.SkipWhen(aliasMaximum == 0, "The broker accepts no topic aliases (no Topic Alias Maximum in its CONNACK)");

        // [MQTT-3.3.2-12]: the server accepts every alias from 1 to its maximum. A PUBLISH with a
        // topic and an alias sets the mapping; one with an empty topic uses it; a later PUBLISH
        // with a topic and the same alias replaces it (section 3.3.2.3.4).
        await PublishAsync(publisher, $"{root}/first", "set", QoS1, properties: new MqttProperties { TopicAlias = 1 });
        await PublishAsync(publisher, string.Empty, "used", QoS1, properties: new MqttProperties { TopicAlias = 1 });
        await PublishAsync(publisher, $"{root}/second", "replaced", QoS1, properties: new MqttProperties { TopicAlias = 1 });
        await PublishAsync(publisher, string.Empty, "used again", QoS1, properties: new MqttProperties { TopicAlias = 1 });
        await PublishAsync(publisher, $"{root}/highest", "highest", QoS1, properties: new MqttProperties { TopicAlias = aliasMaximum });
        await PublishAsync(publisher, string.Empty, "highest used", QoS1, properties: new MqttProperties { TopicAlias = aliasMaximum });

        // The subscriber asked for no aliases (no Topic Alias Maximum): it gets full topics
        // ([MQTT-3.1.2-27]).
        var received = await ReceiveAllAsync(subscriber);
        received.Select(m => (m.Topic, Text(m))).ShouldBe([
            ($"{root}/first", "set"), ($"{root}/first", "used"),
            ($"{root}/second", "replaced"), ($"{root}/second", "used again"),
            ($"{root}/highest", "highest"), ($"{root}/highest", "highest used")]);
        received.ShouldAllBe(m => m.Properties == null || m.Properties.TopicAlias == null);
    }

    [Fact]
    public async Task Message_too_large_for_the_client_maximum_packet_size_is_dropped_not_sent()
    {
        string topic = NewTopic();
        await using var small = await ConnectedAsync(V500, properties: new MqttProperties { MaximumPacketSize = 256 });
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(small, topic, QoS1);

        await PublishAsync(publisher, topic, new string('x', 1000), QoS1);
        await PublishAsync(publisher, topic, "fits", QoS1);

        // [MQTT-3.1.2-24]: the server MUST NOT send a packet above the client's Maximum Packet
        // Size; [MQTT-3.1.2-25]: it discards it (the connection stays up, later messages flow).
        var received = await ReceiveAllAsync(small);
        received.Select(Text).ShouldBe(["fits"]);
        await small.SendAsync(PingReqPacket.Instance);
        await small.ExpectAsync<PingRespPacket>();
    }

    [Fact]
    public async Task Message_dropped_for_the_client_maximum_packet_size_holds_no_receive_maximum_slot()
    {
        Assert.SkipWhen(DroppedMessageHoldsReceiveMaximumSlotDeviation is not null, DroppedMessageHoldsReceiveMaximumSlotDeviation ?? string.Empty);
        string topic = NewTopic();
        await using var small = await ConnectedAsync(V500, properties: new MqttProperties { MaximumPacketSize = 256, ReceiveMaximum = 1 });
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(small, topic, QoS1);

        await PublishAsync(publisher, topic, new string('x', 1000), QoS1);
        await PublishAsync(publisher, topic, "fits", QoS1);

        // [MQTT-3.1.2-25]: the server discards it "and then behave[s] as if it had completed
        // sending that Application Message": with Receive Maximum 1, the next message still comes.
        var received = await ReceiveAllAsync(small);
        received.Select(Text).ShouldBe(["fits"]);
    }

    [Fact]
    public async Task Publish_properties_are_forwarded_unaltered()
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(V500);
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(subscriber, topic, QoS1);
        byte[] correlation = [0x00, 0xFF, 0x10, 0x80];
        MqttUserProperty[] userProperties = [new("unit", "°C"), new("sensor", "a"), new("unit", "K"), new("empty", "")];
        await PublishAsync(publisher, topic, "21.5", QoS1, properties: new MqttProperties
        {
            PayloadFormatIndicator = 1,
            ContentType = "text/plain; charset=utf-8",
            ResponseTopic = $"{topic}/reply",
            CorrelationData = correlation,
            UserProperties = [.. userProperties],
        });

        // [MQTT-3.3.2-4] payload format indicator, [MQTT-3.3.2-15] response topic,
        // [MQTT-3.3.2-16] correlation data, [MQTT-3.3.2-17] user properties and
        // [MQTT-3.3.2-18] their order (duplicates included), [MQTT-3.3.2-20] content type.
        var message = await ReceiveAsync(subscriber, topic);
        var properties = message.Properties.ShouldNotBeNull();
        properties.PayloadFormatIndicator.ShouldBe((byte)1);
        properties.ContentType.ShouldBe("text/plain; charset=utf-8");
        properties.ResponseTopic.ShouldBe($"{topic}/reply");
        properties.CorrelationData.ShouldNotBeNull().ToArray().ShouldBe(correlation);
        properties.UserProperties.ShouldBe(userProperties);
        Text(message).ShouldBe("21.5");
    }
}

using System.Diagnostics;
using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>
/// Malformed packets and protocol errors: the offending connection is closed, and the broker
/// carries on serving everyone else.
/// </summary>
public abstract partial class BrokerConformanceTests
{
    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Remaining_length_longer_than_four_bytes_closes_the_connection(MqttProtocolVersion version)
    {
        await using var connection = await ConnectedAsync(version);
        await connection.SendRawAsync(new byte[] { 0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F });

        // The remaining length is at most four bytes (3.1.1 section 2.2.3 / 5.0 section 1.5.5);
        // a fifth is malformed: 3.1.1 [MQTT-4.8.0-1]; 5.0 [MQTT-4.13.1-1], 0x81.
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.MalformedPacket);
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311, "SUBSCRIBE with flags 0000")]
    [InlineData(V311, "UNSUBSCRIBE with flags 0000")]
    [InlineData(V311, "PUBLISH with QoS 3")]
    [InlineData(V311, "PUBREL with flags 0000")]
    [InlineData(V311, "PUBACK with flags 0001")]
    [InlineData(V311, "PINGREQ with flags 0001")]
    [InlineData(V500, "SUBSCRIBE with flags 0000")]
    [InlineData(V500, "UNSUBSCRIBE with flags 0000")]
    [InlineData(V500, "PUBLISH with QoS 3")]
    [InlineData(V500, "PUBREL with flags 0000")]
    [InlineData(V500, "PUBACK with flags 0001")]
    [InlineData(V500, "PINGREQ with flags 0001")]
    public async Task Reserved_fixed_header_flags_close_the_connection(MqttProtocolVersion version, string packet)
    {
        if (packet.StartsWith("PUBACK", StringComparison.Ordinal) || packet.StartsWith("PINGREQ", StringComparison.Ordinal))
        {
            Assert.SkipWhen(ReservedFlagsOfSimplePacketsDeviation is not null, ReservedFlagsOfSimplePacketsDeviation ?? string.Empty);
        }

        await using var connection = await ConnectedAsync(version);
        string topic = NewTopic();
        byte[] bytes = packet switch
        {
            "SUBSCRIBE with flags 0000" => connection.Encode(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic }] }),
            "UNSUBSCRIBE with flags 0000" => connection.Encode(new UnsubscribePacket { PacketId = 1, TopicFilters = [topic] }),
            "PUBLISH with QoS 3" => connection.Encode(new PublishPacket { Topic = topic, QoS = QoS1, PacketId = 1, Payload = Utf8("x") }),
            "PUBREL with flags 0000" => connection.Encode(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 1 }),
            "PUBACK with flags 0001" => connection.Encode(new PublishAckPacket(MqttPacketType.PubAck) { PacketId = 1 }),
            _ => connection.Encode(PingReqPacket.Instance),
        };
        bytes[0] = packet switch
        {
            "SUBSCRIBE with flags 0000" => 0x80,
            "UNSUBSCRIBE with flags 0000" => 0xA0,
            "PUBLISH with QoS 3" => 0x36,
            "PUBREL with flags 0000" => 0x60,
            "PUBACK with flags 0001" => 0x41,
            _ => 0xC1,
        };
        await connection.SendRawAsync(bytes);

        // Reserved flags must have their listed values; anything else is malformed and closes
        // the connection. 3.1.1 [MQTT-2.2.2-1], [MQTT-2.2.2-2], [MQTT-3.3.1-4], [MQTT-3.6.1-1],
        // [MQTT-3.8.1-1], [MQTT-3.10.1-1]; 5.0 [MQTT-2.1.3-1] and section 2.1.3 ("If invalid
        // flags are received it is a Malformed Packet"), [MQTT-3.3.1-4], [MQTT-3.6.1-1],
        // [MQTT-3.8.1-1], [MQTT-3.10.1-1], so DISCONNECT 0x81 if any.
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.MalformedPacket);
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311, "+")]
    [InlineData(V311, "#")]
    [InlineData(V500, "+")]
    [InlineData(V500, "#")]
    public async Task Wildcard_in_a_publish_topic_closes_the_connection_and_is_not_delivered(MqttProtocolVersion version, string wildcard)
    {
        string root = NewTopic();
        await using var watcher = await ConnectedAsync(version);
        await SubscribeAsync(watcher, $"{root}/#", QoS1);
        await using var connection = await ConnectedAsync(version);
        await connection.SendAsync(new PublishPacket { Topic = $"{root}/{wildcard}", QoS = QoS1, PacketId = 1, Payload = Utf8("wild") });

        // [MQTT-3.3.2-2] (both), 3.1.1 [MQTT-4.7.1-1] / 5.0 [MQTT-4.7.0-1]: no wildcards in a
        // topic name. 5.0: malformed (0x81), protocol error (0x82) or Topic Name invalid (0x90).
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.MalformedPacket, MqttReasonCode.ProtocolError, MqttReasonCode.TopicNameInvalid);
        await watcher.ExpectNothingAsync();
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311, "an ill-formed sequence")]
    [InlineData(V311, "an encoded surrogate")]
    [InlineData(V311, "U+0000")]
    [InlineData(V500, "an ill-formed sequence")]
    [InlineData(V500, "an encoded surrogate")]
    [InlineData(V500, "U+0000")]
    public async Task Topic_that_is_not_valid_utf8_closes_the_connection(MqttProtocolVersion version, string flaw)
    {
        string root = NewTopic();
        await using var watcher = await ConnectedAsync(version);
        await SubscribeAsync(watcher, $"{root}/#", QoS1);
        await using var connection = await ConnectedAsync(version);
        byte[] bad = flaw switch
        {
            "an ill-formed sequence" => [0xC3, 0x28],
            "an encoded surrogate" => [0xED, 0xA0, 0x80], // U+D800
            _ => [0x00],
        };
        await connection.SendRawAsync(RawPublish(version, [.. Encoding.UTF8.GetBytes($"{root}/"), .. bad], packetId: 1, payload: "bad topic"));

        // 3.1.1 [MQTT-1.5.3-1], [MQTT-1.5.3-2]: the receiver MUST close the connection.
        // 5.0 [MQTT-1.5.4-1], [MQTT-1.5.4-2]: a Malformed Packet (0x81).
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.MalformedPacket);
        await watcher.ExpectNothingAsync();
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Packet_larger_than_the_broker_maximum_packet_size_closes_the_connection(MqttProtocolVersion version)
    {
        if (BrokerWithMaximumPacketSize is not { } limited)
        {
            Assert.Skip("The subclass provides no broker with a known maximum packet size");
            return;
        }

        string topic = NewTopic();
        await using var connection = await OpenAsync(limited.Endpoint);
        var connAck = await connection.ConnectAsync(version, NewClientId());
        connAck.ReasonCode.ShouldBe((byte)0);
        if (version == V500)
        {
            // 5.0 section 3.2.2.3.6: absent means no limit, so a server with one announces it.
            connAck.Properties.ShouldNotBeNull().MaximumPacketSize.ShouldBe((uint)limited.MaximumPacketSize);
        }

        // A packet of exactly the maximum size is accepted ...
        // (The remaining length grows from one to two bytes with the payload, so the size is found, not subtracted.)
        int payloadLength = limited.MaximumPacketSize - MqttPacketEncoder.PublishSize(version, topic, 0, QoS1, null);
        while (MqttPacketEncoder.PublishSize(version, topic, payloadLength, QoS1, null) > limited.MaximumPacketSize)
        {
            payloadLength--;
        }

        MqttPacketEncoder.PublishSize(version, topic, payloadLength, QoS1, null).ShouldBe(limited.MaximumPacketSize);
        await PublishAsync(connection, topic, new string('a', payloadLength), QoS1);

        // ... a larger one is not: 5.0 [MQTT-3.2.2-15] forbids the client to send it, and
        // section 4.13 makes it a protocol error answered with DISCONNECT 0x95 Packet too large.
        // 3.1.1 has no maximum packet size; a broker with a limit closes the connection.
        await connection.TrySendRawAsync(connection.Encode(new PublishPacket
        {
            Topic = topic,
            QoS = QoS1,
            PacketId = connection.NextPacketId(),
            Payload = new byte[limited.MaximumPacketSize + 100],
        }));
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.PacketTooLarge);
        await AssertBrokerStillServesAsync(version, limited.Endpoint);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Half_a_packet_then_silence_is_closed_by_keep_alive(MqttProtocolVersion version)
    {
        Assert.SkipWhen(KeepAliveDeviation is not null, KeepAliveDeviation ?? string.Empty);
        await using var connection = await ConnectedAsync(version, keepAliveSeconds: 1);
        var clock = Stopwatch.StartNew();
        await connection.SendRawAsync(new byte[] { 0x30, 0x64, 0x00, 0x05, (byte)'a' }); // a PUBLISH promising 100 bytes, 3 sent

        // A part of a packet is not a packet: 3.1.1 [MQTT-3.1.2-24] / 5.0 [MQTT-3.1.2-22] close
        // the connection 1.5 x Keep Alive after the last whole one (5.0 may say 0x8D first).
        await ExpectClosedForErrorAsync(connection, TimeSpan.FromSeconds(1.5) + ArrivalSlack, MqttReasonCode.KeepAliveTimeout);
        clock.Elapsed.ShouldBeGreaterThan(TimeSpan.FromSeconds(1), "closed before even one keep-alive period passed");
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData((ushort)0)]
    [InlineData(ushort.MaxValue)]
    public async Task Topic_alias_of_zero_or_above_the_broker_maximum_closes_the_connection(ushort alias)
    {
        await using var connection = await OpenAsync();
        var connAck = await connection.ConnectAsync(V500, NewClientId());
        connAck.ReasonCode.ShouldBe((byte)0);
        ushort maximum = connAck.Properties?.TopicAliasMaximum ?? 0;
        alias.ShouldNotBeInRange((ushort)1, maximum, "the test needs an alias the broker does not accept");
        await connection.SendAsync(new PublishPacket { Topic = NewTopic(), QoS = QoS1, PacketId = 1, Payload = Utf8("x"), Properties = new MqttProperties { TopicAlias = alias } });

        // 5.0 [MQTT-3.3.2-8] (no alias 0), [MQTT-3.2.2-17] (none above the maximum). Above the
        // maximum is what 0x94 Topic Alias invalid names (section 2.4); for 0 the standard names
        // no code, so Malformed Packet (0x81) is as right as 0x82 or 0x94.
        if (alias == 0)
        {
            await ExpectClosedForErrorAsync(connection, MqttReasonCode.TopicAliasInvalid, MqttReasonCode.ProtocolError, MqttReasonCode.MalformedPacket);
        }
        else
        {
            await ExpectClosedForErrorAsync(connection, MqttReasonCode.TopicAliasInvalid, MqttReasonCode.ProtocolError);
        }

        await AssertBrokerStillServesAsync(V500);
    }

    [Fact]
    public async Task Empty_topic_with_an_alias_never_set_closes_the_connection()
    {
        await using var connection = await OpenAsync();
        var connAck = await connection.ConnectAsync(V500, NewClientId());
        Assert.SkipWhen((connAck.Properties?.TopicAliasMaximum ?? 0) == 0, "The broker accepts no topic aliases");
        await connection.SendAsync(new PublishPacket { Topic = string.Empty, QoS = QoS1, PacketId = 1, Payload = Utf8("x"), Properties = new MqttProperties { TopicAlias = 1 } });

        // 5.0 section 3.3.2.3.4: an empty topic needs an alias the receiver has a mapping for;
        // anything else is a protocol error.
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.ProtocolError, MqttReasonCode.TopicAliasInvalid);
        await AssertBrokerStillServesAsync(V500);
    }

    /// <summary>A QoS 1 PUBLISH with the topic given as raw bytes (which may be anything but UTF-8).</summary>
    private static byte[] RawPublish(MqttProtocolVersion version, byte[] topic, ushort packetId, string payload)
    {
        var body = new List<byte> { (byte)(topic.Length >> 8), (byte)topic.Length };
        body.AddRange(topic);
        body.Add((byte)(packetId >> 8));
        body.Add((byte)packetId);
        if (version == V500)
        {
            body.Add(0); // no properties
        }

        body.AddRange(Encoding.UTF8.GetBytes(payload));
        body.Count.ShouldBeLessThan(128, "one-byte remaining length");
        return [0x32, (byte)body.Count, .. body];
    }
}

using System.Buffers;
using System.Text;
using Saito.Mqtt.Packets;
using static Saito.Mqtt.Packets.MqttProtocolVersion;
using static Saito.Mqtt.Packets.MqttReasonCode;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Hand-written bytes for each way a peer can break the standard, and the reason code the codec
/// refuses them with (the one an MQTT 5.0 peer is told in DISCONNECT or CONNACK). Section numbers
/// and rule ids are from OASIS MQTT 3.1.1 and 5.0.
/// </summary>
public sealed class MalformedPacketTests
{
    // ---- Fixed header and framing (section 2.1, 2.2) --------------------------------------------

    [Fact]
    public void Remaining_length_longer_than_four_bytes_is_refused_as_malformed()
    {
        Wire.Refuse([0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], V500).ReasonCode.ShouldBe(MalformedPacket);

        // Refused as soon as the fifth length byte is in, not left waiting for more data.
        Wire.Refuse([0x30, 0x80, 0x80, 0x80, 0x80], V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Packet_larger_than_the_maximum_packet_size_is_refused_from_its_fixed_header_before_the_body_arrives()
    {
        // Only the fixed header of a PUBLISH announcing 65,536 bytes has arrived.
        var buffer = new ReadOnlySequence<byte>([0x30, 0x80, 0x80, 0x04]);
        var refused = Should.Throw<MqttProtocolException>(() => MqttFrameReader.TryRead(ref buffer, 1024, out _));
        refused.ReasonCode.ShouldBe(PacketTooLarge);
    }

    [Fact]
    public void Packet_of_exactly_the_maximum_packet_size_is_accepted_and_one_byte_more_is_refused()
    {
        byte[] packet = Packet(0x30, Str("t"), new byte[10]); // 2 + 3 + 10 = 15 bytes
        var buffer = new ReadOnlySequence<byte>(packet);
        MqttFrameReader.TryRead(ref buffer, 15, out var frame).ShouldBeTrue();
        frame.Size.ShouldBe(15);

        Wire.Refuse(packet, V311, maxPacketSize: 14).ReasonCode.ShouldBe(PacketTooLarge);
    }

    [Theory]
    [InlineData(0x80)]
    [InlineData(0x81)]
    [InlineData(0x83)]
    [InlineData(0x84)]
    [InlineData(0x88)]
    [InlineData(0x8F)]
    public void Subscribe_with_fixed_header_flags_other_than_0010_is_refused_as_malformed(byte header)
    {
        Wire.Refuse(Packet(header, U16(1), Str("a/b"), [0x01]), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData(0xA0)]
    [InlineData(0xA3)]
    [InlineData(0x60)]
    [InlineData(0x63)]
    public void Unsubscribe_and_pubrel_with_fixed_header_flags_other_than_0010_are_refused_as_malformed(byte header)
    {
        byte[] body = header >> 4 == (int)MqttPacketType.Unsubscribe ? [.. U16(1), .. Str("a")] : U16(1);
        Wire.Refuse(Packet(header, body), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData(0xC1)] // PINGREQ
    [InlineData(0xC8)]
    [InlineData(0xD2)] // PINGRESP
    [InlineData(0x11)] // CONNECT
    [InlineData(0x24)] // CONNACK
    [InlineData(0x41)] // PUBACK
    [InlineData(0x52)] // PUBREC
    [InlineData(0x78)] // PUBCOMP
    [InlineData(0x92)] // SUBACK
    [InlineData(0xB2)] // UNSUBACK
    [InlineData(0xE1)] // DISCONNECT
    [InlineData(0xF4)] // AUTH
    public void Packet_with_reserved_fixed_header_flags_set_is_refused_as_malformed(byte header)
    {
        Wire.Refuse([header, 0x00], V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Packet_type_0_is_reserved_and_refused_as_malformed()
    {
        Wire.Refuse([0x00, 0x00], V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData(0x36)]
    [InlineData(0x37)]
    [InlineData(0x3E)]
    public void Publish_with_QoS_3_is_refused_as_malformed(byte header)
    {
        Wire.Refuse(Packet(header, Str("t"), U16(1), [0x00]), V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Publish_with_QoS_0_and_DUP_set_is_refused_as_malformed()
    {
        Wire.Refuse(Packet(0x38, Str("t")), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    // ---- Strings and topic names (sections 1.5.4, 4.7) ------------------------------------------

    public static TheoryData<string, byte[]> InvalidUtf8 => new()
    {
        { "overlong encoding of U+0000", [0x61, 0xC0, 0x80] },
        { "overlong encoding of '/'", [0xE0, 0x80, 0xAF] },
        { "UTF-16 surrogate U+D800", [0xED, 0xA0, 0x80] },
        { "lone continuation byte", [0x61, 0x80] },
        { "byte 0xFF", [0xFF] },
        { "sequence cut short", [0x61, 0xE4, 0xB8] },
        { "code point above U+10FFFF", [0xF4, 0x90, 0x80, 0x80] },
    };

    [Theory]
    [MemberData(nameof(InvalidUtf8))]
    public void Publish_with_invalid_UTF8_in_its_topic_is_refused_as_malformed(string what, byte[] topic)
    {
        foreach (var version in PacketGenerators.Versions)
        {
            Wire.Refuse(Packet(0x30, U16(topic.Length), topic, Props(version)), version).ReasonCode.ShouldBe(MalformedPacket, what);
        }
    }

    [Fact]
    public void Publish_with_U0000_in_its_topic_is_refused_as_malformed()
    {
        Wire.Refuse(Packet(0x30, Str("a\0b"), Props(V500)), V500).ReasonCode.ShouldBe(MalformedPacket);
        Wire.Refuse(Packet(0x30, Str("a\0b")), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Connect_with_invalid_UTF8_in_its_client_identifier_is_refused_as_malformed()
    {
        Wire.Refuse(Packet(0x10, Str("MQTT"), [0x04, 0x02], U16(60), U16(2), [0xC3, 0x28]), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void User_property_with_U0000_is_refused_as_malformed()
    {
        byte[] property = [0x26, .. Str("k\0"), .. Str("v")];
        Wire.Refuse(Packet(0x30, Str("t"), [(byte)property.Length], property), V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData("a/+")]
    [InlineData("+")]
    [InlineData("a/#")]
    [InlineData("#")]
    [InlineData("a+b")]
    public void Publish_with_a_wildcard_in_its_topic_is_refused_as_topic_name_invalid(string topic)
    {
        Wire.Refuse(Packet(0x30, Str(topic)), V311).ReasonCode.ShouldBe(TopicNameInvalid);
        Wire.Refuse(Packet(0x30, Str(topic), Props(V500)), V500).ReasonCode.ShouldBe(TopicNameInvalid);
    }

    [Fact]
    public void Publish_with_an_empty_topic_is_refused_as_topic_name_invalid_in_311()
    {
        Wire.Refuse(Packet(0x30, Str(""), [0x42]), V311).ReasonCode.ShouldBe(TopicNameInvalid);
    }

    [Fact]
    public void Publish_with_an_empty_topic_and_no_topic_alias_is_refused_as_protocol_error_in_5()
    {
        // "It is a Protocol Error if the Topic Name is zero length and there is no Topic Alias" (5.0, 3.3.2.1).
        Wire.Refuse(Packet(0x30, Str(""), [0x00], [0x42]), V500).ReasonCode.ShouldBe(ProtocolError);
    }

    [Fact]
    public void Publish_with_an_empty_topic_and_a_topic_alias_is_accepted_in_5()
    {
        var publish = (PublishPacket)Wire.DecodeSingle(Packet(0x30, Str(""), [0x03, 0x23, 0x00, 0x07], [0x42]), V500);
        publish.Topic.ShouldBe(string.Empty);
        publish.Properties!.TopicAlias.ShouldBe((ushort)7);
    }

    [Fact]
    public void Publish_with_topic_alias_0_is_refused_as_topic_alias_invalid()
    {
        // "A Topic Alias of 0 is not permitted" [MQTT-3.3.2-8]; the receiver answers 0x94 (5.0, 3.3.2.3.4).
        Wire.Refuse(Packet(0x30, Str("t"), [0x03, 0x23, 0x00, 0x00]), V500).ReasonCode.ShouldBe(TopicAliasInvalid);
    }

    // ---- Packet identifiers (section 2.2.1) ------------------------------------------------------

    public static TheoryData<string, MqttProtocolVersion, byte[]> PacketsWithPacketIdentifierZero()
    {
        var data = new TheoryData<string, MqttProtocolVersion, byte[]>();
        foreach (var v in PacketGenerators.Versions)
        {
            data.Add("PUBLISH QoS 1", v, Packet(0x32, Str("t"), U16(0), Props(v)));
            data.Add("PUBLISH QoS 2", v, Packet(0x34, Str("t"), U16(0), Props(v)));
            data.Add("PUBACK", v, Packet(0x40, U16(0)));
            data.Add("PUBREC", v, Packet(0x50, U16(0)));
            data.Add("PUBREL", v, Packet(0x62, U16(0)));
            data.Add("PUBCOMP", v, Packet(0x70, U16(0)));
            data.Add("SUBSCRIBE", v, Packet(0x82, U16(0), Props(v), Str("a"), [0x01]));
            data.Add("SUBACK", v, Packet(0x90, U16(0), Props(v), [0x01]));
            data.Add("UNSUBSCRIBE", v, Packet(0xA2, U16(0), Props(v), Str("a")));
            data.Add("UNSUBACK", v, Packet(0xB0, U16(0), Props(v), v == V500 ? [0x00] : []));
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(PacketsWithPacketIdentifierZero))]
    public void Packet_identifier_0_is_refused_as_protocol_error(string packet, MqttProtocolVersion version, byte[] bytes)
    {
        Wire.Refuse(bytes, version).ReasonCode.ShouldBe(ProtocolError, packet);
    }

    // ---- CONNECT (section 3.1) -------------------------------------------------------------------

    [Theory]
    [InlineData(4)]
    [InlineData(5)]
    public void Connect_with_the_reserved_flag_set_is_refused_as_malformed(byte level)
    {
        Wire.Refuse(Connect(level, flags: 0x03), V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData("MQTT", 3)]
    [InlineData("MQTT", 6)]
    [InlineData("MQTT", 0)]
    [InlineData("MQTT", 255)]
    [InlineData("MQIsdp", 3)]
    [InlineData("mqtt", 4)]
    public void Connect_with_an_unsupported_protocol_is_refused_as_unsupported_protocol_version(string name, byte level)
    {
        byte[] bytes = Packet(0x10, Str(name), [level, 0x02], U16(60), Str("c"));
        var refused = Should.Throw<MqttUnsupportedProtocolException>(() => Wire.DecodeSingle(bytes, V500));
        refused.ReasonCode.ShouldBe(UnsupportedProtocolVersion);
        refused.ProtocolName.ShouldBe(name);
        refused.Level.ShouldBe(level);
    }

    [Fact]
    public void Connect_with_will_QoS_3_is_refused_as_malformed()
    {
        Wire.Refuse(Connect(4, flags: 0x1E, Str("w"), Str("bye")), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Theory]
    [InlineData(0x22)] // will retain without a will
    [InlineData(0x0A)] // will QoS 1 without a will
    public void Connect_with_will_options_but_no_will_is_refused_as_malformed(byte flags)
    {
        Wire.Refuse(Connect(4, flags), V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Connect_with_a_password_but_no_user_name_is_refused_as_malformed_in_311_and_accepted_in_5()
    {
        Wire.Refuse(Connect(4, flags: 0x42, Str("secret")), V311).ReasonCode.ShouldBe(MalformedPacket);

        var connect = (ConnectPacket)Wire.DecodeSingle(Connect(5, flags: 0x42, Str("secret")), V500);
        connect.UserName.ShouldBeNull();
        connect.Password!.Value.ToArray().ShouldBe("secret"u8.ToArray());
    }

    [Fact]
    public void Connect_with_a_wildcard_in_its_will_topic_is_refused_as_topic_name_invalid()
    {
        Wire.Refuse(Connect(4, flags: 0x06, Str("w/#"), Str("bye")), V311).ReasonCode.ShouldBe(TopicNameInvalid);
    }

    [Fact]
    public void Connect_with_authentication_data_but_no_authentication_method_is_refused_as_protocol_error()
    {
        // "It is a Protocol Error to include Authentication Data if there is no Authentication Method" (5.0, 3.1.2.11.10).
        byte[] properties = [0x16, .. U16(2), 0xAB, 0xCD];
        byte[] bytes = Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [(byte)properties.Length], properties, Str("c"));
        Wire.Refuse(bytes, V500).ReasonCode.ShouldBe(ProtocolError);
    }

    [Fact]
    public void Connack_with_reserved_acknowledge_flags_set_is_refused_as_malformed()
    {
        Wire.Refuse([0x20, 0x02, 0x02, 0x00], V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    // ---- Properties (5.0 section 2.2.2) ----------------------------------------------------------

    public static TheoryData<string, byte[]> PropertiesGivenTwice => new()
    {
        { "PUBLISH message expiry interval", Packet(0x30, Str("t"), [10, 0x02, 0, 0, 0, 1, 0x02, 0, 0, 0, 2]) },
        { "PUBLISH topic alias", Packet(0x30, Str("t"), [6, 0x23, 0, 1, 0x23, 0, 2]) },
        { "CONNECT session expiry interval", Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [10, 0x11, 0, 0, 0, 1, 0x11, 0, 0, 0, 1], Str("c")) },
        { "PUBACK reason string", Packet(0x40, U16(1), [0x10, 8, 0x1F, .. Str("a"), 0x1F, .. Str("b")]) },
        { "SUBSCRIBE subscription identifier", Packet(0x82, U16(1), [4, 0x0B, 1, 0x0B, 2], Str("a"), [0x00]) },
    };

    [Theory]
    [MemberData(nameof(PropertiesGivenTwice))]
    public void Property_given_twice_is_refused_as_protocol_error(string what, byte[] bytes)
    {
        Wire.Refuse(bytes, V500).ReasonCode.ShouldBe(ProtocolError, what);
    }

    [Fact]
    public void User_property_given_twice_is_accepted_with_both_values_in_order()
    {
        byte[] properties = [0x26, .. Str("k"), .. Str("1"), 0x26, .. Str("k"), .. Str("2")];
        var publish = (PublishPacket)Wire.DecodeSingle(Packet(0x30, Str("t"), [(byte)properties.Length], properties), V500);
        publish.Properties!.UserProperties.ShouldBe([new MqttUserProperty("k", "1"), new MqttUserProperty("k", "2")]);
    }

    public static TheoryData<string, byte[]> PropertiesNotAllowedInThePacket => new()
    {
        { "session expiry interval in PUBLISH", Packet(0x30, Str("t"), [5, 0x11, 0, 0, 0, 1]) },
        { "topic alias in CONNECT", Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [3, 0x23, 0, 1], Str("c")) },
        { "session expiry interval among will properties", Packet(0x10, Str("MQTT"), [0x05, 0x06], U16(60), [0], Str("c"), [5, 0x11, 0, 0, 0, 1], Str("w"), Str("x")) },
        { "content type in PUBACK", Packet(0x40, U16(1), [0x00, 4, 0x03, .. Str("a")]) },
        { "authentication method in DISCONNECT", Packet(0xE0, [0x00, 4, 0x15, .. Str("a")]) },
        { "subscription identifier in UNSUBSCRIBE", Packet(0xA2, U16(1), [2, 0x0B, 1], Str("a")) },
        { "unknown property 0x7F", Packet(0x30, Str("t"), [2, 0x7F, 0]) },
        { "unknown property 0x00", Packet(0x30, Str("t"), [2, 0x00, 0]) },
    };

    [Theory]
    [MemberData(nameof(PropertiesNotAllowedInThePacket))]
    public void Property_not_allowed_in_the_packet_type_is_refused_as_malformed(string what, byte[] bytes)
    {
        // "A Control Packet which contains an Identifier which is not valid for its packet type ...
        // is a Malformed Packet" (5.0, 2.2.2.2).
        Wire.Refuse(bytes, V500).ReasonCode.ShouldBe(MalformedPacket, what);
    }

    public static TheoryData<string, byte[]> PropertiesOutOfRange => new()
    {
        { "payload format indicator 2", Packet(0x30, Str("t"), [2, 0x01, 2]) },
        { "subscription identifier 0", Packet(0x82, U16(1), [2, 0x0B, 0], Str("a"), [0x00]) },
        { "receive maximum 0", Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [3, 0x21, 0, 0], Str("c")) },
        { "maximum packet size 0", Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [5, 0x27, 0, 0, 0, 0], Str("c")) },
        { "maximum QoS 2", Packet(0x20, [0x00, 0x00], [2, 0x24, 2]) },
        { "request problem information 2", Packet(0x10, Str("MQTT"), [0x05, 0x02], U16(60), [2, 0x17, 2], Str("c")) },
        { "response topic with a wildcard", Packet(0x30, Str("t"), [6, 0x08, .. Str("r/#")]) },
    };

    [Theory]
    [MemberData(nameof(PropertiesOutOfRange))]
    public void Property_with_a_value_the_standard_forbids_is_refused_as_protocol_error(string what, byte[] bytes)
    {
        Wire.Refuse(bytes, V500).ReasonCode.ShouldBe(ProtocolError, what);
    }

    [Theory]
    [InlineData(new byte[] { 0x80, 0x00 })]
    [InlineData(new byte[] { 0x82, 0x80, 0x00 })]
    public void Variable_byte_integer_longer_than_it_needs_to_be_is_refused_as_malformed(byte[] propertyLength)
    {
        // "The encoded value MUST use the minimum number of bytes necessary to represent the value" [MQTT-1.5.5-1].
        byte[] properties = propertyLength.Length == 2 ? [] : [0x01, 0x01];
        Wire.Refuse(Packet(0x30, Str("t"), propertyLength, properties), V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Properties_that_run_past_their_declared_length_are_refused_as_malformed()
    {
        // Property length 2, but a message expiry interval takes 5 bytes; the payload supplies the rest.
        Wire.Refuse(Packet(0x30, Str("t"), [2, 0x02, 0, 0, 0, 1]), V500).ReasonCode.ShouldBe(MalformedPacket);
    }

    // ---- Bytes too many, bytes too few -----------------------------------------------------------

    public static TheoryData<string, MqttProtocolVersion, byte[]> PacketsWithTrailingBytes => new()
    {
        { "CONNECT", V311, Connect(4, 0x02, [0x00]) },
        { "CONNECT 5.0", V500, Connect(5, 0x02, [0x00]) },
        { "CONNACK", V311, [0x20, 0x03, 0x00, 0x00, 0x00] },
        { "CONNACK 5.0", V500, [0x20, 0x04, 0x00, 0x00, 0x00, 0x00] },
        { "PUBACK 3.1.1 with a reason code", V311, [0x40, 0x03, 0x00, 0x01, 0x00] },
        { "PUBREL 5.0 after its properties", V500, [0x62, 0x05, 0x00, 0x01, 0x00, 0x00, 0xFF] },
        { "UNSUBACK 3.1.1", V311, [0xB0, 0x03, 0x00, 0x01, 0x00] },
        { "DISCONNECT 3.1.1 with a reason code", V311, [0xE0, 0x01, 0x00] },
        { "DISCONNECT 5.0 after its properties", V500, [0xE0, 0x03, 0x00, 0x00, 0x00] },
        { "PINGREQ with a body", V311, [0xC0, 0x01, 0x00] },
        { "PINGRESP with a body", V500, [0xD0, 0x01, 0x00] },
        { "AUTH after its properties", V500, [0xF0, 0x03, 0x18, 0x00, 0x00] },
    };

    [Theory]
    [MemberData(nameof(PacketsWithTrailingBytes))]
    public void Bytes_after_the_last_field_are_refused_as_malformed(string packet, MqttProtocolVersion version, byte[] bytes)
    {
        Wire.Refuse(bytes, version).ReasonCode.ShouldBe(MalformedPacket, packet);
    }

    public static TheoryData<string, MqttProtocolVersion, byte[]> PacketsCutShort => new()
    {
        { "PUBLISH with no topic length", V311, [0x30, 0x00] },
        { "PUBLISH topic longer than the packet", V311, [0x30, 0x04, 0x00, 0x05, 0x61, 0x62] },
        { "PUBLISH QoS 1 without its packet identifier", V311, [0x32, 0x03, 0x00, 0x01, 0x74] },
        { "PUBLISH 5.0 without its property length", V500, [0x30, 0x03, 0x00, 0x01, 0x74] },
        { "PUBLISH 5.0 property length past the end", V500, [0x30, 0x05, 0x00, 0x01, 0x74, 0x09, 0x01] },
        { "PUBLISH 5.0 subscription identifier cut inside", V500, [0x30, 0x06, 0x00, 0x01, 0x74, 0x02, 0x0B, 0x80] },
        { "PUBLISH 5.0 correlation data longer than its properties", V500, [0x30, 0x09, 0x00, 0x01, 0x74, 0x04, 0x09, 0x00, 0x05, 0x01, 0x02] },
        { "PUBACK with one byte", V311, [0x40, 0x01, 0x00] },
        { "CONNACK with one byte", V311, [0x20, 0x01, 0x00] },
        { "CONNECT cut after its protocol name", V311, Packet(0x10, Str("MQTT")) },
        { "CONNECT with the user name flag and no user name", V311, Connect(4, 0x82) },
        { "CONNECT with the will flag and no will payload", V311, Connect(4, 0x06, Str("w")) },
        { "SUBSCRIBE filter without its options byte", V311, Packet(0x82, U16(1), Str("a")) },
        { "AUTH with a reason code and no property length", V500, [0xF0, 0x01, 0x18] },
    };

    [Theory]
    [MemberData(nameof(PacketsCutShort))]
    public void Field_cut_short_by_the_remaining_length_is_refused_as_malformed(string packet, MqttProtocolVersion version, byte[] bytes)
    {
        Wire.Refuse(bytes, version).ReasonCode.ShouldBe(MalformedPacket, packet);
    }

    // ---- SUBSCRIBE, UNSUBSCRIBE, AUTH (sections 3.8, 3.10, 3.15) ---------------------------------

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public void Subscribe_with_no_topic_filters_is_refused_as_protocol_error(MqttProtocolVersion version)
    {
        Wire.Refuse(Packet(0x82, U16(1), Props(version)), version).ReasonCode.ShouldBe(ProtocolError);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public void Unsubscribe_with_no_topic_filters_is_refused_as_protocol_error(MqttProtocolVersion version)
    {
        Wire.Refuse(Packet(0xA2, U16(1), Props(version)), version).ReasonCode.ShouldBe(ProtocolError);
    }

    [Theory]
    [InlineData(V311, 0x04)] // No Local does not exist in 3.1.1
    [InlineData(V311, 0x80)]
    [InlineData(V500, 0x40)]
    [InlineData(V500, 0x80)]
    public void Subscribe_options_with_reserved_bits_set_are_refused_as_malformed(MqttProtocolVersion version, byte options)
    {
        // [MQTT-3.8.3-4] (3.1.1), [MQTT-3.8.3-5] (5.0).
        Wire.Refuse(Packet(0x82, U16(1), Props(version), Str("a"), [options]), version).ReasonCode.ShouldBe(MalformedPacket);
    }

    [Fact]
    public void Subscribe_options_asking_for_QoS_3_are_refused_as_malformed_in_311_and_protocol_error_in_5()
    {
        // 3.1.1 treats it as malformed [MQTT-3-8.3-4]; "It is a Protocol Error if the Maximum QoS field has the value 3" (5.0, 3.8.3.1).
        Wire.Refuse(Packet(0x82, U16(1), Str("a"), [0x03]), V311).ReasonCode.ShouldBe(MalformedPacket);
        Wire.Refuse(Packet(0x82, U16(1), [0x00], Str("a"), [0x03]), V500).ReasonCode.ShouldBe(ProtocolError);
    }

    [Fact]
    public void Subscribe_options_with_retain_handling_3_are_refused_as_protocol_error()
    {
        // "It is a Protocol Error to send a Retain Handling value of 3" (5.0, 3.8.3.1).
        Wire.Refuse(Packet(0x82, U16(1), [0x00], Str("a"), [0x31]), V500).ReasonCode.ShouldBe(ProtocolError);
    }

    [Fact]
    public void Auth_is_refused_as_malformed_in_311()
    {
        Wire.Refuse([0xF0, 0x00], V311).ReasonCode.ShouldBe(MalformedPacket);
    }

    // ---- Byte builders ---------------------------------------------------------------------------

    /// <summary>A packet: the header byte, the remaining length, then the parts.</summary>
    internal static byte[] Packet(byte header, params byte[][] parts)
    {
        byte[] body = [.. parts.SelectMany(p => p)];
        return [header, .. VariableByteInteger(body.Length), .. body];
    }

    /// <summary>A CONNECT with client id "c" and the given flags, then whatever fields follow.</summary>
    private static byte[] Connect(byte level, byte flags, params byte[][] rest) =>
        Packet(0x10, [.. Str("MQTT"), level, flags, .. U16(60), .. Props(level == 5 ? V500 : V311), .. Str("c"), .. rest.SelectMany(p => p)]);

    /// <summary>An empty property set in 5.0, nothing in 3.1.1.</summary>
    private static byte[] Props(MqttProtocolVersion version) => version == V500 ? [0x00] : [];

    internal static byte[] U16(int value) => [(byte)(value >> 8), (byte)value];

    internal static byte[] Str(string value)
    {
        byte[] utf8 = Encoding.UTF8.GetBytes(value);
        return [.. U16(utf8.Length), .. utf8];
    }

    internal static byte[] VariableByteInteger(int value)
    {
        var bytes = new List<byte>();
        do
        {
            byte digit = (byte)(value % 128);
            value /= 128;
            bytes.Add(value > 0 ? (byte)(digit | 0x80) : digit);
        }
        while (value > 0);

        return [.. bytes];
    }
}

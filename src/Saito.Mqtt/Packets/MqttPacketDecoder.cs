using System.Buffers;

namespace Saito.Mqtt.Packets;

/// <summary>
/// Decodes MQTT 3.1.1 and 5.0 packets. Bad input raises <see cref="MqttProtocolException"/> and nothing else.
/// </summary>
public static partial class MqttPacketDecoder
{
    /// <summary>Decodes any packet. CONNECT carries its own protocol level; for the rest, <paramref name="version"/> says.</summary>
    public static MqttPacket Decode(in MqttFrame frame, MqttProtocolVersion version, MqttTopicCache? topicCache = null)
    {
        return frame.Type switch
        {
            MqttPacketType.Connect => DecodeConnect(frame),
            MqttPacketType.ConnAck => DecodeConnAck(frame, version),
            MqttPacketType.Publish => ToPacket(DecodePublish(frame, version, topicCache)),
            MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubRel or MqttPacketType.PubComp => DecodePublishAck(frame, version),
            MqttPacketType.Subscribe => DecodeSubscribe(frame, version),
            MqttPacketType.SubAck => DecodeSubAck(frame, version),
            MqttPacketType.Unsubscribe => DecodeUnsubscribe(frame, version),
            MqttPacketType.UnsubAck => DecodeUnsubAck(frame, version),
            MqttPacketType.PingReq => ExpectEmpty(frame, PingReqPacket.Instance),
            MqttPacketType.PingResp => ExpectEmpty(frame, PingRespPacket.Instance),
            MqttPacketType.Disconnect => DecodeDisconnect(frame, version),
            MqttPacketType.Auth => DecodeAuth(frame, version),
            _ => throw MqttProtocolException.Malformed($"Unknown packet type {(int)frame.Type}"),
        };
    }

    private static PublishPacket ToPacket(in PublishFrame p) => new()
    {
        Topic = p.Topic,
        Payload = p.Payload.ToArray(),
        QoS = p.QoS,
        Retain = p.Retain,
        Dup = p.Dup,
        PacketId = p.PacketId,
        Properties = p.Properties,
    };

    public static PublishFrame DecodePublish(in MqttFrame frame, MqttProtocolVersion version, MqttTopicCache? topicCache)
    {
        var reader = new MqttFieldReader(frame.Body);
        int flags = frame.Flags;
        var qos = (MqttQoS)((flags >> 1) & 0x03);
        string topic = reader.ReadString(topicCache);
        if (topic.AsSpan().IndexOfAny('+', '#') >= 0)
        {
            throw new MqttProtocolException(MqttReasonCode.TopicNameInvalid, "PUBLISH topic contains a wildcard");
        }

        if (topic.Length == 0 && version == MqttProtocolVersion.V311)
        {
            throw new MqttProtocolException(MqttReasonCode.TopicNameInvalid, "PUBLISH with an empty topic");
        }

        ushort packetId = 0;
        if (qos != MqttQoS.AtMostOnce)
        {
            packetId = reader.ReadUInt16();
            if (packetId == 0)
            {
                throw MqttProtocolException.Protocol("PUBLISH with QoS > 0 and packet identifier 0");
            }
        }

        var properties = PropertiesOf(ref reader, version, MqttPacketType.Publish);
        if (topic.Length == 0 && properties?.TopicAlias is null)
        {
            // 5.0 section 3.3.2.1: a zero-length Topic Name without a Topic Alias is a Protocol Error.
            throw MqttProtocolException.Protocol("PUBLISH with an empty topic and no topic alias");
        }

        var payload = reader.ReadToEnd();
        return new PublishFrame(topic, payload, qos, (flags & 0x01) != 0, (flags & 0x08) != 0, packetId, properties);
    }

    public static ConnectPacket DecodeConnect(in MqttFrame frame)
    {
        var reader = new MqttFieldReader(frame.Body);
        string protocolName = reader.ReadString();
        byte level = reader.ReadByte();
        if (protocolName != "MQTT" || level is not ((byte)MqttProtocolVersion.V311 or (byte)MqttProtocolVersion.V500))
        {
            throw new MqttUnsupportedProtocolException(protocolName, level);
        }

        var version = (MqttProtocolVersion)level;
        byte flags = reader.ReadByte();
        if ((flags & 0x01) != 0)
        {
            throw MqttProtocolException.Malformed("CONNECT reserved flag is set");
        }

        bool willFlag = (flags & 0x04) != 0;
        var willQoS = (MqttQoS)((flags >> 3) & 0x03);
        bool willRetain = (flags & 0x20) != 0;
        bool passwordFlag = (flags & 0x40) != 0;
        bool userNameFlag = (flags & 0x80) != 0;
        if ((int)willQoS == 3)
        {
            throw MqttProtocolException.Malformed("CONNECT will QoS 3");
        }

        if (!willFlag && (willQoS != MqttQoS.AtMostOnce || willRetain))
        {
            throw MqttProtocolException.Malformed("CONNECT will QoS or retain set without a will");
        }

        if (version == MqttProtocolVersion.V311 && passwordFlag && !userNameFlag)
        {
            throw MqttProtocolException.Malformed("CONNECT password without user name");
        }

        var packet = new ConnectPacket
        {
            ProtocolVersion = version,
            CleanStart = (flags & 0x02) != 0,
            KeepAliveSeconds = reader.ReadUInt16(),
        };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.Connect);
            if (packet.Properties is { AuthenticationData: not null, AuthenticationMethod: null })
            {
                // 5.0 section 3.1.2.11.10.
                throw MqttProtocolException.Protocol("CONNECT with authentication data but no authentication method");
            }
        }

        packet.ClientId = reader.ReadString();
        if (willFlag)
        {
            var willProperties = PropertiesOf(ref reader, version, WillContext);
            string willTopic = reader.ReadString();
            if (willTopic.Length == 0 || willTopic.AsSpan().IndexOfAny('+', '#') >= 0)
            {
                throw new MqttProtocolException(MqttReasonCode.TopicNameInvalid, "Will topic is empty or has a wildcard");
            }

            packet.Will = new MqttWill
            {
                Topic = willTopic,
                Properties = willProperties,
                Payload = reader.ReadBinary(),
                QoS = willQoS,
                Retain = willRetain,
            };
        }

        if (userNameFlag)
        {
            packet.UserName = reader.ReadString();
        }

        if (passwordFlag)
        {
            packet.Password = reader.ReadBinary();
        }

        ExpectEnd(ref reader, "CONNECT");
        return packet;
    }

    private static ConnAckPacket DecodeConnAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        byte ackFlags = reader.ReadByte();
        if ((ackFlags & 0xFE) != 0)
        {
            throw MqttProtocolException.Malformed("CONNACK reserved flags set");
        }

        var packet = new ConnAckPacket { SessionPresent = (ackFlags & 0x01) != 0, ReasonCode = reader.ReadByte() };
        packet.Properties = PropertiesOf(ref reader, version, MqttPacketType.ConnAck);

        ExpectEnd(ref reader, "CONNACK");
        return packet;
    }

    private static PublishAckPacket DecodePublishAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new PublishAckPacket(frame.Type) { PacketId = reader.ReadUInt16() };
        if (packet.PacketId == 0)
        {
            throw MqttProtocolException.Protocol($"{frame.Type} with packet identifier 0");
        }

        if (version == MqttProtocolVersion.V500 && !reader.End)
        {
            packet.ReasonCode = (MqttReasonCode)reader.ReadByte();
            if (!reader.End)
            {
                packet.Properties = ReadProperties(ref reader, (int)frame.Type);
            }
        }

        ExpectEnd(ref reader, frame.Type.ToString());
        return packet;
    }

    private static DisconnectPacket DecodeDisconnect(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new DisconnectPacket();
        if (version == MqttProtocolVersion.V500 && !reader.End)
        {
            packet.ReasonCode = (MqttReasonCode)reader.ReadByte();
            if (!reader.End)
            {
                packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.Disconnect);
            }
        }

        ExpectEnd(ref reader, "DISCONNECT");
        return packet;
    }

    private static AuthPacket DecodeAuth(in MqttFrame frame, MqttProtocolVersion version)
    {
        if (version != MqttProtocolVersion.V500)
        {
            throw MqttProtocolException.Malformed("AUTH does not exist in MQTT 3.1.1");
        }

        // 5.0 section 3.15.2.1: reason code and property length may be left out together (Remaining
        // Length 0) and only together; unlike PUBACK or DISCONNECT, AUTH has no form with a reason
        // code alone.
        var reader = new MqttFieldReader(frame.Body);
        var packet = new AuthPacket();
        if (!reader.End)
        {
            packet.ReasonCode = (MqttReasonCode)reader.ReadByte();
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.Auth);
        }

        ExpectEnd(ref reader, "AUTH");
        return packet;
    }

    private static MqttPacket ExpectEmpty(in MqttFrame frame, MqttPacket packet)
    {
        if (!frame.Body.IsEmpty)
        {
            throw MqttProtocolException.Malformed($"{frame.Type} with a body");
        }

        return packet;
    }

    private static ushort ReadNonZeroPacketId(ref MqttFieldReader reader, string what)
    {
        ushort id = reader.ReadUInt16();
        if (id == 0)
        {
            throw MqttProtocolException.Protocol($"{what} with packet identifier 0");
        }

        return id;
    }

    private static void ExpectEnd(ref MqttFieldReader reader, string what)
    {
        if (!reader.End)
        {
            throw MqttProtocolException.Malformed($"{what} has {reader.Remaining} bytes more than its fields");
        }
    }
}

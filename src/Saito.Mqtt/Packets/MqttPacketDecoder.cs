using System.Buffers;

namespace Saito.Mqtt.Packets;

/// <summary>
/// PUBLISH as decoded on the hot path: no allocation (the topic comes from a <see cref="MqttTopicCache"/>,
/// the payload is a slice of the receive buffer, valid until that buffer is advanced).
/// </summary>
public readonly struct PublishFrame
{
    public PublishFrame(string topic, ReadOnlySequence<byte> payload, MqttQoS qos, bool retain, bool dup, ushort packetId, MqttProperties? properties)
    {
        Topic = topic;
        Payload = payload;
        QoS = qos;
        Retain = retain;
        Dup = dup;
        PacketId = packetId;
        Properties = properties;
    }

    public string Topic { get; }
    public ReadOnlySequence<byte> Payload { get; }
    public MqttQoS QoS { get; }
    public bool Retain { get; }
    public bool Dup { get; }
    public ushort PacketId { get; }
    public MqttProperties? Properties { get; }
}

/// <summary>
/// Decodes MQTT 3.1.1 and 5.0 packets. Bad input raises <see cref="MqttProtocolException"/> and nothing else.
/// </summary>
public static class MqttPacketDecoder
{
    // Where a property may appear: bit n set = packet type n; bit 0 stands for the will properties.
    private const int WillContext = 0;

    private static readonly int[] s_allowed = BuildAllowedTable();

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

        var properties = version == MqttProtocolVersion.V500 ? ReadProperties(ref reader, (int)MqttPacketType.Publish) : null;
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
            var willProperties = version == MqttProtocolVersion.V500 ? ReadProperties(ref reader, WillContext) : null;
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
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.ConnAck);
        }

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

    private static SubscribePacket DecodeSubscribe(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new SubscribePacket { PacketId = ReadNonZeroPacketId(ref reader, "SUBSCRIBE") };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.Subscribe);
        }

        while (!reader.End)
        {
            string filter = reader.ReadString();
            byte options = reader.ReadByte();
            int reservedMask = version == MqttProtocolVersion.V500 ? 0xC0 : 0xFC;
            if ((options & reservedMask) != 0)
            {
                throw MqttProtocolException.Malformed("SUBSCRIBE options with reserved bits set");
            }

            // QoS 3: malformed in 3.1.1 [MQTT-3.8.3-4], a Protocol Error in 5.0 (section 3.8.3.1), as is
            // Retain Handling 3 (which cannot occur in 3.1.1: those bits are reserved there).
            if ((options & 0x03) == 3)
            {
                throw version == MqttProtocolVersion.V500
                    ? MqttProtocolException.Protocol("SUBSCRIBE with QoS 3")
                    : MqttProtocolException.Malformed("SUBSCRIBE with QoS 3");
            }

            if (((options >> 4) & 0x03) == 3)
            {
                throw MqttProtocolException.Protocol("SUBSCRIBE with retain handling 3");
            }

            packet.Subscriptions.Add(new MqttSubscription
            {
                TopicFilter = filter,
                QoS = (MqttQoS)(options & 0x03),
                NoLocal = (options & 0x04) != 0,
                RetainAsPublished = (options & 0x08) != 0,
                RetainHandling = (MqttRetainHandling)((options >> 4) & 0x03),
            });
        }

        if (packet.Subscriptions.Count == 0)
        {
            throw MqttProtocolException.Protocol("SUBSCRIBE without a topic filter");
        }

        return packet;
    }

    private static SubAckPacket DecodeSubAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new SubAckPacket { PacketId = ReadNonZeroPacketId(ref reader, "SUBACK") };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.SubAck);
        }

        while (!reader.End)
        {
            packet.ReasonCodes.Add((MqttReasonCode)reader.ReadByte());
        }

        return packet;
    }

    private static UnsubscribePacket DecodeUnsubscribe(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new UnsubscribePacket { PacketId = ReadNonZeroPacketId(ref reader, "UNSUBSCRIBE") };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.Unsubscribe);
        }

        while (!reader.End)
        {
            packet.TopicFilters.Add(reader.ReadString());
        }

        if (packet.TopicFilters.Count == 0)
        {
            throw MqttProtocolException.Protocol("UNSUBSCRIBE without a topic filter");
        }

        return packet;
    }

    private static UnsubAckPacket DecodeUnsubAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new UnsubAckPacket { PacketId = ReadNonZeroPacketId(ref reader, "UNSUBACK") };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.UnsubAck);
            while (!reader.End)
            {
                packet.ReasonCodes.Add((MqttReasonCode)reader.ReadByte());
            }
        }

        ExpectEnd(ref reader, "UNSUBACK");
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

    private static MqttProperties? ReadProperties(ref MqttFieldReader reader, int context)
    {
        int length = reader.ReadVariableByteInteger();
        if (length == 0)
        {
            return null;
        }

        if (length > reader.Remaining)
        {
            throw MqttProtocolException.Malformed("Property length runs past the end of the packet");
        }

        long end = reader.Remaining - length;
        var p = new MqttProperties();
        while (reader.Remaining > end)
        {
            int id = reader.ReadVariableByteInteger();
            // 5.0 section 2.2.2.2: an identifier not valid for the packet type is a Malformed Packet (0x81).
            if (id >= s_allowed.Length || (s_allowed[id] & (1 << context)) == 0)
            {
                throw MqttProtocolException.Malformed($"Property 0x{id:X2} is not valid in this packet");
            }

            switch ((MqttPropertyId)id)
            {
                case MqttPropertyId.PayloadFormatIndicator: p.PayloadFormatIndicator = Once(p.PayloadFormatIndicator, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.MessageExpiryInterval: p.MessageExpiryInterval = Once(p.MessageExpiryInterval, reader.ReadUInt32()); break;
                case MqttPropertyId.ContentType: p.ContentType = Once(p.ContentType, reader.ReadString()); break;
                case MqttPropertyId.ResponseTopic:
                    string responseTopic = reader.ReadString();
                    if (responseTopic.AsSpan().IndexOfAny('+', '#') >= 0)
                    {
                        throw MqttProtocolException.Protocol("Response topic contains a wildcard");
                    }

                    p.ResponseTopic = Once(p.ResponseTopic, responseTopic);
                    break;
                case MqttPropertyId.CorrelationData: p.CorrelationData = Once(p.CorrelationData, reader.ReadBinary()); break;
                case MqttPropertyId.SubscriptionIdentifier:
                    int subId = reader.ReadVariableByteInteger();
                    if (subId == 0)
                    {
                        throw MqttProtocolException.Protocol("Subscription identifier 0");
                    }

                    if (context == (int)MqttPacketType.Subscribe && p.SubscriptionIdentifiers is { Count: > 0 })
                    {
                        throw MqttProtocolException.Protocol("SUBSCRIBE with two subscription identifiers");
                    }

                    (p.SubscriptionIdentifiers ??= []).Add((uint)subId);
                    break;
                case MqttPropertyId.SessionExpiryInterval: p.SessionExpiryInterval = Once(p.SessionExpiryInterval, reader.ReadUInt32()); break;
                case MqttPropertyId.AssignedClientIdentifier: p.AssignedClientIdentifier = Once(p.AssignedClientIdentifier, reader.ReadString()); break;
                case MqttPropertyId.ServerKeepAlive: p.ServerKeepAlive = Once(p.ServerKeepAlive, reader.ReadUInt16()); break;
                case MqttPropertyId.AuthenticationMethod: p.AuthenticationMethod = Once(p.AuthenticationMethod, reader.ReadString()); break;
                case MqttPropertyId.AuthenticationData: p.AuthenticationData = Once(p.AuthenticationData, reader.ReadBinary()); break;
                case MqttPropertyId.RequestProblemInformation: p.RequestProblemInformation = Once(p.RequestProblemInformation, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.WillDelayInterval: p.WillDelayInterval = Once(p.WillDelayInterval, reader.ReadUInt32()); break;
                case MqttPropertyId.RequestResponseInformation: p.RequestResponseInformation = Once(p.RequestResponseInformation, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.ResponseInformation: p.ResponseInformation = Once(p.ResponseInformation, reader.ReadString()); break;
                case MqttPropertyId.ServerReference: p.ServerReference = Once(p.ServerReference, reader.ReadString()); break;
                case MqttPropertyId.ReasonString: p.ReasonString = Once(p.ReasonString, reader.ReadString()); break;
                case MqttPropertyId.ReceiveMaximum: p.ReceiveMaximum = Once(p.ReceiveMaximum, NonZero(reader.ReadUInt16(), "Receive maximum")); break;
                case MqttPropertyId.TopicAliasMaximum: p.TopicAliasMaximum = Once(p.TopicAliasMaximum, reader.ReadUInt16()); break;
                case MqttPropertyId.TopicAlias:
                    ushort alias = reader.ReadUInt16();
                    if (alias == 0)
                    {
                        // [MQTT-3.3.2-8]; the receiver answers 0x94 Topic Alias invalid (5.0 section 3.3.2.3.4).
                        throw new MqttProtocolException(MqttReasonCode.TopicAliasInvalid, "Topic alias 0");
                    }

                    p.TopicAlias = Once(p.TopicAlias, alias);
                    break;
                case MqttPropertyId.MaximumQoS:
                    byte maxQoS = reader.ReadByte();
                    if (maxQoS > 1)
                    {
                        throw MqttProtocolException.Protocol("Maximum QoS other than 0 or 1");
                    }

                    p.MaximumQoS = Once(p.MaximumQoS, maxQoS);
                    break;
                case MqttPropertyId.RetainAvailable: p.RetainAvailable = Once(p.RetainAvailable, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.UserProperty:
                    string name = reader.ReadString();
                    string value = reader.ReadString();
                    (p.UserProperties ??= []).Add(new MqttUserProperty(name, value));
                    break;
                case MqttPropertyId.MaximumPacketSize:
                    uint maxSize = reader.ReadUInt32();
                    if (maxSize == 0)
                    {
                        throw MqttProtocolException.Protocol("Maximum packet size 0");
                    }

                    p.MaximumPacketSize = Once(p.MaximumPacketSize, maxSize);
                    break;
                case MqttPropertyId.WildcardSubscriptionAvailable: p.WildcardSubscriptionAvailable = Once(p.WildcardSubscriptionAvailable, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.SubscriptionIdentifierAvailable: p.SubscriptionIdentifierAvailable = Once(p.SubscriptionIdentifierAvailable, ReadFlag(ref reader, id)); break;
                case MqttPropertyId.SharedSubscriptionAvailable: p.SharedSubscriptionAvailable = Once(p.SharedSubscriptionAvailable, ReadFlag(ref reader, id)); break;
                default:
                    throw MqttProtocolException.Malformed($"Unknown property 0x{id:X2}");
            }
        }

        if (reader.Remaining != end)
        {
            throw MqttProtocolException.Malformed("Properties overran their declared length");
        }

        return p;
    }

    private static T Once<T>(T? existing, T value)
        where T : class
    {
        if (existing is not null)
        {
            throw MqttProtocolException.Protocol("Property appears twice");
        }

        return value;
    }

    private static T Once<T>(T? existing, T value)
        where T : struct
    {
        if (existing is not null)
        {
            throw MqttProtocolException.Protocol("Property appears twice");
        }

        return value;
    }

    private static byte ReadFlag(ref MqttFieldReader reader, int id)
    {
        byte value = reader.ReadByte();
        if (value > 1)
        {
            throw MqttProtocolException.Protocol($"Property 0x{id:X2} must be 0 or 1");
        }

        return value;
    }

    private static ushort NonZero(ushort value, string what)
    {
        if (value == 0)
        {
            throw MqttProtocolException.Protocol($"{what} of 0");
        }

        return value;
    }

    private static int[] BuildAllowedTable()
    {
        var t = new int[0x2B];
        static int Bits(params MqttPacketType[] types) => types.Aggregate(0, (acc, type) => acc | (1 << (int)type));
        const int Will = 1 << WillContext;
        int publishAndWill = Bits(MqttPacketType.Publish) | Will;
        t[(int)MqttPropertyId.PayloadFormatIndicator] = publishAndWill;
        t[(int)MqttPropertyId.MessageExpiryInterval] = publishAndWill;
        t[(int)MqttPropertyId.ContentType] = publishAndWill;
        t[(int)MqttPropertyId.ResponseTopic] = publishAndWill;
        t[(int)MqttPropertyId.CorrelationData] = publishAndWill;
        t[(int)MqttPropertyId.SubscriptionIdentifier] = Bits(MqttPacketType.Publish, MqttPacketType.Subscribe);
        t[(int)MqttPropertyId.SessionExpiryInterval] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck, MqttPacketType.Disconnect);
        t[(int)MqttPropertyId.AssignedClientIdentifier] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.ServerKeepAlive] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.AuthenticationMethod] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck, MqttPacketType.Auth);
        t[(int)MqttPropertyId.AuthenticationData] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck, MqttPacketType.Auth);
        t[(int)MqttPropertyId.RequestProblemInformation] = Bits(MqttPacketType.Connect);
        t[(int)MqttPropertyId.WillDelayInterval] = Will;
        t[(int)MqttPropertyId.RequestResponseInformation] = Bits(MqttPacketType.Connect);
        t[(int)MqttPropertyId.ResponseInformation] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.ServerReference] = Bits(MqttPacketType.ConnAck, MqttPacketType.Disconnect);
        t[(int)MqttPropertyId.ReasonString] = Bits(MqttPacketType.ConnAck, MqttPacketType.PubAck, MqttPacketType.PubRec, MqttPacketType.PubRel,
            MqttPacketType.PubComp, MqttPacketType.SubAck, MqttPacketType.UnsubAck, MqttPacketType.Disconnect, MqttPacketType.Auth);
        t[(int)MqttPropertyId.ReceiveMaximum] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.TopicAliasMaximum] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.TopicAlias] = Bits(MqttPacketType.Publish);
        t[(int)MqttPropertyId.MaximumQoS] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.RetainAvailable] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.UserProperty] = -1;
        t[(int)MqttPropertyId.MaximumPacketSize] = Bits(MqttPacketType.Connect, MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.WildcardSubscriptionAvailable] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.SubscriptionIdentifierAvailable] = Bits(MqttPacketType.ConnAck);
        t[(int)MqttPropertyId.SharedSubscriptionAvailable] = Bits(MqttPacketType.ConnAck);
        return t;
    }
}

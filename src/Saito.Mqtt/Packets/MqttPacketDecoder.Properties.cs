namespace Saito.Mqtt.Packets;

public static partial class MqttPacketDecoder
{
    // Where a property may appear: bit n set = packet type n; bit 0 stands for the will properties.
    private const int WillContext = 0;

    private static readonly int[] s_allowed = BuildAllowedTable();

    /// <summary>The properties of a packet of <paramref name="type"/> in 5.0; 3.1.1 has none.</summary>
    private static MqttProperties? PropertiesOf(ref MqttFieldReader reader, MqttProtocolVersion version, MqttPacketType type) =>
        PropertiesOf(ref reader, version, (int)type);

    /// <summary>The properties where <paramref name="context"/> (a packet type, or <see cref="WillContext"/>) allows them, in 5.0; 3.1.1 has none.</summary>
    private static MqttProperties? PropertiesOf(ref MqttFieldReader reader, MqttProtocolVersion version, int context) =>
        version == MqttProtocolVersion.V500 ? ReadProperties(ref reader, context) : null;

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

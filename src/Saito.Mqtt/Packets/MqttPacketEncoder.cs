using System.Buffers;
using System.Buffers.Binary;
using System.Text;

namespace Saito.Mqtt.Packets;

/// <summary>
/// Encodes MQTT 3.1.1 and 5.0 packets into an <see cref="IBufferWriter{T}"/> (a PipeWriter on the hot
/// path). Sizes are computed first so each packet is written in one pass with no intermediate buffer.
/// </summary>
public static class MqttPacketEncoder
{
    /// <summary>Writes any packet and returns its size in bytes.</summary>
    public static int Encode(IBufferWriter<byte> writer, MqttPacket packet, MqttProtocolVersion version)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(packet);
        return packet switch
        {
            PublishPacket p => EncodePublish(writer, version, p.Topic, new ReadOnlySequence<byte>(p.Payload), p.QoS, p.Retain, p.Dup, p.PacketId, p.Properties),
            ConnectPacket p => EncodeConnect(writer, p),
            ConnAckPacket p => EncodeConnAck(writer, p, version),
            PublishAckPacket p => EncodePublishAck(writer, p.Type, p.PacketId, p.ReasonCode, p.Properties, version),
            SubscribePacket p => EncodeSubscribe(writer, p, version),
            SubAckPacket p => EncodeAckList(writer, MqttPacketType.SubAck, p.PacketId, p.ReasonCodes, p.Properties, version),
            UnsubscribePacket p => EncodeUnsubscribe(writer, p, version),
            UnsubAckPacket p => EncodeAckList(writer, MqttPacketType.UnsubAck, p.PacketId, version == MqttProtocolVersion.V500 ? p.ReasonCodes : [], p.Properties, version),
            PingReqPacket => EncodeEmpty(writer, MqttPacketType.PingReq),
            PingRespPacket => EncodeEmpty(writer, MqttPacketType.PingResp),
            DisconnectPacket p => EncodeReasonOnly(writer, MqttPacketType.Disconnect, p.ReasonCode, p.Properties, version),
            AuthPacket p => EncodeReasonOnly(writer, MqttPacketType.Auth, p.ReasonCode, p.Properties, version),
            _ => throw new ArgumentException($"Unknown packet {packet.GetType().Name}", nameof(packet)),
        };
    }

    /// <summary>The size <see cref="EncodePublish"/> would write, to check against a peer's maximum packet size.</summary>
    public static int PublishSize(MqttProtocolVersion version, string topic, long payloadLength, MqttQoS qos, MqttProperties? properties)
    {
        int body = PublishBodyWithoutPayload(version, topic, qos, properties, out _) + (int)payloadLength;
        return 1 + VarIntSize(body) + body;
    }

    public static int EncodePublish(IBufferWriter<byte> writer, MqttProtocolVersion version, string topic, ReadOnlySequence<byte> payload,
        MqttQoS qos, bool retain, bool dup, ushort packetId, MqttProperties? properties)
    {
        ArgumentNullException.ThrowIfNull(writer);
        int head = PublishBodyWithoutPayload(version, topic, qos, properties, out int propertiesLength);
        int remaining = checked(head + (int)payload.Length);
        int headerSize = 1 + VarIntSize(remaining) + head;
        var w = new SpanWriter(writer.GetSpan(headerSize));
        w.Byte((byte)(((int)MqttPacketType.Publish << 4) | (dup ? 0x08 : 0) | ((int)qos << 1) | (retain ? 1 : 0)));
        w.VarInt(remaining);
        w.String(topic);
        if (qos != MqttQoS.AtMostOnce)
        {
            w.UInt16(packetId);
        }

        if (version == MqttProtocolVersion.V500)
        {
            w.Properties(properties, propertiesLength);
        }

        writer.Advance(w.Position);
        foreach (var segment in payload)
        {
            writer.Write(segment.Span);
        }

        return headerSize + (int)payload.Length;
    }

    public static int EncodePublishAck(IBufferWriter<byte> writer, MqttPacketType type, ushort packetId, MqttReasonCode reasonCode,
        MqttProperties? properties, MqttProtocolVersion version)
    {
        ArgumentNullException.ThrowIfNull(writer);
        int flags = type == MqttPacketType.PubRel ? 0x02 : 0;
        int propertiesLength = PropertiesLength(properties);
        int remaining = 2;
        if (version == MqttProtocolVersion.V500 && (reasonCode != MqttReasonCode.Success || propertiesLength > 0))
        {
            remaining += 1 + (propertiesLength > 0 ? VarIntSize(propertiesLength) + propertiesLength : 0);
        }

        int total = 1 + VarIntSize(remaining) + remaining;
        var w = new SpanWriter(writer.GetSpan(total));
        w.Byte((byte)(((int)type << 4) | flags));
        w.VarInt(remaining);
        w.UInt16(packetId);
        if (remaining > 2)
        {
            w.Byte((byte)reasonCode);
            if (propertiesLength > 0)
            {
                w.Properties(properties, propertiesLength);
            }
        }

        writer.Advance(total);
        return total;
    }

    private static int PublishBodyWithoutPayload(MqttProtocolVersion version, string topic, MqttQoS qos, MqttProperties? properties, out int propertiesLength)
    {
        int size = 2 + Encoding.UTF8.GetByteCount(topic) + (qos != MqttQoS.AtMostOnce ? 2 : 0);
        propertiesLength = 0;
        if (version == MqttProtocolVersion.V500)
        {
            propertiesLength = PropertiesLength(properties);
            size += VarIntSize(propertiesLength) + propertiesLength;
        }

        return size;
    }

    private static int EncodeConnect(IBufferWriter<byte> writer, ConnectPacket p)
    {
        bool v5 = p.ProtocolVersion == MqttProtocolVersion.V500;
        int propertiesLength = v5 ? PropertiesLength(p.Properties) : 0;
        int willPropertiesLength = v5 && p.Will is not null ? PropertiesLength(p.Will.Properties) : 0;
        int remaining = 2 + 4 + 1 + 1 + 2;
        if (v5)
        {
            remaining += VarIntSize(propertiesLength) + propertiesLength;
        }

        remaining += StringSize(p.ClientId);
        if (p.Will is not null)
        {
            if (v5)
            {
                remaining += VarIntSize(willPropertiesLength) + willPropertiesLength;
            }

            remaining += StringSize(p.Will.Topic) + 2 + p.Will.Payload.Length;
        }

        if (p.UserName is not null)
        {
            remaining += StringSize(p.UserName);
        }

        if (p.Password is not null)
        {
            remaining += 2 + p.Password.Value.Length;
        }

        int flags = (p.CleanStart ? 0x02 : 0) | (p.UserName is not null ? 0x80 : 0) | (p.Password is not null ? 0x40 : 0);
        if (p.Will is not null)
        {
            flags |= 0x04 | ((int)p.Will.QoS << 3) | (p.Will.Retain ? 0x20 : 0);
        }

        int total = 1 + VarIntSize(remaining) + remaining;
        var w = new SpanWriter(writer.GetSpan(total));
        w.Byte((int)MqttPacketType.Connect << 4);
        w.VarInt(remaining);
        w.String("MQTT");
        w.Byte((byte)p.ProtocolVersion);
        w.Byte((byte)flags);
        w.UInt16(p.KeepAliveSeconds);
        if (v5)
        {
            w.Properties(p.Properties, propertiesLength);
        }

        w.String(p.ClientId);
        if (p.Will is not null)
        {
            if (v5)
            {
                w.Properties(p.Will.Properties, willPropertiesLength);
            }

            w.String(p.Will.Topic);
            w.Binary(p.Will.Payload.Span);
        }

        if (p.UserName is not null)
        {
            w.String(p.UserName);
        }

        if (p.Password is not null)
        {
            w.Binary(p.Password.Value.Span);
        }

        writer.Advance(total);
        return total;
    }

    private static int EncodeConnAck(IBufferWriter<byte> writer, ConnAckPacket p, MqttProtocolVersion version)
    {
        int propertiesLength = version == MqttProtocolVersion.V500 ? PropertiesLength(p.Properties) : 0;
        int remaining = 2 + (version == MqttProtocolVersion.V500 ? VarIntSize(propertiesLength) + propertiesLength : 0);
        int total = 1 + VarIntSize(remaining) + remaining;
        var w = new SpanWriter(writer.GetSpan(total));
        w.Byte((int)MqttPacketType.ConnAck << 4);
        w.VarInt(remaining);
        w.Byte(p.SessionPresent ? (byte)1 : (byte)0);
        w.Byte(p.ReasonCode);
        if (version == MqttProtocolVersion.V500)
        {
            w.Properties(p.Properties, propertiesLength);
        }

        writer.Advance(total);
        return total;
    }

    private static int EncodeSubscribe(IBufferWriter<byte> writer, SubscribePacket p, MqttProtocolVersion version)
    {
        int payload = 0;
        foreach (var s in p.Subscriptions)
        {
            payload += StringSize(s.TopicFilter) + 1;
        }

        var w = StartWithPacketId(writer, ((int)MqttPacketType.Subscribe << 4) | 0x02, p.PacketId, p.Properties, version, payload, out int total);
        foreach (var s in p.Subscriptions)
        {
            w.String(s.TopicFilter);
            int options = (int)s.QoS;
            if (version == MqttProtocolVersion.V500)
            {
                options |= (s.NoLocal ? 0x04 : 0) | (s.RetainAsPublished ? 0x08 : 0) | ((int)s.RetainHandling << 4);
            }

            w.Byte((byte)options);
        }

        writer.Advance(total);
        return total;
    }

    private static int EncodeUnsubscribe(IBufferWriter<byte> writer, UnsubscribePacket p, MqttProtocolVersion version)
    {
        int payload = 0;
        foreach (var f in p.TopicFilters)
        {
            payload += StringSize(f);
        }

        var w = StartWithPacketId(writer, ((int)MqttPacketType.Unsubscribe << 4) | 0x02, p.PacketId, p.Properties, version, payload, out int total);
        foreach (var f in p.TopicFilters)
        {
            w.String(f);
        }

        writer.Advance(total);
        return total;
    }

    private static int EncodeAckList(IBufferWriter<byte> writer, MqttPacketType type, ushort packetId, List<MqttReasonCode> codes,
        MqttProperties? properties, MqttProtocolVersion version)
    {
        var w = StartWithPacketId(writer, (int)type << 4, packetId, properties, version, codes.Count, out int total);
        foreach (var code in codes)
        {
            w.Byte((byte)code);
        }

        writer.Advance(total);
        return total;
    }

    /// <summary>
    /// Sizes a SUBSCRIBE, UNSUBSCRIBE, SUBACK or UNSUBACK (a packet id, in 5.0 the properties, then <paramref name="payload"/>
    /// bytes) and writes all but the payload: the fixed header, the packet id and the properties.
    /// </summary>
    private static SpanWriter StartWithPacketId(IBufferWriter<byte> writer, int firstByte, ushort packetId, MqttProperties? properties,
        MqttProtocolVersion version, int payload, out int total)
    {
        int propertiesLength = version == MqttProtocolVersion.V500 ? PropertiesLength(properties) : 0;
        int remaining = 2 + payload + (version == MqttProtocolVersion.V500 ? VarIntSize(propertiesLength) + propertiesLength : 0);
        total = 1 + VarIntSize(remaining) + remaining;
        var w = new SpanWriter(writer.GetSpan(total));
        w.Byte(firstByte);
        w.VarInt(remaining);
        w.UInt16(packetId);
        if (version == MqttProtocolVersion.V500)
        {
            w.Properties(properties, propertiesLength);
        }

        return w;
    }

    private static int EncodeReasonOnly(IBufferWriter<byte> writer, MqttPacketType type, MqttReasonCode code, MqttProperties? properties,
        MqttProtocolVersion version)
    {
        // DISCONNECT may end after its reason code (5.0 section 3.14.2.2.1); AUTH may not: it carries
        // both the reason code and the property length, or neither (section 3.15.2.1).
        int remaining = 0;
        int propertiesLength = 0;
        bool writePropertyLength = false;
        if (version == MqttProtocolVersion.V500)
        {
            propertiesLength = PropertiesLength(properties);
            writePropertyLength = propertiesLength > 0 || (type == MqttPacketType.Auth && code != MqttReasonCode.Success);
            if (writePropertyLength)
            {
                remaining = 1 + VarIntSize(propertiesLength) + propertiesLength;
            }
            else if (code != MqttReasonCode.Success)
            {
                remaining = 1;
            }
        }

        int total = 1 + VarIntSize(remaining) + remaining;
        var w = new SpanWriter(writer.GetSpan(total));
        w.Byte((byte)((int)type << 4));
        w.VarInt(remaining);
        if (remaining > 0)
        {
            w.Byte((byte)code);
            if (writePropertyLength)
            {
                w.Properties(properties, propertiesLength);
            }
        }

        writer.Advance(total);
        return total;
    }

    private static int EncodeEmpty(IBufferWriter<byte> writer, MqttPacketType type)
    {
        var span = writer.GetSpan(2);
        span[0] = (byte)((int)type << 4);
        span[1] = 0;
        writer.Advance(2);
        return 2;
    }

    /// <summary>
    /// Bytes a variable byte integer takes. Four at most: a larger value (a packet past 268,435,455
    /// bytes of remaining length) cannot be framed at all, so it is refused before anything is written.
    /// </summary>
    internal static int VarIntSize(int value) => value switch
    {
        < 0 => throw new ArgumentOutOfRangeException(nameof(value), value, "A variable byte integer is never negative"),
        < 128 => 1,
        < 16_384 => 2,
        < 2_097_152 => 3,
        <= MqttFrameReader.MaxRemainingLength => 4,
        _ => throw new ArgumentOutOfRangeException(nameof(value), value,
            $"{value} exceeds {MqttFrameReader.MaxRemainingLength}, the largest value of a four-byte variable byte integer"),
    };

    private static int StringSize(string value) => 2 + Encoding.UTF8.GetByteCount(value);

    internal static int PropertiesLength(MqttProperties? p)
    {
        if (p is null)
        {
            return 0;
        }

        int size = 0;
        if (p.PayloadFormatIndicator is not null) { size += 2; }
        if (p.MessageExpiryInterval is not null) { size += 5; }
        if (p.ContentType is not null) { size += 1 + StringSize(p.ContentType); }
        if (p.ResponseTopic is not null) { size += 1 + StringSize(p.ResponseTopic); }
        if (p.CorrelationData is not null) { size += 3 + p.CorrelationData.Value.Length; }
        if (p.SubscriptionIdentifiers is not null)
        {
            foreach (uint id in p.SubscriptionIdentifiers)
            {
                size += 1 + VarIntSize((int)id);
            }
        }

        if (p.SessionExpiryInterval is not null) { size += 5; }
        if (p.AssignedClientIdentifier is not null) { size += 1 + StringSize(p.AssignedClientIdentifier); }
        if (p.ServerKeepAlive is not null) { size += 3; }
        if (p.AuthenticationMethod is not null) { size += 1 + StringSize(p.AuthenticationMethod); }
        if (p.AuthenticationData is not null) { size += 3 + p.AuthenticationData.Value.Length; }
        if (p.RequestProblemInformation is not null) { size += 2; }
        if (p.WillDelayInterval is not null) { size += 5; }
        if (p.RequestResponseInformation is not null) { size += 2; }
        if (p.ResponseInformation is not null) { size += 1 + StringSize(p.ResponseInformation); }
        if (p.ServerReference is not null) { size += 1 + StringSize(p.ServerReference); }
        if (p.ReasonString is not null) { size += 1 + StringSize(p.ReasonString); }
        if (p.ReceiveMaximum is not null) { size += 3; }
        if (p.TopicAliasMaximum is not null) { size += 3; }
        if (p.TopicAlias is not null) { size += 3; }
        if (p.MaximumQoS is not null) { size += 2; }
        if (p.RetainAvailable is not null) { size += 2; }
        if (p.UserProperties is not null)
        {
            foreach (var u in p.UserProperties)
            {
                size += 1 + StringSize(u.Name) + StringSize(u.Value);
            }
        }

        if (p.MaximumPacketSize is not null) { size += 5; }
        if (p.WildcardSubscriptionAvailable is not null) { size += 2; }
        if (p.SubscriptionIdentifierAvailable is not null) { size += 2; }
        if (p.SharedSubscriptionAvailable is not null) { size += 2; }
        return size;
    }

    private ref struct SpanWriter
    {
        private readonly Span<byte> _span;

        public SpanWriter(Span<byte> span) => _span = span;

        public int Position { get; private set; }

        public void Byte(int value) => _span[Position++] = (byte)value;

        public void UInt16(ushort value)
        {
            BinaryPrimitives.WriteUInt16BigEndian(_span[Position..], value);
            Position += 2;
        }

        public void UInt32(uint value)
        {
            BinaryPrimitives.WriteUInt32BigEndian(_span[Position..], value);
            Position += 4;
        }

        public void VarInt(int value)
        {
            do
            {
                int digit = value % 128;
                value /= 128;
                if (value > 0)
                {
                    digit |= 0x80;
                }

                _span[Position++] = (byte)digit;
            }
            while (value > 0);
        }

        public void String(string value)
        {
            int length = Encoding.UTF8.GetBytes(value, _span[(Position + 2)..]);
            if (length > ushort.MaxValue)
            {
                throw new ArgumentException("An MQTT string is at most 65,535 bytes of UTF-8", nameof(value));
            }

            UInt16((ushort)length);
            Position += length;
        }

        public void Binary(ReadOnlySpan<byte> value)
        {
            if (value.Length > ushort.MaxValue)
            {
                throw new ArgumentException("MQTT binary data is at most 65,535 bytes", nameof(value));
            }

            UInt16((ushort)value.Length);
            value.CopyTo(_span[Position..]);
            Position += value.Length;
        }

        public void Properties(MqttProperties? p, int length)
        {
            VarInt(length);
            if (p is null || length == 0)
            {
                return;
            }

            if (p.PayloadFormatIndicator is { } pfi) { Byte((int)MqttPropertyId.PayloadFormatIndicator); Byte(pfi); }
            if (p.MessageExpiryInterval is { } mei) { Byte((int)MqttPropertyId.MessageExpiryInterval); UInt32(mei); }
            if (p.ContentType is { } ct) { Byte((int)MqttPropertyId.ContentType); String(ct); }
            if (p.ResponseTopic is { } rt) { Byte((int)MqttPropertyId.ResponseTopic); String(rt); }
            if (p.CorrelationData is { } cd) { Byte((int)MqttPropertyId.CorrelationData); Binary(cd.Span); }
            if (p.SubscriptionIdentifiers is not null)
            {
                foreach (uint id in p.SubscriptionIdentifiers)
                {
                    Byte((int)MqttPropertyId.SubscriptionIdentifier);
                    VarInt((int)id);
                }
            }

            if (p.SessionExpiryInterval is { } sei) { Byte((int)MqttPropertyId.SessionExpiryInterval); UInt32(sei); }
            if (p.AssignedClientIdentifier is { } aci) { Byte((int)MqttPropertyId.AssignedClientIdentifier); String(aci); }
            if (p.ServerKeepAlive is { } ska) { Byte((int)MqttPropertyId.ServerKeepAlive); UInt16(ska); }
            if (p.AuthenticationMethod is { } am) { Byte((int)MqttPropertyId.AuthenticationMethod); String(am); }
            if (p.AuthenticationData is { } ad) { Byte((int)MqttPropertyId.AuthenticationData); Binary(ad.Span); }
            if (p.RequestProblemInformation is { } rpi) { Byte((int)MqttPropertyId.RequestProblemInformation); Byte(rpi); }
            if (p.WillDelayInterval is { } wdi) { Byte((int)MqttPropertyId.WillDelayInterval); UInt32(wdi); }
            if (p.RequestResponseInformation is { } rri) { Byte((int)MqttPropertyId.RequestResponseInformation); Byte(rri); }
            if (p.ResponseInformation is { } ri) { Byte((int)MqttPropertyId.ResponseInformation); String(ri); }
            if (p.ServerReference is { } sr) { Byte((int)MqttPropertyId.ServerReference); String(sr); }
            if (p.ReasonString is { } rs) { Byte((int)MqttPropertyId.ReasonString); String(rs); }
            if (p.ReceiveMaximum is { } rm) { Byte((int)MqttPropertyId.ReceiveMaximum); UInt16(rm); }
            if (p.TopicAliasMaximum is { } tam) { Byte((int)MqttPropertyId.TopicAliasMaximum); UInt16(tam); }
            if (p.TopicAlias is { } ta) { Byte((int)MqttPropertyId.TopicAlias); UInt16(ta); }
            if (p.MaximumQoS is { } mq) { Byte((int)MqttPropertyId.MaximumQoS); Byte(mq); }
            if (p.RetainAvailable is { } ra) { Byte((int)MqttPropertyId.RetainAvailable); Byte(ra); }
            if (p.UserProperties is not null)
            {
                foreach (var u in p.UserProperties)
                {
                    Byte((int)MqttPropertyId.UserProperty);
                    String(u.Name);
                    String(u.Value);
                }
            }

            if (p.MaximumPacketSize is { } mps) { Byte((int)MqttPropertyId.MaximumPacketSize); UInt32(mps); }
            if (p.WildcardSubscriptionAvailable is { } wsa) { Byte((int)MqttPropertyId.WildcardSubscriptionAvailable); Byte(wsa); }
            if (p.SubscriptionIdentifierAvailable is { } sia) { Byte((int)MqttPropertyId.SubscriptionIdentifierAvailable); Byte(sia); }
            if (p.SharedSubscriptionAvailable is { } ssa) { Byte((int)MqttPropertyId.SharedSubscriptionAvailable); Byte(ssa); }
        }
    }
}

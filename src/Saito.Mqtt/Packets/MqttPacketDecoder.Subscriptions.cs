namespace Saito.Mqtt.Packets;

public static partial class MqttPacketDecoder
{
    private static SubscribePacket DecodeSubscribe(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new SubscribePacket { PacketId = ReadNonZeroPacketId(ref reader, "SUBSCRIBE") };
        packet.Properties = PropertiesOf(ref reader, version, MqttPacketType.Subscribe);

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

        RequireTopicFilter(packet.Subscriptions.Count, "SUBSCRIBE");

        return packet;
    }

    private static SubAckPacket DecodeSubAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new SubAckPacket { PacketId = ReadNonZeroPacketId(ref reader, "SUBACK") };
        packet.Properties = PropertiesOf(ref reader, version, MqttPacketType.SubAck);

        ReadReasonCodes(ref reader, packet.ReasonCodes);

        return packet;
    }

    private static UnsubscribePacket DecodeUnsubscribe(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new UnsubscribePacket { PacketId = ReadNonZeroPacketId(ref reader, "UNSUBSCRIBE") };
        packet.Properties = PropertiesOf(ref reader, version, MqttPacketType.Unsubscribe);

        while (!reader.End)
        {
            packet.TopicFilters.Add(reader.ReadString());
        }

        RequireTopicFilter(packet.TopicFilters.Count, "UNSUBSCRIBE");

        return packet;
    }

    private static UnsubAckPacket DecodeUnsubAck(in MqttFrame frame, MqttProtocolVersion version)
    {
        var reader = new MqttFieldReader(frame.Body);
        var packet = new UnsubAckPacket { PacketId = ReadNonZeroPacketId(ref reader, "UNSUBACK") };
        if (version == MqttProtocolVersion.V500)
        {
            packet.Properties = ReadProperties(ref reader, (int)MqttPacketType.UnsubAck);
            ReadReasonCodes(ref reader, packet.ReasonCodes);
        }

        ExpectEnd(ref reader, "UNSUBACK");
        return packet;
    }

    /// <summary>A SUBSCRIBE or UNSUBSCRIBE carries at least one topic filter [MQTT-3.8.3-3], [MQTT-3.10.3-2].</summary>
    private static void RequireTopicFilter(int count, string packet)
    {
        if (count == 0)
        {
            throw MqttProtocolException.Protocol($"{packet} without a topic filter");
        }
    }

    /// <summary>The rest of a SUBACK or UNSUBACK: one reason code a byte, one per filter asked for.</summary>
    private static void ReadReasonCodes(ref MqttFieldReader reader, List<MqttReasonCode> codes)
    {
        while (!reader.End)
        {
            codes.Add((MqttReasonCode)reader.ReadByte());
        }
    }
}

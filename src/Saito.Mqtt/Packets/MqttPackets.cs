namespace Saito.Mqtt.Packets;

/// <summary>An MQTT control packet. Properties are MQTT 5.0 only; they are ignored for 3.1.1.</summary>
public abstract class MqttPacket
{
    public abstract MqttPacketType Type { get; }

    public MqttProperties? Properties { get; set; }
}

/// <summary>The will message carried by CONNECT.</summary>
public sealed class MqttWill
{
    public required string Topic { get; set; }
    public ReadOnlyMemory<byte> Payload { get; set; }
    public MqttQoS QoS { get; set; }
    public bool Retain { get; set; }
    public MqttProperties? Properties { get; set; }
}

public sealed class ConnectPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Connect;
    public MqttProtocolVersion ProtocolVersion { get; set; } = MqttProtocolVersion.V500;

    /// <summary>Clean Session (3.1.1) or Clean Start (5.0).</summary>
    public bool CleanStart { get; set; } = true;

    public ushort KeepAliveSeconds { get; set; }
    public string ClientId { get; set; } = string.Empty;
    public string? UserName { get; set; }
    public ReadOnlyMemory<byte>? Password { get; set; }
    public MqttWill? Will { get; set; }
}

public sealed class ConnAckPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.ConnAck;
    public bool SessionPresent { get; set; }

    /// <summary>A 5.0 reason code, or a 3.1.1 return code (<see cref="MqttConnectReturnCode"/>) as a byte.</summary>
    public byte ReasonCode { get; set; }
}

public sealed class PublishPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Publish;

    /// <summary>The topic; empty in 5.0 when the topic comes from a topic alias.</summary>
    public string Topic { get; set; } = string.Empty;

    public ReadOnlyMemory<byte> Payload { get; set; }
    public MqttQoS QoS { get; set; }
    public bool Retain { get; set; }
    public bool Dup { get; set; }

    /// <summary>Non-zero exactly when QoS &gt; 0.</summary>
    public ushort PacketId { get; set; }
}

/// <summary>PUBACK, PUBREC, PUBREL or PUBCOMP: a packet identifier, and in 5.0 a reason code and properties.</summary>
public sealed class PublishAckPacket : MqttPacket
{
    public PublishAckPacket(MqttPacketType type)
    {
        if (type is not (MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubRel or MqttPacketType.PubComp))
        {
            throw new ArgumentOutOfRangeException(nameof(type), type, "Not a publish acknowledgement type");
        }

        Type = type;
    }

    public override MqttPacketType Type { get; }
    public ushort PacketId { get; set; }
    public MqttReasonCode ReasonCode { get; set; }
}

public sealed class MqttSubscription
{
    public required string TopicFilter { get; set; }
    public MqttQoS QoS { get; set; }
    public bool NoLocal { get; set; }
    public bool RetainAsPublished { get; set; }
    public MqttRetainHandling RetainHandling { get; set; }
}

public sealed class SubscribePacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Subscribe;
    public ushort PacketId { get; set; }
    public List<MqttSubscription> Subscriptions { get; set; } = [];
}

public sealed class SubAckPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.SubAck;
    public ushort PacketId { get; set; }

    /// <summary>One per subscription: granted QoS (0..2) or a failure code (0x80 in 3.1.1, any &gt;= 0x80 in 5.0).</summary>
    public List<MqttReasonCode> ReasonCodes { get; set; } = [];
}

public sealed class UnsubscribePacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Unsubscribe;
    public ushort PacketId { get; set; }
    public List<string> TopicFilters { get; set; } = [];
}

public sealed class UnsubAckPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.UnsubAck;
    public ushort PacketId { get; set; }

    /// <summary>5.0 only: one per topic filter. Empty for 3.1.1.</summary>
    public List<MqttReasonCode> ReasonCodes { get; set; } = [];
}

public sealed class PingReqPacket : MqttPacket
{
    public static readonly PingReqPacket Instance = new();
    public override MqttPacketType Type => MqttPacketType.PingReq;
}

public sealed class PingRespPacket : MqttPacket
{
    public static readonly PingRespPacket Instance = new();
    public override MqttPacketType Type => MqttPacketType.PingResp;
}

public sealed class DisconnectPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Disconnect;
    public MqttReasonCode ReasonCode { get; set; }
}

public sealed class AuthPacket : MqttPacket
{
    public override MqttPacketType Type => MqttPacketType.Auth;
    public MqttReasonCode ReasonCode { get; set; }
}

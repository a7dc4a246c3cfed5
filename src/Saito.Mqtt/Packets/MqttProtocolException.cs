namespace Saito.Mqtt.Packets;

/// <summary>
/// Raised when bytes on the wire break the MQTT standard. The reason code is the one an MQTT 5.0
/// peer is told in DISCONNECT (or CONNACK) before the connection closes; nothing else is thrown by
/// the decoder for bad input.
/// </summary>
public class MqttProtocolException : Exception
{
    public MqttProtocolException(MqttReasonCode reasonCode, string message)
        : base(message) => ReasonCode = reasonCode;

    public MqttProtocolException()
        : this(MqttReasonCode.ProtocolError, "MQTT protocol error")
    {
    }

    public MqttProtocolException(string message)
        : this(MqttReasonCode.ProtocolError, message)
    {
    }

    public MqttProtocolException(string message, Exception innerException)
        : base(message, innerException) => ReasonCode = MqttReasonCode.MalformedPacket;

    public MqttReasonCode ReasonCode { get; }

    internal static MqttProtocolException Malformed(string message) => new(MqttReasonCode.MalformedPacket, message);

    internal static MqttProtocolException Protocol(string message) => new(MqttReasonCode.ProtocolError, message);
}

/// <summary>
/// CONNECT named a protocol (name or level) this implementation does not speak. The broker answers
/// with the "unacceptable protocol version" CONNACK of the level the client asked for, then closes.
/// </summary>
public sealed class MqttUnsupportedProtocolException : MqttProtocolException
{
    public MqttUnsupportedProtocolException(string protocolName, byte level)
        : base(MqttReasonCode.UnsupportedProtocolVersion, $"Unsupported protocol '{protocolName}' level {level}")
    {
        ProtocolName = protocolName;
        Level = level;
    }

    public MqttUnsupportedProtocolException()
        : this(string.Empty, 0)
    {
    }

    public MqttUnsupportedProtocolException(string message)
        : base(MqttReasonCode.UnsupportedProtocolVersion, message) => ProtocolName = string.Empty;

    public MqttUnsupportedProtocolException(string message, Exception innerException)
        : base(message, innerException) => ProtocolName = string.Empty;

    public string ProtocolName { get; }

    public byte Level { get; }
}

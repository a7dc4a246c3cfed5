using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>A message to publish. The payload is not copied: leave it unchanged until the publish completes.</summary>
public sealed class MqttApplicationMessage
{
    public required string Topic { get; init; }

    public ReadOnlyMemory<byte> Payload { get; init; }

    public MqttQoS QoS { get; init; }

    public bool Retain { get; init; }

    /// <summary>5.0 only (ignored for 3.1.1): content type, message expiry, user properties, response topic...</summary>
    public MqttProperties? Properties { get; init; }
}

/// <summary>What the broker said to CONNECT.</summary>
public sealed class MqttConnectResult
{
    internal MqttConnectResult(ConnAckPacket ack, string clientId)
    {
        SessionPresent = ack.SessionPresent;
        ReasonCode = (MqttReasonCode)ack.ReasonCode;
        ClientId = clientId;
        Properties = ack.Properties;
    }

    public bool SessionPresent { get; }

    public MqttReasonCode ReasonCode { get; }

    /// <summary>The identifier in use: the configured one, or the one a 5.0 broker assigned.</summary>
    public string ClientId { get; }

    /// <summary>5.0 CONNACK properties (server keep-alive, receive maximum, maximum QoS...), or null.</summary>
    public MqttProperties? Properties { get; }
}

/// <summary>
/// The end of a publish flow. QoS 0: <see cref="MqttReasonCode.Success"/> once written to the socket.
/// QoS 1: the PUBACK's reason code. QoS 2: the PUBREC's code when it refused the message, else the PUBCOMP's.
/// MQTT 3.1.1 has no reason codes in acknowledgements, so there it is always Success.
/// </summary>
public sealed class MqttPublishResult
{
    internal static readonly MqttPublishResult Written = new(0, MqttReasonCode.Success, null);

    internal MqttPublishResult(ushort packetId, MqttReasonCode reasonCode, string? reasonString)
    {
        PacketId = packetId;
        ReasonCode = reasonCode;
        ReasonString = reasonString;
    }

    public ushort PacketId { get; }

    public MqttReasonCode ReasonCode { get; }

    public string? ReasonString { get; }

    /// <summary>Codes below 0x80 are successes (0x10 "no matching subscribers" included).</summary>
    public bool IsSuccess => (byte)ReasonCode < 0x80;

    /// <summary>Throws <see cref="MqttPublishException"/> when the broker refused the message.</summary>
    public MqttPublishResult EnsureSuccess() => IsSuccess ? this : throw new MqttPublishException(this);
}

/// <summary>One code per requested filter: the granted QoS (0, 1, 2) or a failure (0x80 and up).</summary>
public sealed class MqttSubscribeResult
{
    internal MqttSubscribeResult(IReadOnlyList<MqttReasonCode> reasonCodes, string? reasonString)
    {
        ReasonCodes = reasonCodes;
        ReasonString = reasonString;
    }

    public IReadOnlyList<MqttReasonCode> ReasonCodes { get; }

    public string? ReasonString { get; }

    public bool AllGranted => ReasonCodes.All(c => (byte)c < 0x80);
}

/// <summary>5.0: one reason code per filter. 3.1.1's UNSUBACK carries none, so the list is empty.</summary>
public sealed class MqttUnsubscribeResult
{
    internal MqttUnsubscribeResult(IReadOnlyList<MqttReasonCode> reasonCodes, string? reasonString)
    {
        ReasonCodes = reasonCodes;
        ReasonString = reasonString;
    }

    public IReadOnlyList<MqttReasonCode> ReasonCodes { get; }

    public string? ReasonString { get; }
}

public sealed class MqttClientConnectedEventArgs : EventArgs
{
    internal MqttClientConnectedEventArgs(MqttConnectResult result, bool isReconnect)
    {
        Result = result;
        IsReconnect = isReconnect;
    }

    public MqttConnectResult Result { get; }

    /// <summary>True when the client reconnected on its own after losing the connection.</summary>
    public bool IsReconnect { get; }
}

public sealed class MqttClientDisconnectedEventArgs : EventArgs
{
    internal MqttClientDisconnectedEventArgs(Exception? exception, bool clientInitiated, bool willReconnect)
    {
        Exception = exception;
        ClientInitiated = clientInitiated;
        WillReconnect = willReconnect;
    }

    /// <summary>Why the connection ended; null when the application disconnected. A broker's 5.0
    /// DISCONNECT arrives as <see cref="MqttServerDisconnectException"/>.</summary>
    public Exception? Exception { get; }

    public bool ClientInitiated { get; }

    public bool WillReconnect { get; }
}

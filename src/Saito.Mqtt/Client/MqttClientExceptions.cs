using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>The base of everything <see cref="MqttClient"/> throws on purpose.</summary>
public class MqttClientException : Exception
{
    public MqttClientException()
    {
    }

    public MqttClientException(string message)
        : base(message)
    {
    }

    public MqttClientException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

/// <summary>The broker answered CONNECT with a refusal. <see cref="Code"/> is the byte from CONNACK.</summary>
public sealed class MqttConnectException : MqttClientException
{
    public MqttConnectException()
    {
    }

    public MqttConnectException(string message)
        : base(message)
    {
    }

    public MqttConnectException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    internal MqttConnectException(MqttProtocolVersion version, byte code, string? reasonString)
        : base(Describe(version, code, reasonString))
    {
        ProtocolVersion = version;
        Code = code;
        ReasonString = reasonString;
    }

    public MqttProtocolVersion ProtocolVersion { get; }

    /// <summary>The CONNACK byte as received: a 5.0 reason code, or a 3.1.1 return code.</summary>
    public byte Code { get; }

    /// <summary>The 3.1.1 return code, or null for a 5.0 connection.</summary>
    public MqttConnectReturnCode? ReturnCode => ProtocolVersion == MqttProtocolVersion.V311 ? (MqttConnectReturnCode)Code : null;

    /// <summary>The 5.0 reason code; for 3.1.1, the 5.0 code that means the same.</summary>
    public MqttReasonCode ReasonCode => ProtocolVersion == MqttProtocolVersion.V500
        ? (MqttReasonCode)Code
        : (MqttConnectReturnCode)Code switch
        {
            MqttConnectReturnCode.UnacceptableProtocolVersion => MqttReasonCode.UnsupportedProtocolVersion,
            MqttConnectReturnCode.IdentifierRejected => MqttReasonCode.ClientIdentifierNotValid,
            MqttConnectReturnCode.ServerUnavailable => MqttReasonCode.ServerUnavailable,
            MqttConnectReturnCode.BadUserNameOrPassword => MqttReasonCode.BadUserNameOrPassword,
            MqttConnectReturnCode.NotAuthorized => MqttReasonCode.NotAuthorized,
            _ => MqttReasonCode.UnspecifiedError,
        };

    /// <summary>5.0 Reason String property, when the broker sent one.</summary>
    public string? ReasonString { get; }

    private static string Describe(MqttProtocolVersion version, byte code, string? reasonString)
    {
        string name = version == MqttProtocolVersion.V311 ? ((MqttConnectReturnCode)code).ToString() : ((MqttReasonCode)code).ToString();
        string text = version == MqttProtocolVersion.V311
            ? $"The broker refused the connection with return code {code} ({name})"
            : $"The broker refused the connection with reason code 0x{code:X2} ({name})";
        return reasonString is null ? text + "." : $"{text}: {reasonString}";
    }
}

/// <summary>
/// The connection closed while an operation waited for it (a SUBACK, a QoS 0 write), or the application
/// disconnected with publishes still in flight.
/// </summary>
public sealed class MqttClientDisconnectedException : MqttClientException
{
    public MqttClientDisconnectedException()
        : base("The MQTT connection closed.")
    {
    }

    public MqttClientDisconnectedException(string message)
        : base(message)
    {
    }

    public MqttClientDisconnectedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

/// <summary>A 5.0 broker closed the connection with DISCONNECT and this reason code.</summary>
public sealed class MqttServerDisconnectException : MqttClientException
{
    public MqttServerDisconnectException()
    {
    }

    public MqttServerDisconnectException(string message)
        : base(message)
    {
    }

    public MqttServerDisconnectException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    internal MqttServerDisconnectException(MqttReasonCode reasonCode, string? reasonString)
        : base($"The broker sent DISCONNECT with reason code 0x{(byte)reasonCode:X2} ({reasonCode}){(reasonString is null ? "." : ": " + reasonString)}")
    {
        ReasonCode = reasonCode;
        ReasonString = reasonString;
    }

    public MqttReasonCode ReasonCode { get; }

    public string? ReasonString { get; }
}

/// <summary>Thrown by <see cref="MqttPublishResult.EnsureSuccess"/> for a 5.0 failure reason code.</summary>
public sealed class MqttPublishException : MqttClientException
{
    public MqttPublishException()
    {
    }

    public MqttPublishException(string message)
        : base(message)
    {
    }

    public MqttPublishException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    internal MqttPublishException(MqttPublishResult result)
        : base($"The broker refused the message with reason code 0x{(byte)result.ReasonCode:X2} ({result.ReasonCode})"
            + (result.ReasonString is null ? "." : ": " + result.ReasonString))
    {
        Result = result;
    }

    public MqttPublishResult? Result { get; }
}

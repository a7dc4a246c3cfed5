using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>Why a CONNECT is refused: the 3.1.1 return code, the 5.0 reason code, and a line for the log.</summary>
internal readonly record struct ConnectRefusal(MqttConnectReturnCode Code311, MqttReasonCode Code5, string Why)
{
    /// <summary>The CONNACK code a client of <paramref name="version"/> is sent.</summary>
    public byte CodeFor(MqttProtocolVersion version) => version == MqttProtocolVersion.V500 ? (byte)Code5 : (byte)Code311;
}

/// <summary>
/// What the broker makes of a CONNECT from the packet and the options alone: a refusal, or the negotiated client id,
/// keep-alive, session expiry, flow-control limits and the CONNACK properties. Authentication, the connection and
/// session limits and session takeover come after it, in the connection.
/// </summary>
internal sealed class ConnectDecision
{
    /// <summary>Set when the CONNECT is refused before authentication; the other values are then not negotiated.</summary>
    public ConnectRefusal? Refusal { get; init; }

    /// <summary>The <see cref="MqttBrokerOptions"/> limit this CONNECT hit (for the metrics), or null.</summary>
    public string? LimitHit { get; init; }

    /// <summary>The client id the connection goes by: the client's, or the one assigned to it (empty when refused for want of one).</summary>
    public required string ClientId { get; init; }

    /// <summary>The id the broker made up for a client that sent none (5.0, or 3.1.1 with a clean session).</summary>
    public string? AssignedClientId { get; init; }

    /// <summary>The session expiry the client asked for (3.1.1: 0 for a clean session, uint.MaxValue otherwise).</summary>
    public uint RequestedSessionExpiry { get; init; }

    /// <summary>The session expiry granted: the request clamped to <see cref="MqttBrokerOptions.MaxSessionExpirySeconds"/>.</summary>
    public uint SessionExpiry { get; init; }

    /// <summary>Keep-alive in milliseconds; 0 means none.</summary>
    public long KeepAliveMs { get; init; }

    /// <summary>Outbound QoS 1/2 messages in flight at once: the client's receive maximum within the broker's.</summary>
    public int OutboundInflightLimit { get; init; }

    /// <summary>The largest packet the client accepts (int.MaxValue when it set none).</summary>
    public int ClientMaxPacketSize { get; init; } = int.MaxValue;

    /// <summary>Topic aliases the client accepts from the broker (0: none).</summary>
    public int ClientTopicAliasMaximum { get; init; }

    /// <summary>The properties of an accepting 5.0 CONNACK; null for 3.1.1.</summary>
    public MqttProperties? ConnAckProperties { get; init; }
}

/// <summary>
/// The decision part of CONNECT handling as pure functions of the packet and the options, so that it is tested
/// without a socket (<c>ConnectNegotiationTests</c>). Which refusal wins follows the order of the checks here.
/// </summary>
internal static class ConnectNegotiation
{
    /// <summary>The prefix of a client id the broker assigns.</summary>
    public const string AssignedClientIdPrefix = "saito-";

    public static ConnectDecision Negotiate(ConnectPacket connect, MqttBrokerOptions options)
    {
        ArgumentNullException.ThrowIfNull(connect);
        ArgumentNullException.ThrowIfNull(options);
        bool v5 = connect.ProtocolVersion == MqttProtocolVersion.V500;
        string clientId = connect.ClientId;
        string? assignedId = null;
        if (clientId.Length == 0)
        {
            if (!v5 && !connect.CleanStart)
            {
                return Refused(clientId, MqttConnectReturnCode.IdentifierRejected, MqttReasonCode.ClientIdentifierNotValid,
                    "empty client id with a persistent session");
            }

            clientId = assignedId = AssignedClientIdPrefix + Guid.NewGuid().ToString("N");
        }

        if (clientId.Length > options.MaxClientIdLength)
        {
            return Refused(clientId, MqttConnectReturnCode.IdentifierRejected, MqttReasonCode.ClientIdentifierNotValid,
                $"client id of {clientId.Length} characters (Mqtt:MaxClientIdLength is {options.MaxClientIdLength})",
                nameof(MqttBrokerOptions.MaxClientIdLength));
        }

        if (LogText.HasControlCharacters(clientId))
        {
            return Refused(clientId, MqttConnectReturnCode.IdentifierRejected, MqttReasonCode.ClientIdentifierNotValid,
                "client id with control characters");
        }

        var p = connect.Properties;
        if (p?.AuthenticationMethod is not null)
        {
            return Refused(clientId, MqttConnectReturnCode.NotAuthorized, MqttReasonCode.BadAuthenticationMethod,
                "enhanced authentication is not supported");
        }

        uint requestedExpiry = v5 ? p?.SessionExpiryInterval ?? 0 : connect.CleanStart ? 0 : uint.MaxValue;
        uint expiry = Math.Min(requestedExpiry, options.MaxSessionExpirySeconds);
        int keepAlive = connect.KeepAliveSeconds;
        if (options.ServerKeepAliveSeconds is { } serverKeepAlive)
        {
            // 5.0 clients are told the server's keep-alive; a 3.1.1 client keeps a shorter one of its own.
            keepAlive = v5 || keepAlive == 0 || keepAlive > serverKeepAlive ? serverKeepAlive : keepAlive;
        }

        return new ConnectDecision
        {
            ClientId = clientId,
            AssignedClientId = assignedId,
            RequestedSessionExpiry = requestedExpiry,
            SessionExpiry = expiry,
            KeepAliveMs = keepAlive * 1000L,
            OutboundInflightLimit = Math.Min(options.MaxInflightMessages, p?.ReceiveMaximum ?? ushort.MaxValue),
            ClientMaxPacketSize = (int)Math.Min(p?.MaximumPacketSize ?? int.MaxValue, int.MaxValue),
            ClientTopicAliasMaximum = p?.TopicAliasMaximum ?? 0,
            ConnAckProperties = v5
                ? new MqttProperties
                {
                    ReceiveMaximum = options.ReceiveMaximum == ushort.MaxValue ? null : (ushort)options.ReceiveMaximum,
                    MaximumPacketSize = (uint)options.MaxPacketSize,
                    TopicAliasMaximum = options.TopicAliasMaximum == 0 ? null : (ushort)options.TopicAliasMaximum,
                    AssignedClientIdentifier = assignedId,
                    SessionExpiryInterval = expiry != requestedExpiry ? expiry : null,
                    ServerKeepAlive = options.ServerKeepAliveSeconds is { } ska ? (ushort)ska : null,
                }
                : null,
        };
    }

    /// <summary>
    /// The refusing CONNACK for a protocol level the broker does not speak: 3.1.1 servers answer an unknown level with
    /// return code 1 in a 3.1.1 CONNACK; a level above 5 gets 0x84 in a 5.0 CONNACK.
    /// </summary>
    public static (MqttProtocolVersion Version, byte ReasonCode) UnsupportedProtocolLevel(byte level) =>
        level > (byte)MqttProtocolVersion.V500
            ? (MqttProtocolVersion.V500, (byte)MqttReasonCode.UnsupportedProtocolVersion)
            : (MqttProtocolVersion.V311, (byte)MqttConnectReturnCode.UnacceptableProtocolVersion);

    /// <summary>The refusal for a client the authenticator did not accept.</summary>
    public static ConnectRefusal NotAuthenticated(MqttAuthenticationResult result) =>
        result == MqttAuthenticationResult.BadUserNameOrPassword
            ? new ConnectRefusal(MqttConnectReturnCode.BadUserNameOrPassword, MqttReasonCode.BadUserNameOrPassword, "bad user name or password")
            : new ConnectRefusal(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized, "not authorized");

    /// <summary>The refusal when <see cref="MqttBrokerOptions.MaxConnections"/> clients are connected.</summary>
    public static ConnectRefusal ConnectionLimitReached(MqttBrokerOptions options) =>
        new(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.ServerBusy, $"connection limit of {options.MaxConnections} reached");

    /// <summary>The refusal when a new session is needed and <see cref="MqttBrokerOptions.MaxSessions"/> are kept.</summary>
    public static ConnectRefusal SessionLimitReached(MqttBrokerOptions options) =>
        new(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.QuotaExceeded, $"session limit of {options.MaxSessions} reached (Mqtt:MaxSessions)");

    private static ConnectDecision Refused(string clientId, MqttConnectReturnCode code311, MqttReasonCode code5, string why, string? limit = null) =>
        new() { ClientId = clientId, Refusal = new ConnectRefusal(code311, code5, why), LimitHit = limit };
}

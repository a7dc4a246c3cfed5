using System.Net;
using System.Security.Cryptography.X509Certificates;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>An inbound PUBLISH as a hook sees it. The payload is the broker's own copy; keep it as long as you like.</summary>
public sealed class MqttInboundPublish
{
    public required string ClientId { get; init; }
    public string? UserName { get; init; }
    public required string Topic { get; init; }
    public required ReadOnlyMemory<byte> Payload { get; init; }
    public MqttQoS QoS { get; init; }
    public bool Retain { get; init; }
    public MqttProperties? Properties { get; init; }
    public MqttProtocolVersion ProtocolVersion { get; init; }
    public DateTimeOffset ReceivedAt { get; init; }
}

/// <summary>What a hook decides about one publish: accept it (the acknowledgement goes out) or fail it.</summary>
public readonly record struct MqttPublishVerdict(MqttReasonCode ReasonCode, string? ReasonString = null)
{
    public static MqttPublishVerdict Accepted { get; } = new(MqttReasonCode.Success);

    public bool IsSuccess => (byte)ReasonCode < 0x80;

    public static MqttPublishVerdict Failed(MqttReasonCode reasonCode, string? reason = null) =>
        (byte)reasonCode < 0x80 ? throw new ArgumentOutOfRangeException(nameof(reasonCode), "A failure needs a reason code >= 0x80") : new(reasonCode, reason);
}

/// <summary>
/// Sees every inbound PUBLISH and decides when it is acknowledged. The PUBACK (QoS 1) or PUBREC (QoS 2)
/// goes out only when the returned task completes; a failed verdict (or an exception) becomes a failure
/// reason code for an MQTT 5.0 client, and for a 3.1.1 client, which has no way to be told, the connection
/// is closed without the acknowledgement so that the client sends the message again. The connection keeps
/// reading while verdicts are pending, up to the broker's receive maximum, and acknowledgements leave in
/// the order their publishes arrived, as the standard requires.
/// </summary>
public interface IMqttPublishHook
{
    ValueTask<MqttPublishVerdict> OnPublishAsync(MqttInboundPublish publish, CancellationToken cancellationToken);
}

public sealed class MqttAuthenticationContext
{
    public required string ClientId { get; init; }
    public string? UserName { get; init; }
    public ReadOnlyMemory<byte>? Password { get; init; }
    public X509Certificate2? ClientCertificate { get; init; }
    public EndPoint? RemoteEndPoint { get; init; }
    public MqttProtocolVersion ProtocolVersion { get; init; }
}

public enum MqttAuthenticationResult
{
    Success,
    BadUserNameOrPassword,
    NotAuthorized,
}

/// <summary>Who a connection is, as the authenticator established it: a name (a hub, the dashboard) and its roles.</summary>
public sealed class MqttClientIdentity
{
    public MqttClientIdentity(string name, IEnumerable<string> roles)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(roles);
        Name = name;
        Roles = new HashSet<string>(roles, StringComparer.Ordinal);
    }

    private MqttClientIdentity()
    {
        Name = "(anonymous)";
        Roles = new HashSet<string>(StringComparer.Ordinal);
        IsAnonymous = true;
    }

    /// <summary>A client that gave no credentials (accepted only where <see cref="MqttBrokerOptions.AllowAnonymous"/> lets it in).</summary>
    public static MqttClientIdentity Anonymous { get; } = new();

    public string Name { get; }

    public IReadOnlySet<string> Roles { get; }

    public bool IsAnonymous { get; }

    public override string ToString() => Name;
}

/// <summary>The authenticator's answer: accepted as an identity, or refused with a reason.</summary>
public readonly record struct MqttAuthenticationOutcome(MqttAuthenticationResult Result, MqttClientIdentity? Identity)
{
    public static MqttAuthenticationOutcome Accepted(MqttClientIdentity identity) =>
        new(MqttAuthenticationResult.Success, identity ?? throw new ArgumentNullException(nameof(identity)));

    public static MqttAuthenticationOutcome Refused(MqttAuthenticationResult result) =>
        result == MqttAuthenticationResult.Success ? throw new ArgumentOutOfRangeException(nameof(result)) : new(result, null);
}

/// <summary>Decides whether a client may connect (user name and password, client certificate), and as whom.</summary>
public interface IMqttAuthenticator
{
    ValueTask<MqttAuthenticationOutcome> AuthenticateAsync(MqttAuthenticationContext context, CancellationToken cancellationToken);
}

/// <summary>
/// The topic ACL: whether an identity may publish to a topic or subscribe to a filter. Called for every PUBLISH and
/// every filter of a SUBSCRIBE, so it must be cheap and must not block. Without one, every identity may do both.
/// A denied publish is answered with "not authorized" (5.0, QoS 1 and 2), dropped (5.0, QoS 0) or closes the
/// connection (3.1.1, which has no way to say it); a denied filter gets the SUBACK failure code.
/// </summary>
public interface IMqttAuthorizer
{
    bool MayPublish(MqttClientIdentity identity, string topic);

    /// <summary><paramref name="filter"/> is the filter without any <c>$share/{group}/</c> prefix.</summary>
    bool MaySubscribe(MqttClientIdentity identity, string filter);
}

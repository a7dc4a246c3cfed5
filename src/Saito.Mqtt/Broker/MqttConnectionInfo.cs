using System.Net;
using System.Security.Cryptography.X509Certificates;

namespace Saito.Mqtt.Broker;

/// <summary>What the transport knows about a connection before MQTT starts.</summary>
public sealed class MqttConnectionInfo
{
    /// <summary>"tcp", "tls" or "ws".</summary>
    public required string Transport { get; init; }

    public EndPoint? RemoteEndPoint { get; init; }

    public X509Certificate2? ClientCertificate { get; init; }

    /// <summary>
    /// A WebSocket connection whose HTTP request came through a proxy (it carries <c>X-Forwarded-For</c>,
    /// <c>Forwarded</c> or <c>X-Real-IP</c>): its client is somewhere else, whatever address Saito listens on, so the
    /// anonymous try-it default (<c>Mqtt:AllowAnonymous</c> unset) does not apply to it.
    /// </summary>
    public bool Forwarded { get; init; }

    /// <summary>Closes the underlying transport at once (used when a peer stops reading or must be dropped).</summary>
    public Action? Abort { get; init; }

    /// <summary>Called once when the broker is done with the connection (served to its end, or refused at admission).</summary>
    public Action? Ended { get; init; }
}

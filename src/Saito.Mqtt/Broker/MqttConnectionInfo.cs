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

    /// <summary>Closes the underlying transport at once (used when a peer stops reading or must be dropped).</summary>
    public Action? Abort { get; init; }

    /// <summary>Called once when the broker is done with the connection (served to its end, or refused at admission).</summary>
    public Action? Ended { get; init; }
}

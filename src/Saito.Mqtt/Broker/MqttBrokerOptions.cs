using System.ComponentModel.DataAnnotations;

namespace Saito.Mqtt.Broker;

/// <summary>
/// Settings of the embedded broker, bound from the <c>Mqtt</c> configuration section.
/// Every limit here bounds memory: see docs/mqtt.md for what happens when one is reached.
/// </summary>
public sealed class MqttBrokerOptions
{
    public const string SectionName = "Mqtt";

    /// <summary>Address the MQTT listeners bind to: <c>localhost</c> (default, like Mosquitto 2), <c>0.0.0.0</c>/<c>*</c> for every interface, or an IP.</summary>
    [Required]
    public string BindAddress { get; set; } = "localhost";

    /// <summary>Plain MQTT over TCP; 0 disables the listener.</summary>
    [Range(0, 65535)]
    public int Port { get; set; } = 1883;

    /// <summary>MQTT over TLS; 0 (default) disables it. Needs <see cref="CertificatePath"/>.</summary>
    [Range(0, 65535)]
    public int TlsPort { get; set; }

    /// <summary>PEM (with <see cref="CertificateKeyPath"/>) or PFX server certificate for the TLS listener.</summary>
    public string? CertificatePath { get; set; }

    public string? CertificateKeyPath { get; set; }

    public string? CertificatePassword { get; set; }

    /// <summary>Ask TLS clients for a certificate and hand it to the authenticator (not required unless the authenticator says so).</summary>
    public bool RequestClientCertificate { get; set; }

    /// <summary>MQTT over WebSocket on the HTTP port (sub-protocol <c>mqtt</c>); empty disables it.</summary>
    public string WebSocketPath { get; set; } = "/mqtt";

    /// <summary>Connections accepted at once; past it a CONNECT is refused with "server unavailable"/"server busy".</summary>
    [Range(1, 1_000_000)]
    public int MaxConnections { get; set; } = 10_000;

    /// <summary>Largest packet accepted, in bytes (fixed header included). Also announced to 5.0 clients.</summary>
    [Range(64, 268_435_460)]
    public int MaxPacketSize { get; set; } = 16 * 1024 * 1024;

    /// <summary>Accept clients without a user name. When false, every client needs credentials the authenticator accepts.</summary>
    public bool AllowAnonymous { get; set; } = true;

    /// <summary>Inbound QoS 1/2 publishes a client may have unacknowledged (announced as Receive Maximum in 5.0).</summary>
    [Range(1, 65535)]
    public int ReceiveMaximum { get; set; } = 256;

    /// <summary>Outbound QoS 1/2 messages in flight per client (a 5.0 client may ask for fewer).</summary>
    [Range(1, 65535)]
    public int MaxInflightMessages { get; set; } = 64;

    /// <summary>Messages queued per session beyond the inflight window; past it new messages for that session are dropped and counted.</summary>
    [Range(1, 10_000_000)]
    public int MaxQueuedMessages { get; set; } = 10_000;

    /// <summary>Topic aliases a 5.0 client may set towards the broker.</summary>
    [Range(0, 65535)]
    public int TopicAliasMaximum { get; set; } = 64;

    /// <summary>Seconds a new connection has to send CONNECT.</summary>
    [Range(1, 3600)]
    public int ConnectTimeoutSeconds { get; set; } = 10;

    /// <summary>When set, 5.0 clients are told to use this keep-alive (Server Keep Alive) and 3.1.1 clients asking for more or none are held to it.</summary>
    [Range(0, 65535)]
    public int? ServerKeepAliveSeconds { get; set; }

    /// <summary>Upper bound on a 5.0 client's session expiry, in seconds (0xFFFFFFFF = never expires).</summary>
    public uint MaxSessionExpirySeconds { get; set; } = uint.MaxValue;

    /// <summary>Retained messages kept; a new retained topic past it is refused (5.0 clients get "quota exceeded").</summary>
    [Range(0, 10_000_000)]
    public int MaxRetainedMessages { get; set; } = 100_000;
}

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

    /// <summary>
    /// What serves <see cref="Port"/>: <see cref="MqttTcpTransport.Sockets"/> (default), Saito's own socket listener,
    /// which holds no buffer and no task of its own while a connection is idle (about half of Kestrel's memory per
    /// idle connection, issue 15), or <see cref="MqttTcpTransport.Kestrel"/>, ASP.NET Core's, as before. TLS and
    /// WebSockets are always served by Kestrel.
    /// </summary>
    public MqttTcpTransport TcpTransport { get; set; } = MqttTcpTransport.Sockets;

    /// <summary>MQTT over TLS; 0 (default) disables it. Needs <see cref="CertificatePath"/>.</summary>
    [Range(0, 65535)]
    public int TlsPort { get; set; }

    /// <summary>PEM (with <see cref="CertificateKeyPath"/>) or PFX server certificate for the TLS listener.</summary>
    public string? CertificatePath { get; set; }

    public string? CertificateKeyPath { get; set; }

    public string? CertificatePassword { get; set; }

    /// <summary>
    /// Ask TLS clients for a certificate. A certificate is handed to the authenticator only when its chain ends at
    /// <see cref="ClientCaPath"/>; otherwise the TLS handshake fails. Set automatically when <see cref="ClientCaPath"/> is
    /// set; set without it, the start fails (every certificate presented would fail the handshake).
    /// </summary>
    public bool RequestClientCertificate { get; set; }

    /// <summary>MQTT over WebSocket on the HTTP port (sub-protocol <c>mqtt</c>); empty disables it.</summary>
    public string WebSocketPath { get; set; } = "/mqtt";

    /// <summary>
    /// Browser origins allowed to open the WebSocket (e.g. <c>https://dashboard.school.lan</c>; <c>*</c> for any).
    /// Empty (default): only pages served by Saito's own HTTP host. Clients that send no Origin (programs) are not affected.
    /// </summary>
    public List<string> WebSocketAllowedOrigins { get; set; } = [];

    /// <summary>
    /// PEM file of the certificate authority whose client certificates identify hubs on the TLS listener (the
    /// certificate's common name is the hub's name). Unset: client certificates are not asked for and identify nobody.
    /// </summary>
    public string? ClientCaPath { get; set; }

    /// <summary>Connections accepted at once; past it a CONNECT is refused with "server unavailable"/"server busy".</summary>
    [Range(1, 1_000_000)]
    public int MaxConnections { get; set; } = 10_000;

    /// <summary>
    /// Largest packet accepted, in bytes (fixed header included). Also announced to 5.0 clients. The default is the
    /// largest payload Saito's ingestion accepts (<c>Ingestion:MaxPayloadBytes</c>, 256 KiB) and 4 KiB for topic and properties.
    /// </summary>
    [Range(64, 268_435_460)]
    public int MaxPacketSize { get; set; } = 260 * 1024;

    /// <summary>
    /// How long, at most, connections wait after start for the start-up work the broker lets finish first
    /// (<see cref="Hosting.IMqttStartGate"/>: in Saito's server, storage's start-up step, which creates the readings'
    /// database schema and loads the devices, and the registry's migrations, which wait for it); past it they are served,
    /// and readings wait for the database as before. 0 serves them at once.
    /// </summary>
    [Range(0, 600)]
    public int StartupWaitSeconds { get; set; } = 5;

    /// <summary>
    /// Connections that have not sent CONNECT yet, at once; past it the oldest of them is closed for the new one (a new
    /// connection is never refused for it, so a flood cannot lock hubs out; see also <see cref="MaxPendingConnectionsPerAddress"/>).
    /// </summary>
    [Range(1, 1_000_000)]
    public int MaxPendingConnections { get; set; } = 1_000;

    /// <summary>
    /// Connections that have not sent CONNECT yet from one address (an IPv4 address, an IPv6 /64), at once; past it the
    /// oldest of them is closed for the new one, so a flood from one network closes only its own connections.
    /// </summary>
    [Range(1, 1_000_000)]
    public int MaxPendingConnectionsPerAddress { get; set; } = 100;

    /// <summary>Connections from one address (an IPv4 address, an IPv6 /64) at once, CONNECT or not; past it a new connection is closed at once.</summary>
    [Range(1, 1_000_000)]
    public int MaxConnectionsPerAddress { get; set; } = 1_000;

    /// <summary>
    /// Seconds a packet has to arrive whole once its first bytes are in; past it the connection is closed. Keep-alive does
    /// not cover this (it counts whole packets, and a client may ask for none): a client that announced a large packet and
    /// then trickled or stopped held its bytes for good.
    /// </summary>
    [Range(1, 3600)]
    public int PacketReadTimeoutSeconds { get; set; } = 30;

    /// <summary>
    /// Bytes held by packets not yet received whole, in all connections (a packet counts once it holds more than 8 KiB,
    /// the read buffer a busy connection has anyway); past it the connections holding the most are closed until the rest
    /// fit. Memory for them is at most about twice this (read buffers grow by doubling).
    /// </summary>
    [Range(64 * 1024, long.MaxValue)]
    public long MaxUnfinishedPacketBytes { get; set; } = 32 * 1024 * 1024;

    /// <summary>Sessions kept in total, connected or waiting for their client (persistent sessions); past it a CONNECT that needs a new session is refused.</summary>
    [Range(1, 10_000_000)]
    public int MaxSessions { get; set; } = 20_000;

    /// <summary>Longest client identifier accepted, in characters; a longer one is refused ("identifier rejected" / "client identifier not valid").</summary>
    [Range(23, 65535)]
    public int MaxClientIdLength { get; set; } = 128;

    /// <summary>Subscriptions one session may hold; past it a SUBSCRIBE is refused for the extra filters (5.0: "quota exceeded").</summary>
    [Range(1, 1_000_000)]
    public int MaxSubscriptionsPerSession { get; set; } = 100;

    /// <summary>Longest topic name or filter, in characters (a shared subscription's <c>$share/{group}/</c> included).</summary>
    [Range(1, 65535)]
    public int MaxTopicLength { get; set; } = 512;

    /// <summary>Most levels in a topic name or filter (VerneMQ's <c>topic_max_depth</c> is 10; Saito's reading topics have 4).</summary>
    [Range(1, 1000)]
    public int MaxTopicLevels { get; set; } = 16;

    /// <summary>Payload bytes one connection may have waiting for the publish hook's verdict (the database commit); past it Saito stops reading from that connection until some are acknowledged.</summary>
    [Range(1024, int.MaxValue)]
    public int MaxPendingBytesPerClient { get; set; } = 8 * 1024 * 1024;

    /// <summary>
    /// Bytes queued for one session (beside <see cref="MaxQueuedMessages"/>), counting payload, topic and 64 B of bookkeeping
    /// per message; past it new messages for that session are dropped, counted for it and logged. Publishers are not slowed.
    /// </summary>
    [Range(1024, long.MaxValue)]
    public long MaxQueuedBytesPerSession { get; set; } = 16 * 1024 * 1024;

    /// <summary>Publishes per second one connection may send (a burst of one second's worth); past it Saito stops reading from the connection until the rate falls: throttled, never dropped. 0 turns it off.</summary>
    [Range(0, 10_000_000)]
    public int MaxMessagesPerSecondPerClient { get; set; } = 10_000;

    /// <summary>
    /// Accept clients without credentials. Unset (the default): accepted only while every MQTT listener (TCP, TLS and
    /// the WebSocket path on the HTTP addresses) binds to a loopback address, as Mosquitto 2 does without a listener
    /// configured; a listener on any other address then stops Saito at start with a message naming this setting.
    /// <c>false</c>: every client needs credentials. <c>true</c>: anyone who can reach a listener may publish (opt-in).
    /// </summary>
    public bool? AllowAnonymous { get; set; }

    /// <summary>Set at start: every MQTT listener is on a loopback address (the try-it flow); anonymous clients may then also subscribe.</summary>
    public bool LoopbackOnly { get; internal set; }

    /// <summary>Inbound QoS 1/2 publishes a client may have unacknowledged (announced as Receive Maximum in 5.0).</summary>
    [Range(1, 65535)]
    public int ReceiveMaximum { get; set; } = 256;

    /// <summary>Outbound QoS 1/2 messages in flight per client (a 5.0 client may ask for fewer).</summary>
    [Range(1, 65535)]
    public int MaxInflightMessages { get; set; } = 64;

    /// <summary>
    /// Messages queued per session beyond the inflight window; past it new messages for that session are dropped and
    /// counted. 50,000 (10,000 before issue 15): a subscriber on <c>#</c> falls up to about 21,000 small readings behind
    /// in a server's first second while .NET compiles the hot paths, and catches up; with 10,000 it lost some in 8 of 12
    /// cold starts at 128,000 msg/s, with 50,000 in none of 16 (benchmarks/results/HISTORY.md). Memory stays bounded by
    /// <see cref="MaxQueuedBytesPerSession"/>, which a queue of 50,000 one-reading messages (about 10 MB) is under.
    /// </summary>
    [Range(1, 10_000_000)]
    public int MaxQueuedMessages { get; set; } = 50_000;

    /// <summary>Topic aliases a 5.0 client may set towards the broker.</summary>
    [Range(0, 65535)]
    public int TopicAliasMaximum { get; set; } = 64;

    /// <summary>
    /// How often, in seconds, the log gets a line at Information that sums up the connections (connected, disconnected,
    /// refused by reason, open now), and only when one of them changed; each connection's own lines are at Debug.
    /// </summary>
    [Range(1, 86_400, ErrorMessage = "Mqtt:ConnectionSummarySeconds must be between 1 and 86400 (a day): how often, in seconds, the summary of MQTT connections is logged.")]
    public int ConnectionSummarySeconds { get; set; } = 60;

    /// <summary>Seconds a new connection has to send CONNECT.</summary>
    [Range(1, 3600)]
    public int ConnectTimeoutSeconds { get; set; } = 10;

    /// <summary>When set, 5.0 clients are told to use this keep-alive (Server Keep Alive) and 3.1.1 clients asking for more or none are held to it.</summary>
    [Range(0, 65535)]
    public int? ServerKeepAliveSeconds { get; set; }

    /// <summary>
    /// Upper bound on a session's expiry, in seconds: a 5.0 client's Session Expiry Interval, and a 3.1.1 persistent
    /// session (clean session 0), which would otherwise never expire. Default 7 days; 0xFFFFFFFF = never expires.
    /// </summary>
    public uint MaxSessionExpirySeconds { get; set; } = 7 * 24 * 3600;

    /// <summary>
    /// Retained topics kept; past it a retained message on a new topic is not kept (replacing or clearing a kept topic
    /// still works). Only its retention is dropped: the message still goes to current subscribers and its acknowledgement
    /// is the publish hook's (Success when the readings are stored), so the publisher is not asked to send it again for a
    /// retention it cannot fix. Counted in <c>saito.mqtt.messages.dropped{cause=retained_limit}</c> and
    /// <c>saito.mqtt.limits.hit{limit=MaxRetainedMessages}</c>.
    /// </summary>
    [Range(0, 10_000_000)]
    public int MaxRetainedMessages { get; set; } = 100_000;

    /// <summary>
    /// Payload bytes of retained messages in total; a retained message past it is not kept, with the same outcome as
    /// <see cref="MaxRetainedMessages"/>: delivered to current subscribers, acknowledged as the publish hook says, counted in
    /// <c>saito.mqtt.messages.dropped{cause=retained_limit}</c> and <c>saito.mqtt.limits.hit{limit=MaxRetainedBytes}</c>.
    /// </summary>
    [Range(0, long.MaxValue)]
    public long MaxRetainedBytes { get; set; } = 64 * 1024 * 1024;

    /// <summary>Retained messages delivered to one new subscription at most; the rest are not sent (and counted), so one SUBSCRIBE to '#' is bounded work.</summary>
    [Range(0, 10_000_000)]
    public int MaxRetainedPerSubscribe { get; set; } = 10_000;
}

/// <summary>What serves plain MQTT over TCP (<c>Mqtt:TcpTransport</c>).</summary>
public enum MqttTcpTransport
{
    /// <summary>Saito's own socket listener (default).</summary>
    Sockets,

    /// <summary>Kestrel, ASP.NET Core's server, through a connection handler.</summary>
    Kestrel,
}

using System.Security.Cryptography;
using System.Text;

namespace Saito.Testing;

public enum MqttVersion
{
    V311,
    V500,
}

public enum MqttTransport
{
    Tcp,
    Tls,
    WebSocket,
}

/// <summary>A message to publish.</summary>
public sealed record OutgoingMessage(string Topic, ReadOnlyMemory<byte> Payload)
{
    public static OutgoingMessage Text(string topic, string text) => new(topic, Encoding.UTF8.GetBytes(text));

    public override string ToString() => $"{Topic} ({Payload.Length} bytes)";
}

/// <summary>The client's last will, sent by the broker when the client drops without DISCONNECT.</summary>
public sealed record WillMessage(string Topic, string Payload, int QoS = 0, bool Retain = false);

/// <summary>How an external client connects, publishes and subscribes. Defaults: clean session, QoS 0.</summary>
public sealed record ClientOptions
{
    public static ClientOptions Default { get; } = new();

    /// <summary>Null lets the client (or the broker) choose.</summary>
    public string? ClientId { get; init; }

    /// <summary>Clean session (3.1.1) / clean start (5.0).</summary>
    public bool CleanSession { get; init; } = true;

    /// <summary>Session expiry interval (5.0 only).</summary>
    public uint? SessionExpirySeconds { get; init; }

    public WillMessage? Will { get; init; }

    /// <summary>QoS of each PUBLISH, or of each subscription.</summary>
    public int QoS { get; init; }

    public bool Retain { get; init; }

    /// <summary>User properties on each PUBLISH (5.0 only).</summary>
    public IReadOnlyList<KeyValuePair<string, string>> UserProperties { get; init; } = [];

    /// <summary>Deadline for one client run (connect, publish, acknowledgements).</summary>
    public TimeSpan Timeout { get; init; } = TimeSpan.FromSeconds(20);
}

/// <summary>A message as an external subscriber printed it.</summary>
public sealed record ReceivedMessage(string Topic, ReadOnlyMemory<byte> Payload, int QoS, bool Retain)
{
    /// <summary>Null when the client cannot report them (mosquitto_sub), empty when there were none.</summary>
    public IReadOnlyList<KeyValuePair<string, string>>? UserProperties { get; init; }

    public string? ContentType { get; init; }

    public string Text => Encoding.UTF8.GetString(Payload.Span);

    public string Sha256 => Convert.ToHexStringLower(SHA256.HashData(Payload.Span));

    public override string ToString()
    {
        string preview = Payload.Length <= 64 ? $"\"{Text}\"" : $"sha256 {Sha256[..16]}…";
        return $"{Topic} qos {QoS}{(Retain ? " retained" : string.Empty)}, {Payload.Length} bytes {preview}";
    }
}

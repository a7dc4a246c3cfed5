namespace Saito.Ingestion.Hosting;

/// <summary>A message from the external broker, acknowledged (PUBACK or PUBREC) only when Saito says so.</summary>
internal abstract class ExternalBrokerMessage(string topic, ReadOnlyMemory<byte> payload, string? contentType)
{
    public string Topic { get; } = topic;

    public ReadOnlyMemory<byte> Payload { get; } = payload;

    public string? ContentType { get; } = contentType;

    /// <summary>The connection the message came on is still up (an acknowledgement can still reach the broker).</summary>
    public abstract bool IsConnectionOpen { get; }

    /// <summary>
    /// Acknowledges after every earlier message of the same connection (MQTT's order); false when its connection has
    /// dropped (the broker sends it again).
    /// </summary>
    public abstract ValueTask<bool> AcknowledgeAsync();
}

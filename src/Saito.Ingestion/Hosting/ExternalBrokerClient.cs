namespace Saito.Ingestion.Hosting;

/// <summary>
/// The MQTT client external mode runs on (<c>Mqtt:External:Client</c>): Saito's own (<c>Saito.Mqtt.Client</c>) or
/// MQTTnet's, compared in docs/mqtt.md. The consumer only connects, subscribes, reads messages and acknowledges them.
/// </summary>
internal interface IExternalBrokerClient : IAsyncDisposable
{
    bool IsConnected { get; }

    /// <summary>Inbound messages, in arrival order, across reconnects.</summary>
    IAsyncEnumerable<ExternalBrokerMessage> ReadMessagesAsync(CancellationToken cancellationToken);

    /// <summary>Connects once; returns whether the broker kept the session. Reconnects after that are the client's.</summary>
    Task<bool> ConnectAsync(CancellationToken cancellationToken);

    /// <summary>Subscribes (and subscribes again after every reconnect); returns the broker's reason code and reason string.</summary>
    Task<(byte Code, string? Reason)> SubscribeAsync(string topicFilter, int qos, CancellationToken cancellationToken);

    Task DisconnectAsync(CancellationToken cancellationToken);
}

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

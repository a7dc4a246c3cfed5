using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>
/// An inbound PUBLISH, handed to the application through <see cref="MqttClient.Messages"/>. For QoS 1 and 2
/// the broker hears nothing until <see cref="AcknowledgeAsync"/> is called: PUBACK (QoS 1) or PUBREC (QoS 2)
/// is sent then, so a message is acknowledged only once the application has done what it must (for Saito:
/// made the reading durable).
/// </summary>
public sealed class MqttReceivedMessage
{
    private readonly MqttClient? _client;

    internal MqttReceivedMessage(MqttClient? client, MqttClientConnection? connection, in PublishFrame publish, ReadOnlyMemory<byte> payload,
        long sessionEpoch)
    {
        _client = client;
        Connection = connection;
        Topic = publish.Topic;
        Payload = payload;
        QoS = publish.QoS;
        Retain = publish.Retain;
        Dup = publish.Dup;
        PacketId = publish.PacketId;
        Properties = publish.Properties;
        SessionEpoch = sessionEpoch;
    }

    public string Topic { get; }

    /// <summary>A copy owned by this message: it stays valid after acknowledgement.</summary>
    public ReadOnlyMemory<byte> Payload { get; }

    public MqttQoS QoS { get; }

    public bool Retain { get; }

    /// <summary>The broker may have sent this message before (a redelivery after reconnect, for example).</summary>
    public bool Dup { get; }

    /// <summary>Zero for QoS 0. Meaningful only on the connection the message came in on.</summary>
    public ushort PacketId { get; }

    /// <summary>5.0 properties (user properties, content type, subscription identifiers...), or null.</summary>
    public MqttProperties? Properties { get; }

    public bool IsAcknowledged { get; internal set; }

    /// <summary>
    /// False once the connection this message came in on has closed: an acknowledgement can no longer reach the
    /// broker, and a broker holding the session sends the message again on the next connection.
    /// </summary>
    public bool IsConnectionOpen => Connection is not { IsClosed: true };

    internal MqttClientConnection? Connection { get; }

    internal PendingAck? Ack { get; set; }

    internal long SessionEpoch { get; }

    /// <summary>
    /// Records the application's acknowledgement. PUBACK/PUBREC leave in the order the messages arrived (MQTT
    /// requires it), so the packet goes out as soon as every earlier message on the connection is acknowledged
    /// too; this call does not wait for that, nor for the bytes to reach the broker. A second call does nothing.
    /// <para>
    /// Returns false when the connection the message came in on has closed. Its packet identifier is then
    /// stale (the broker may already have reused it), so nothing is sent: a broker holding the session
    /// redelivers the message (DUP set) and it reaches <see cref="MqttClient.Messages"/> again; QoS 1 is at
    /// least once. For QoS 2 the client remembers, within the same session, that the application has the
    /// message: a redelivery arriving after this call is answered with PUBREC and not delivered again.
    /// </para>
    /// <para>
    /// In 5.0 a reason code of 0x80 or above refuses the message (the broker will not redeliver it); 3.1.1
    /// acknowledgements carry no reason code, so there every acknowledgement is a plain success.
    /// </para>
    /// </summary>
    public ValueTask<bool> AcknowledgeAsync(MqttReasonCode reasonCode = MqttReasonCode.Success)
    {
        if (QoS == MqttQoS.AtMostOnce || _client is null)
        {
            IsAcknowledged = true;
            return ValueTask.FromResult(true);
        }

        return ValueTask.FromResult(_client.Acknowledge(this, reasonCode));
    }

    public override string ToString() => $"{Topic} (QoS {(int)QoS}, id {PacketId}, {Payload.Length} bytes{(Dup ? ", dup" : string.Empty)})";
}

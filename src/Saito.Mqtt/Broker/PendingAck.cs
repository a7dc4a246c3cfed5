using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The acknowledgement owed for one inbound publish, waiting for the hook's verdict. Kept in a queue in
/// arrival order so acknowledgements leave in the order their publishes came, whatever order verdicts land in.
/// QoS 0 publishes queue an entry too (nothing is sent for them) so that hook work stays bounded.
/// </summary>
internal sealed class PendingAck
{
    public PendingAck(ushort packetId, MqttQoS qos, int size)
    {
        PacketId = packetId;
        QoS = qos;
        Size = size;
    }

    public ushort PacketId { get; }

    /// <summary>Payload bytes held until the verdict (counted against MaxPendingBytesPerClient).</summary>
    public int Size { get; }
    public MqttQoS QoS { get; }

    /// <summary>Set by the hook's completion; read by the sender. Volatile: written on one thread, read on another.</summary>
    public volatile bool Done;

    public MqttPublishVerdict Verdict { get; set; }

    /// <summary>When the PUBLISH was read (<see cref="System.Diagnostics.Stopwatch"/> timestamp), for a publish the hook decides; 0 otherwise.</summary>
    public long ReadAt { get; init; }

    /// <summary>Completes with the verdict (QoS 2 only: a DUP on a resumed session waits on it). Null for QoS 0 and 1.</summary>
    public TaskCompletionSource<MqttPublishVerdict>? Completion { get; init; }
}

/// <summary>A 3.1.1 publish the broker refuses (topic limit, ACL): 3.1.1 has no negative acknowledgement, so the connection closes.</summary>
internal sealed class MqttPublishRefusedException(MqttReasonCode reasonCode, string message) : Exception(message)
{
    public MqttReasonCode ReasonCode { get; } = reasonCode;
}

using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The acknowledgement owed for one inbound publish, waiting for the hook's verdict. Kept in a queue in
/// arrival order so acknowledgements leave in the order their publishes came, whatever order verdicts land in.
/// QoS 0 publishes queue an entry too (nothing is sent for them) so that hook work stays bounded.
/// </summary>
internal sealed class PendingAck
{
    public PendingAck(ushort packetId, MqttQoS qos)
    {
        PacketId = packetId;
        QoS = qos;
    }

    public ushort PacketId { get; }
    public MqttQoS QoS { get; }

    /// <summary>Set by the hook's completion; read by the sender. Volatile: written on one thread, read on another.</summary>
    public volatile bool Done;

    public MqttPublishVerdict Verdict { get; set; }
}

using System.Buffers;

namespace Saito.Mqtt.Packets;

/// <summary>
/// PUBLISH as decoded on the hot path: no allocation (the topic comes from a <see cref="MqttTopicCache"/>,
/// the payload is a slice of the receive buffer, valid until that buffer is advanced).
/// </summary>
public readonly struct PublishFrame(string topic, ReadOnlySequence<byte> payload, MqttQoS qos, bool retain, bool dup, ushort packetId, MqttProperties? properties)
{
    public string Topic { get; } = topic;
    public ReadOnlySequence<byte> Payload { get; } = payload;
    public MqttQoS QoS { get; } = qos;
    public bool Retain { get; } = retain;
    public bool Dup { get; } = dup;
    public ushort PacketId { get; } = packetId;
    public MqttProperties? Properties { get; } = properties;
}

using System.Buffers;
using Saito.Mqtt.Packets;

namespace Saito.Benchmarks;

/// <summary>What a busy sensor hub sends: QoS 1 PUBLISH to a handful of topics, one fixed payload size.</summary>
internal static class PublishWorkload
{
    /// <summary>Packets per benchmark invocation; results are per packet (OperationsPerInvoke).</summary>
    public const int Batch = 1_000;

    public static readonly string[] Topics =
    [
        "site-1/hall-3/temperature",
        "site-1/hall-3/humidity",
        "site-1/hall-4/temperature",
        "saito/site-2/pump-17/pressure",
    ];

    public static byte[] Payload(int size)
    {
        var payload = new byte[size];
        new Random(42).NextBytes(payload);
        return payload;
    }

    /// <summary>The batch as it would sit in a connection's receive buffer: packets back to back.</summary>
    public static byte[] EncodedBatch(MqttProtocolVersion version, byte[] payload)
    {
        var writer = new ArrayBufferWriter<byte>();
        for (int i = 0; i < Batch; i++)
        {
            MqttPacketEncoder.EncodePublish(writer, version, Topics[i % Topics.Length], new ReadOnlySequence<byte>(payload),
                MqttQoS.AtLeastOnce, retain: false, dup: false, packetId: (ushort)(i + 1), properties: null);
        }

        return writer.WrittenSpan.ToArray();
    }
}

using System.Buffers;
using BenchmarkDotNet.Attributes;
using Saito.Mqtt.Packets;

namespace Saito.Benchmarks;

/// <summary>
/// The outbound hot path: <see cref="MqttPacketEncoder.EncodePublish"/> of <see cref="PublishWorkload.Batch"/>
/// QoS 1 packets into one reusable <see cref="ArrayBufferWriter{T}"/> that is reset per invocation.
/// Time and allocation are per packet; the target allocation is zero.
/// </summary>
[MemoryDiagnoser]
public class PublishEncodeBenchmarks
{
    private ArrayBufferWriter<byte> _writer = null!;
    private ReadOnlySequence<byte> _payload;

    [Params(MqttProtocolVersion.V311, MqttProtocolVersion.V500)]
    public MqttProtocolVersion Version { get; set; }

    [Params(64, 10 * 1024)]
    public int PayloadSize { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _payload = new ReadOnlySequence<byte>(PublishWorkload.Payload(PayloadSize));
        _writer = new ArrayBufferWriter<byte>(PublishWorkload.Batch * (PayloadSize + 64));
        _ = EncodeBatch();
    }

    [Benchmark(OperationsPerInvoke = PublishWorkload.Batch)]
    public int EncodeBatch()
    {
        _writer.ResetWrittenCount();
        var topics = PublishWorkload.Topics;
        for (int i = 0; i < PublishWorkload.Batch; i++)
        {
            MqttPacketEncoder.EncodePublish(_writer, Version, topics[i & 3], _payload, MqttQoS.AtLeastOnce,
                retain: false, dup: false, packetId: (ushort)(i + 1), properties: null);
        }

        return _writer.WrittenCount;
    }
}

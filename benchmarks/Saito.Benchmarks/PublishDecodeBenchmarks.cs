using System.Buffers;
using BenchmarkDotNet.Attributes;
using Saito.Mqtt.Packets;

namespace Saito.Benchmarks;

/// <summary>
/// The inbound hot path: frame-read then <see cref="MqttPacketDecoder.DecodePublish"/> with a warm
/// <see cref="MqttTopicCache"/>, over a receive buffer holding <see cref="PublishWorkload.Batch"/>
/// packets. Time and allocation are per packet. The payload is a slice of the buffer, so the
/// target allocation is zero.
/// </summary>
[MemoryDiagnoser]
public class PublishDecodeBenchmarks
{
    private readonly MqttTopicCache _topics = new();
    private ReadOnlySequence<byte> _received;

    [Params(MqttProtocolVersion.V311, MqttProtocolVersion.V500)]
    public MqttProtocolVersion Version { get; set; }

    [Params(64, 10 * 1024)]
    public int PayloadSize { get; set; }

    /// <summary>Whether the buffer arrives as one block or in 4 KiB segments, as a Kestrel pipe hands it over.</summary>
    [Params(false, true)]
    public bool Segmented { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        byte[] bytes = PublishWorkload.EncodedBatch(Version, PublishWorkload.Payload(PayloadSize));
        _received = Segmented ? Segments.Of(bytes, 4096) : new ReadOnlySequence<byte>(bytes);
        _ = DecodeBatch(); // warms the topic cache
    }

    [Benchmark(OperationsPerInvoke = PublishWorkload.Batch)]
    public long DecodeBatch()
    {
        var buffer = _received;
        long payloadBytes = 0;
        while (MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var frame))
        {
            var publish = MqttPacketDecoder.DecodePublish(frame, Version, _topics);
            payloadBytes += publish.Payload.Length + publish.PacketId;
        }

        return payloadBytes;
    }
}

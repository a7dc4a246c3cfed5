using System.Buffers;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>Encodes, frames and decodes packets the way a connection does, for the codec tests.</summary>
internal static class Wire
{
    /// <summary>A maximum packet size no packet can exceed (the largest remaining length plus its header).</summary>
    public const int NoLimit = int.MaxValue;

    public static byte[] Encode(MqttPacket packet, MqttProtocolVersion version)
    {
        var writer = new ArrayBufferWriter<byte>();
        int written = MqttPacketEncoder.Encode(writer, packet, version);
        written.ShouldBe(writer.WrittenCount, "Encode must return the number of bytes it wrote");
        return writer.WrittenSpan.ToArray();
    }

    /// <summary>Reads exactly one whole packet from <paramref name="buffer"/> and decodes it.</summary>
    public static MqttPacket DecodeSingle(ReadOnlySequence<byte> buffer, MqttProtocolVersion version, MqttTopicCache? cache = null)
    {
        long length = buffer.Length;
        MqttFrameReader.TryRead(ref buffer, NoLimit, out var frame).ShouldBeTrue("a whole packet was in the buffer");
        buffer.IsEmpty.ShouldBeTrue("the frame reader took exactly one packet");
        frame.Size.ShouldBe((int)length);
        return MqttPacketDecoder.Decode(frame, version, cache);
    }

    public static MqttPacket DecodeSingle(byte[] bytes, MqttProtocolVersion version) =>
        DecodeSingle(new ReadOnlySequence<byte>(bytes), version);

    /// <summary>
    /// Frames and decodes everything in <paramref name="bytes"/> and expects the standard to be broken
    /// somewhere: returns the exception the codec raised.
    /// </summary>
    public static MqttProtocolException Refuse(byte[] bytes, MqttProtocolVersion version, int maxPacketSize = NoLimit) =>
        Should.Throw<MqttProtocolException>(() => DecodeAll(new ReadOnlySequence<byte>(bytes), version, maxPacketSize));

    /// <summary>Decodes every whole packet in the buffer; returns them and whether bytes were left over (need more data).</summary>
    public static (List<MqttPacket> Packets, bool NeedsMore) DecodeAll(ReadOnlySequence<byte> buffer, MqttProtocolVersion version,
        int maxPacketSize = NoLimit, MqttTopicCache? cache = null)
    {
        var packets = new List<MqttPacket>();
        while (MqttFrameReader.TryRead(ref buffer, maxPacketSize, out var frame))
        {
            packets.Add(MqttPacketDecoder.Decode(frame, version, cache));
        }

        return (packets, !buffer.IsEmpty);
    }

    /// <summary>
    /// The bytes as a pipe would hand them over: several separately allocated segments, cut at
    /// <paramref name="cuts"/> (ascending offsets; repeated offsets give empty segments).
    /// </summary>
    public static ReadOnlySequence<byte> Segmented(ReadOnlySpan<byte> bytes, params ReadOnlySpan<int> cuts)
    {
        var first = new Segment(bytes[..(cuts.Length > 0 ? cuts[0] : bytes.Length)].ToArray(), 0);
        var last = first;
        for (int i = 0; i < cuts.Length; i++)
        {
            int end = i + 1 < cuts.Length ? cuts[i + 1] : bytes.Length;
            last = last.Append(bytes[cuts[i]..end].ToArray());
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}

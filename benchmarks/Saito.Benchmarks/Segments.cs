using System.Buffers;

namespace Saito.Benchmarks;

/// <summary>Builds a multi-segment <see cref="ReadOnlySequence{T}"/>, the shape a pipe reader returns.</summary>
internal sealed class Segments : ReadOnlySequenceSegment<byte>
{
    private Segments(ReadOnlyMemory<byte> memory, long runningIndex)
    {
        Memory = memory;
        RunningIndex = runningIndex;
    }

    public static ReadOnlySequence<byte> Of(byte[] bytes, int segmentSize)
    {
        var first = new Segments(bytes.AsMemory(0, Math.Min(segmentSize, bytes.Length)).ToArray(), 0);
        var last = first;
        for (int offset = segmentSize; offset < bytes.Length; offset += segmentSize)
        {
            var next = new Segments(bytes.AsMemory(offset, Math.Min(segmentSize, bytes.Length - offset)).ToArray(), offset);
            last.Next = next;
            last = next;
        }

        return new ReadOnlySequence<byte>(first, 0, last, last.Memory.Length);
    }
}

using System.Buffers;

namespace Saito.Mqtt.Packets;

/// <summary>
/// One whole MQTT packet as it arrived: the first byte of the fixed header and the body (variable
/// header and payload), still in the connection's receive buffer. Valid until that buffer is advanced.
/// </summary>
public readonly struct MqttFrame
{
    public MqttFrame(byte header, ReadOnlySequence<byte> body, int size)
    {
        Header = header;
        Body = body;
        Size = size;
    }

    public byte Header { get; }
    public ReadOnlySequence<byte> Body { get; }

    /// <summary>The whole packet's size in bytes, fixed header included.</summary>
    public int Size { get; }

    public MqttPacketType Type => (MqttPacketType)(Header >> 4);
    public int Flags => Header & 0x0F;
}

public static class MqttFrameReader
{
    /// <summary>The largest remaining length the 4-byte variable byte integer can express.</summary>
    public const int MaxRemainingLength = 268_435_455;

    /// <summary>
    /// Takes one whole packet off the front of <paramref name="buffer"/> when it is all there.
    /// Returns false (buffer untouched) when more bytes are needed. Throws
    /// <see cref="MqttProtocolException"/> for a reserved type, reserved flags, a bad remaining length,
    /// or a packet larger than <paramref name="maxPacketSize"/>; the size check happens as soon as the
    /// fixed header is in, so a packet that lies about its size is refused before its body arrives.
    /// </summary>
    public static bool TryRead(ref ReadOnlySequence<byte> buffer, int maxPacketSize, out MqttFrame frame)
    {
        frame = default;
        if (buffer.IsEmpty)
        {
            return false;
        }

        Span<byte> head = stackalloc byte[5];
        int available = (int)Math.Min(buffer.Length, 5);
        buffer.Slice(0, available).CopyTo(head);

        byte header = head[0];
        ValidateFixedHeader(header);

        int remaining = 0;
        int multiplier = 1;
        int index = 1;
        while (true)
        {
            if (index >= available)
            {
                if (index >= 5)
                {
                    throw MqttProtocolException.Malformed("Remaining length is longer than four bytes");
                }

                return false;
            }

            byte b = head[index++];
            remaining += (b & 0x7F) * multiplier;
            if ((b & 0x80) == 0)
            {
                break;
            }

            if (index == 5)
            {
                throw MqttProtocolException.Malformed("Remaining length is longer than four bytes");
            }

            multiplier *= 128;
        }

        long total = (long)index + remaining;
        if (total > maxPacketSize)
        {
            throw new MqttProtocolException(MqttReasonCode.PacketTooLarge,
                $"Packet of {total} bytes exceeds the maximum packet size of {maxPacketSize}");
        }

        if (buffer.Length < total)
        {
            return false;
        }

        frame = new MqttFrame(header, buffer.Slice(index, remaining), (int)total);
        buffer = buffer.Slice(total);
        return true;
    }

    /// <summary>
    /// The whole size of the packet that <paramref name="start"/> begins with, fixed header included, as its remaining
    /// length says; 0 while the remaining length is not all there or is longer than four bytes. Checks nothing else
    /// (<see cref="TryRead"/> does): a transport uses it to size a buffer for a packet still arriving.
    /// </summary>
    public static long PacketSize(ReadOnlySpan<byte> start)
    {
        long remaining = 0;
        int multiplier = 1;
        for (int index = 1; index < Math.Min(start.Length, 5); index++)
        {
            byte b = start[index];
            remaining += (b & 0x7F) * (long)multiplier;
            if ((b & 0x80) == 0)
            {
                return index + 1 + remaining;
            }

            multiplier *= 128;
        }

        return 0;
    }

    private static void ValidateFixedHeader(byte header)
    {
        var type = (MqttPacketType)(header >> 4);
        int flags = header & 0x0F;
        switch (type)
        {
            case 0:
                throw MqttProtocolException.Malformed("Packet type 0 is reserved");
            case MqttPacketType.Publish:
                if ((flags & 0x06) == 0x06)
                {
                    throw MqttProtocolException.Malformed("PUBLISH with QoS 3");
                }

                if ((flags & 0x06) == 0 && (flags & 0x08) != 0)
                {
                    throw MqttProtocolException.Malformed("PUBLISH with QoS 0 and DUP set");
                }

                break;
            case MqttPacketType.PubRel:
            case MqttPacketType.Subscribe:
            case MqttPacketType.Unsubscribe:
                if (flags != 0x02)
                {
                    throw MqttProtocolException.Malformed($"{type} with reserved flags 0x{flags:X}");
                }

                break;
            default:
                if (flags != 0)
                {
                    throw MqttProtocolException.Malformed($"{type} with reserved flags 0x{flags:X}");
                }

                break;
        }
    }
}

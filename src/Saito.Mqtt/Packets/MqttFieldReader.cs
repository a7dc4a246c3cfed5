using System.Buffers;
using System.Buffers.Binary;
using System.Text.Unicode;

namespace Saito.Mqtt.Packets;

/// <summary>Reads MQTT data types (section 1.5) from a packet body; every misstep is a malformed packet.</summary>
internal ref struct MqttFieldReader
{
    private SequenceReader<byte> _reader;

    public MqttFieldReader(ReadOnlySequence<byte> body) => _reader = new SequenceReader<byte>(body);

    public readonly long Remaining => _reader.Remaining;

    public readonly bool End => _reader.End;

    public byte ReadByte()
    {
        if (!_reader.TryRead(out byte value))
        {
            throw MqttProtocolException.Malformed("Packet ended inside a byte field");
        }

        return value;
    }

    public ushort ReadUInt16()
    {
        if (!_reader.TryReadBigEndian(out short value))
        {
            throw MqttProtocolException.Malformed("Packet ended inside a two-byte integer");
        }

        return (ushort)value;
    }

    public uint ReadUInt32()
    {
        if (!_reader.TryReadBigEndian(out int value))
        {
            throw MqttProtocolException.Malformed("Packet ended inside a four-byte integer");
        }

        return (uint)value;
    }

    /// <summary>
    /// A variable byte integer in a packet body. These exist only in 5.0 (property lengths, property
    /// identifiers, subscription identifiers), where the shortest encoding is required [MQTT-1.5.5-1].
    /// </summary>
    public int ReadVariableByteInteger()
    {
        int value = 0;
        int multiplier = 1;
        for (int i = 0; i < 4; i++)
        {
            byte b = ReadByte();
            value += (b & 0x7F) * multiplier;
            if ((b & 0x80) == 0)
            {
                if (b == 0 && i > 0)
                {
                    throw MqttProtocolException.Malformed("Variable byte integer is not in its shortest form");
                }

                return value;
            }

            multiplier *= 128;
        }

        throw MqttProtocolException.Malformed("Variable byte integer longer than four bytes");
    }

    public ReadOnlySequence<byte> ReadBytes(int length)
    {
        if (_reader.Remaining < length)
        {
            throw MqttProtocolException.Malformed("Packet ended inside a field");
        }

        var slice = _reader.UnreadSequence.Slice(0, length);
        _reader.Advance(length);
        return slice;
    }

    public ReadOnlyMemory<byte> ReadBinary()
    {
        int length = ReadUInt16();
        return ReadBytes(length).ToArray();
    }

    public ReadOnlySequence<byte> ReadToEnd()
    {
        var rest = _reader.UnreadSequence;
        _reader.AdvanceToEnd();
        return rest;
    }

    public string ReadString(MqttTopicCache? cache = null)
    {
        int length = ReadUInt16();
        if (length == 0)
        {
            return string.Empty;
        }

        if (_reader.Remaining < length)
        {
            throw MqttProtocolException.Malformed("Packet ended inside a string");
        }

        ReadOnlySpan<byte> utf8;
        byte[]? rented = null;
        if (_reader.UnreadSpan.Length >= length)
        {
            utf8 = _reader.UnreadSpan[..length];
        }
        else
        {
            rented = ArrayPool<byte>.Shared.Rent(length);
            _reader.UnreadSequence.Slice(0, length).CopyTo(rented);
            utf8 = rented.AsSpan(0, length);
        }

        try
        {
            string result = DecodeUtf8(utf8, cache);
            _reader.Advance(length);
            return result;
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<byte>.Shared.Return(rented);
            }
        }
    }

    private static string DecodeUtf8(ReadOnlySpan<byte> utf8, MqttTopicCache? cache)
    {
        char[]? rented = null;
        Span<char> chars = utf8.Length <= 256
            ? stackalloc char[256]
            : (rented = ArrayPool<char>.Shared.Rent(utf8.Length));
        try
        {
            var status = Utf8.ToUtf16(utf8, chars, out _, out int written, replaceInvalidSequences: false);
            if (status != OperationStatus.Done)
            {
                throw MqttProtocolException.Malformed("String is not well-formed UTF-8");
            }

            var text = chars[..written];
            if (text.Contains('\0'))
            {
                throw MqttProtocolException.Malformed("String contains U+0000");
            }

            return cache is null ? new string(text) : cache.GetOrAdd(text);
        }
        finally
        {
            if (rented is not null)
            {
                ArrayPool<char>.Shared.Return(rented);
            }
        }
    }

    internal static void WriteUInt16(Span<byte> destination, ushort value) => BinaryPrimitives.WriteUInt16BigEndian(destination, value);
}

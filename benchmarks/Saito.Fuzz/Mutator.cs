using System.Buffers.Binary;

namespace Saito.Fuzz;

/// <summary>
/// Byte-level mutations in the manner of AFL's havoc stage, plus the ones that hurt parsers of length-prefixed
/// and nested formats: lengths set to lie, chunks repeated hundreds of times (deep nesting, many levels),
/// splices of two inputs, cuts, and the target's own tokens put in or written over.
/// </summary>
internal sealed class Mutator
{
    public const int MaxInput = 320 * 1024;

    private static readonly byte[] InterestingBytes = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, 0x0F, 0x10, 0x20, 0x30, 0x40, (byte)'"', (byte)'\\', (byte)'{', (byte)'[', (byte)'/'];
    private static readonly ushort[] InterestingLengths = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x100, 0x3FFF, 0x4000, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF];

    private readonly Random _random;
    private readonly IReadOnlyList<byte[]> _tokens;

    public Mutator(Random random, IReadOnlyList<byte[]> tokens)
    {
        _random = random;
        _tokens = tokens;
    }

    /// <summary>One to eight stacked mutations of <paramref name="input"/>; <paramref name="other"/> is for splicing.</summary>
    public byte[] Mutate(byte[] input, byte[] other)
    {
        var data = new List<byte>(input);
        int rounds = 1 << _random.Next(4);
        for (int i = 0; i < rounds; i++)
        {
            MutateOnce(data, other);
            if (data.Count > MaxInput)
            {
                data.RemoveRange(MaxInput, data.Count - MaxInput);
            }
        }

        return [.. data];
    }

    private void MutateOnce(List<byte> data, byte[] other)
    {
        int at = data.Count == 0 ? 0 : _random.Next(data.Count);
        switch (_random.Next(14))
        {
            case 0 when data.Count > 0:
                data[at] ^= (byte)(1 << _random.Next(8));
                break;
            case 1 when data.Count > 0:
                data[at] = InterestingBytes[_random.Next(InterestingBytes.Length)];
                break;
            case 2 when data.Count > 0:
                data[at] = (byte)(data[at] + _random.Next(-16, 17));
                break;
            case 3 when data.Count > 0:
                data[at] = (byte)_random.Next(256);
                break;
            case 4 when data.Count > 1:
                // A big-endian 16-bit length (MQTT strings, packet ids) that lies.
                Span<byte> u16 = stackalloc byte[2];
                BinaryPrimitives.WriteUInt16BigEndian(u16, _random.Next(3) == 0 ? (ushort)(data.Count - at + _random.Next(-3, 4)) : InterestingLengths[_random.Next(InterestingLengths.Length)]);
                int pos = Math.Min(at, data.Count - 2);
                data[pos] = u16[0];
                data[pos + 1] = u16[1];
                break;
            case 5:
                // A variable byte integer (remaining length, property length) that lies, is too long, or is not minimal.
                byte[][] vbis = [[0xFF, 0xFF, 0xFF, 0x7F], [0x80, 0x80, 0x80, 0x80, 0x01], [0x80, 0x00], [0x00], [0x7F], [0x80, 0x01], [(byte)(_random.Next(128) | 0x80), (byte)_random.Next(128)]];
                byte[] vbi = vbis[_random.Next(vbis.Length)];
                data.RemoveRange(at, Math.Min(_random.Next(1, 5), data.Count - at));
                data.InsertRange(Math.Min(at, data.Count), vbi);
                break;
            case 6 when data.Count > 0:
                data.RemoveRange(at, Math.Min(1 + _random.Next(Math.Min(64, data.Count)), data.Count - at));
                break;
            case 7 when data.Count > 0:
                // Cut short.
                data.RemoveRange(at, data.Count - at);
                break;
            case 8 when data.Count > 0:
                // Repeat a chunk: tens to thousands of times now and then (nesting, levels, properties).
                int length = 1 + _random.Next(Math.Min(16, data.Count - at));
                byte[] chunk = [.. data.GetRange(at, length)];
                int times = _random.Next(8) == 0 ? _random.Next(10, 20_000) : _random.Next(1, 8);
                times = Math.Min(times, Math.Max(1, (MaxInput - data.Count) / length));
                byte[] repeated = new byte[chunk.Length * times];
                for (int i = 0; i < times; i++)
                {
                    chunk.CopyTo(repeated, i * chunk.Length);
                }

                data.InsertRange(at, repeated);
                break;
            case 9 when other.Length > 0:
                // Splice: this input's head, the other's tail.
                int from = _random.Next(other.Length);
                data.RemoveRange(at, data.Count - at);
                data.AddRange(other.AsSpan(from).ToArray());
                break;
            case 10 when _tokens.Count > 0:
                data.InsertRange(at, _tokens[_random.Next(_tokens.Count)]);
                break;
            case 11 when _tokens.Count > 0 && data.Count > 0:
                byte[] token = _tokens[_random.Next(_tokens.Count)];
                for (int i = 0; i < token.Length && at + i < data.Count; i++)
                {
                    data[at + i] = token[i];
                }

                break;
            case 12:
                byte[] random = new byte[1 + _random.Next(16)];
                _random.NextBytes(random);
                data.InsertRange(at, random);
                break;
            case 13 when data.Count > 1:
                // Swap two chunks' worth of bytes: fields out of order.
                int a = _random.Next(data.Count);
                int b = _random.Next(data.Count);
                (data[a], data[b]) = (data[b], data[a]);
                break;
            default:
                data.Insert(at, InterestingBytes[_random.Next(InterestingBytes.Length)]);
                break;
        }
    }
}

using System.Buffers.Binary;
using Npgsql;
using Saito.Readings;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;

namespace Saito.Storage.Archive;

/// <summary>
/// The archiver's rows in and out of PostgreSQL as raw binary COPY. In: <see cref="PgBinaryCopy"/>, the encoder the
/// readings' writes use (Npgsql's <see cref="NpgsqlBinaryImporter"/> bound every value through its type resolution: with
/// four workers that was half of the archiver's CPU and PostgreSQL's backends sat in <c>ClientRead</c>,
/// docs/archiver.md#speed). Out: <c>COPY (query) TO STDOUT (FORMAT BINARY)</c>, decoded here. The format (PostgreSQL's
/// "Binary Format" of COPY): an 11-byte signature, flags and header-extension length; per row the field count (int16),
/// then per field its length (int32, -1 for NULL) and its bytes, big-endian: <c>uuid</c> its 16 bytes in RFC order,
/// <c>integer</c> 4 bytes, <c>timestamptz</c> microseconds since 2000-01-01 UTC (int64), <c>double precision</c> IEEE
/// 754 (8 bytes); a trailer of -1 (int16).
/// </summary>
internal static class PostgresArchiveCopy
{
    private static ReadOnlySpan<byte> Signature => [(byte)'P', (byte)'G', (byte)'C', (byte)'O', (byte)'P', (byte)'Y', (byte)'\n', 0xFF, (byte)'\r', (byte)'\n', 0];

    /// <summary>Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).</summary>
    private const long PostgresEpochMicros = 946_684_800_000_000;

    /// <summary>A row at most: field count, a uuid, two integers, two times, four values (with their lengths); sizes the read buffer.</summary>
    private const int MaxRowBytes = 2 + (4 + 16) + (2 * (4 + 4)) + (2 * (4 + 8)) + (4 * (4 + 8));

    /// <summary>
    /// Copies <paramref name="rows"/> into <paramref name="table"/> (its columns in <see cref="ReadingTables.Columns"/>
    /// order) through <see cref="PgBinaryCopy"/>, the readings' own encoder: an interrupted copy is cancelled and keeps
    /// nothing, and a cancelled one reads as a cancellation.
    /// </summary>
    public static async Task CopyAsync(NpgsqlConnection connection, string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows,
        CancellationToken cancellationToken)
    {
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        short fields = (short)ReadingTables.Columns(kind, keys).Count;
        await using var copy = await PgBinaryCopy.BeginAsync(connection,
            $"COPY {table} ({string.Join(", ", ReadingTables.Columns(kind, keys))}) FROM STDIN (FORMAT BINARY)", timeout: null, cancellationToken);
        for (int i = 0; i < rows.Count; i++)
        {
            var reading = rows[i].Reading;
            await copy.StartRowAsync(fields, cancellationToken);
            if (keys != KeyStrategy.Natural)
            {
                copy.Uuid(rows[i].Id);
            }

            copy.Int32(reading.DeviceId);
            copy.Int32(reading.Channel);
            copy.TimestampTz(reading.Timestamp);
            for (int v = 0; v < valueCount; v++)
            {
                if (ReadingTables.Value(reading, v) is { } value)
                {
                    copy.Float8(value);
                }
                else
                {
                    copy.Null();
                }
            }

            copy.TimestampTz(reading.ReceivedAt);
        }

        // Ends the COPY and waits for the server's answer: a key already in the table throws here (unique violation).
        await copy.CompleteAsync(cancellationToken);
    }

    /// <summary>
    /// The rows of <c>COPY (<paramref name="query"/>) TO STDOUT (FORMAT BINARY)</c>, decoded here from the same format
    /// (the query's columns in <see cref="ReadingTables.Columns"/> order); <paramref name="atHalf"/> is called once half
    /// of <paramref name="expected"/> rows are decoded. The whole answer is read first (about 110 bytes a row), then decoded.
    /// </summary>
    public static async Task<List<ArchiveRow>> ReadAsync(NpgsqlConnection connection, string query, ReadingKind kind, KeyStrategy keys, int expected,
        Action atHalf, CancellationToken cancellationToken)
    {
        var data = new MemoryStream(Math.Min(expected, 1 << 20) * (MaxRowBytes - 20));
        await using (var copy = await connection.BeginRawBinaryCopyAsync($"COPY ({query}) TO STDOUT (FORMAT BINARY)", cancellationToken))
        {
            await copy.CopyToAsync(data, 1 << 16, cancellationToken);
        }

        return Decode(data.GetBuffer().AsSpan(0, (int)data.Length), kind, keys, expected, atHalf);
    }

    private static List<ArchiveRow> Decode(ReadOnlySpan<byte> data, ReadingKind kind, KeyStrategy keys, int expected, Action atHalf)
    {
        if (data.Length < Signature.Length + 8 || !data[..Signature.Length].SequenceEqual(Signature))
        {
            throw new InvalidDataException("COPY TO STDOUT (FORMAT BINARY) did not start with PostgreSQL's binary COPY signature.");
        }

        int valueCount = ReadingTables.ValueColumns(kind).Count;
        int fields = ReadingTables.Columns(kind, keys).Count;
        int at = Signature.Length + 4;
        at += 4 + BinaryPrimitives.ReadInt32BigEndian(data[at..]);
        var rows = new List<ArchiveRow>(Math.Min(expected, 1 << 16));
        int half = expected / 2;
        Span<double?> values = stackalloc double?[4];
        while (true)
        {
            short count = BinaryPrimitives.ReadInt16BigEndian(data[at..]);
            at += 2;
            if (count == -1)
            {
                return rows;
            }

            if (count != fields)
            {
                throw new InvalidDataException($"A row of {count} fields in a binary COPY of {fields} columns.");
            }

            var id = Guid.Empty;
            if (keys != KeyStrategy.Natural)
            {
                id = new Guid(Field(data, ref at, 16), bigEndian: true);
            }

            int device = BinaryPrimitives.ReadInt32BigEndian(Field(data, ref at, 4));
            int channel = BinaryPrimitives.ReadInt32BigEndian(Field(data, ref at, 4));
            var ts = Time(Field(data, ref at, 8));
            values.Clear();
            for (int i = 0; i < valueCount; i++)
            {
                if (BinaryPrimitives.ReadInt32BigEndian(data[at..]) == -1)
                {
                    at += 4;
                }
                else
                {
                    values[i] = BinaryPrimitives.ReadDoubleBigEndian(Field(data, ref at, 8));
                }
            }

            var received = Time(Field(data, ref at, 8));
            rows.Add(new ArchiveRow(id, new Reading(kind, device, channel, ts, received, values[0], values[1], values[2], values[3])));
            if (rows.Count == half)
            {
                atHalf();
            }
        }
    }

    /// <summary>
    /// <paramref name="rows"/> in key order, PostgreSQL's: natural keys by device, channel and time; ids by their 16 bytes
    /// in RFC order, which is <see cref="Guid.CompareTo(Guid)"/>'s order for a <see cref="Guid"/> read big-endian. Sorts
    /// packed keys with the rows' positions beside them and then places each row once (a row is about 100 bytes).
    /// The same list when it is in order already.
    /// </summary>
    public static List<ArchiveRow> SortByKey(List<ArchiveRow> rows, KeyStrategy keys)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var span = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(rows);
        int[] positions = [.. Enumerable.Range(0, span.Length)];
        bool sorted = true;
        if (keys == KeyStrategy.Natural)
        {
            var packed = new UInt128[span.Length];
            for (int i = 0; i < span.Length; i++)
            {
                var r = span[i].Reading;
                // Signed values with the sign bit flipped compare as unsigned ones in the same order.
                ulong high = ((ulong)(uint)(r.DeviceId ^ int.MinValue) << 32) | (uint)(r.Channel ^ int.MinValue);
                packed[i] = new UInt128(high, (ulong)(r.Timestamp.Ticks ^ long.MinValue));
                sorted &= i == 0 || packed[i - 1] < packed[i];
            }

            if (sorted)
            {
                return rows;
            }

            Array.Sort(packed, positions);
        }
        else
        {
            var ids = new Guid[span.Length];
            for (int i = 0; i < span.Length; i++)
            {
                ids[i] = span[i].Id;
                sorted &= i == 0 || ids[i - 1].CompareTo(ids[i]) < 0;
            }

            if (sorted)
            {
                return rows;
            }

            Array.Sort(ids, positions);
        }

        var ordered = new List<ArchiveRow>(span.Length);
        foreach (int position in positions)
        {
            ordered.Add(span[position]);
        }

        return ordered;
    }

    /// <summary>A non-NULL field of <paramref name="length"/> bytes at <paramref name="at"/>, which moves past it.</summary>
    private static ReadOnlySpan<byte> Field(ReadOnlySpan<byte> data, ref int at, int length)
    {
        int actual = BinaryPrimitives.ReadInt32BigEndian(data[at..]);
        if (actual != length)
        {
            throw new InvalidDataException($"A field of {actual} bytes in a binary COPY where {length} were expected.");
        }

        var field = data.Slice(at + 4, length);
        at += 4 + length;
        return field;
    }

    private static DateTime Time(ReadOnlySpan<byte> field) => ReadingTime.FromUnixMicroseconds(BinaryPrimitives.ReadInt64BigEndian(field) + PostgresEpochMicros);
}

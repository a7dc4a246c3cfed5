using System.Buffers;
using System.Buffers.Binary;
using Npgsql;
using Saito.Readings;
using Saito.Storage.Keys;

namespace Saito.Storage.Archive;

/// <summary>
/// Rows into a PostgreSQL table through a raw binary <c>COPY ... FROM STDIN (FORMAT BINARY)</c>, encoded here: each
/// value goes straight into a 64 KB buffer with <see cref="BinaryPrimitives"/>. Npgsql's <see cref="NpgsqlBinaryImporter"/>
/// binds every value through its type resolution (an awaited write per value, a parameter per value); with four
/// workers that was half of the archiver's CPU and PostgreSQL's backends sat in <c>ClientRead</c> (docs/archiver.md#speed).
/// The format (PostgreSQL's "Binary Format" of COPY): an 11-byte signature, flags and header-extension length (0, 0);
/// per row the field count (int16), then per field its length (int32, -1 for NULL) and its bytes, big-endian:
/// <c>uuid</c> its 16 bytes in RFC order, <c>integer</c> 4 bytes, <c>timestamptz</c> microseconds since
/// 2000-01-01 UTC (int64), <c>double precision</c> IEEE 754 (8 bytes); a trailer of -1 (int16).
/// </summary>
internal static class PostgresArchiveCopy
{
    private static ReadOnlySpan<byte> Signature => [(byte)'P', (byte)'G', (byte)'C', (byte)'O', (byte)'P', (byte)'Y', (byte)'\n', 0xFF, (byte)'\r', (byte)'\n', 0];

    private static ReadOnlySpan<byte> HeaderTail => [0, 0, 0, 0, 0, 0, 0, 0];

    /// <summary>Microseconds from the Unix epoch to PostgreSQL's (2000-01-01 UTC).</summary>
    private const long PostgresEpochMicros = 946_684_800_000_000;

    /// <summary>A row at most: field count, a uuid, two integers, two times, four values (with their lengths).</summary>
    private const int MaxRowBytes = 2 + (4 + 16) + (2 * (4 + 4)) + (2 * (4 + 8)) + (4 * (4 + 8));

    /// <summary>Copies <paramref name="rows"/> into <paramref name="table"/> (its columns in <see cref="ReadingTables.Columns"/> order).</summary>
    public static async Task CopyAsync(NpgsqlConnection connection, string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows,
        CancellationToken cancellationToken)
    {
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        short fields = (short)ReadingTables.Columns(kind, keys).Count;
        byte[] buffer = ArrayPool<byte>.Shared.Rent(1 << 16);
        var copy = await connection.BeginRawBinaryCopyAsync(
            $"COPY {table} ({string.Join(", ", ReadingTables.Columns(kind, keys))}) FROM STDIN (FORMAT BINARY)", cancellationToken);
        try
        {
            Signature.CopyTo(buffer);
            HeaderTail.CopyTo(buffer.AsSpan(Signature.Length));
            int used = Signature.Length + HeaderTail.Length;
            for (int i = 0; i < rows.Count; i++)
            {
                if (buffer.Length - used < MaxRowBytes)
                {
                    await copy.WriteAsync(buffer.AsMemory(0, used), cancellationToken);
                    used = 0;
                }

                used += WriteRow(buffer.AsSpan(used), rows[i], keys, fields, valueCount);
            }

            BinaryPrimitives.WriteInt16BigEndian(buffer.AsSpan(used), -1);
            used += 2;
            await copy.WriteAsync(buffer.AsMemory(0, used), cancellationToken);
        }
        catch (Exception failure)
        {
            // Disposing a raw copy stream completes the COPY; an interrupted one must be cancelled instead (nothing is
            // kept). A write cancelled by the token has made Npgsql end the COPY and close the connection already, so
            // cancelling again fails: the caller must see the cancellation, not that (as PgBinaryCopy does).
            try
            {
                await copy.CancelAsync();
            }
            catch (Exception e) when (e is ObjectDisposedException or NpgsqlException or IOException or OperationCanceledException)
            {
                // Ended already, or the connection is gone.
            }

            if (failure is NpgsqlException && cancellationToken.IsCancellationRequested)
            {
                throw new OperationCanceledException("The archive COPY was cancelled while its rows were being sent; the connection was closed.", failure, cancellationToken);
            }

            throw;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        // Ends the COPY and waits for the server's answer: a key already in the table throws here (unique violation).
        await copy.DisposeAsync();
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

    private static int WriteRow(Span<byte> span, in ArchiveRow row, KeyStrategy keys, short fields, int valueCount)
    {
        var reading = row.Reading;
        BinaryPrimitives.WriteInt16BigEndian(span, fields);
        int at = 2;
        if (keys != KeyStrategy.Natural)
        {
            BinaryPrimitives.WriteInt32BigEndian(span[at..], 16);
            row.Id.TryWriteBytes(span[(at + 4)..], bigEndian: true, out _);
            at += 20;
        }

        at += Int32(span[at..], reading.DeviceId);
        at += Int32(span[at..], reading.Channel);
        at += Time(span[at..], reading.Timestamp);
        for (int i = 0; i < valueCount; i++)
        {
            if (ReadingTables.Value(reading, i) is { } value)
            {
                BinaryPrimitives.WriteInt32BigEndian(span[at..], 8);
                BinaryPrimitives.WriteDoubleBigEndian(span[(at + 4)..], value);
                at += 12;
            }
            else
            {
                BinaryPrimitives.WriteInt32BigEndian(span[at..], -1);
                at += 4;
            }
        }

        at += Time(span[at..], reading.ReceivedAt);
        return at;
    }

    private static int Int32(Span<byte> span, int value)
    {
        BinaryPrimitives.WriteInt32BigEndian(span, 4);
        BinaryPrimitives.WriteInt32BigEndian(span[4..], value);
        return 8;
    }

    private static int Time(Span<byte> span, DateTime utc)
    {
        BinaryPrimitives.WriteInt32BigEndian(span, 8);
        BinaryPrimitives.WriteInt64BigEndian(span[4..], ReadingTime.ToUnixMicroseconds(utc) - PostgresEpochMicros);
        return 12;
    }
}

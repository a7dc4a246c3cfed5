using System.Globalization;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>
/// One row of a reading table as the archiver moves it: the reading and, in a GUID-keyed table, its stored
/// <c>id</c> (carried as stored, never recomputed, so a restore onto another server keeps the keys).
/// </summary>
public readonly record struct ArchiveRow(Guid Id, Reading Reading)
{
    /// <summary>The row's key in the table's primary-key order, as text for the journal and manifests.</summary>
    public string KeyText(KeyStrategy keys) => keys == KeyStrategy.Natural
        ? RowKey.Natural(Reading.DeviceId, Reading.Channel, ReadingTime.ToUnixMicroseconds(Reading.Timestamp)).ToString()
        : RowKey.ForId(Id).ToString();
}

/// <summary>
/// A primary key of a reading table: (device_id, channel, ts in microseconds) under the natural key, or the
/// 16-byte id of a GUID table. Text form: <c>device/channel/micros</c> or the GUID's 32 hex digits, which parses back.
/// </summary>
public readonly record struct RowKey(bool IsId, int DeviceId, int Channel, long TsMicros, Guid Id)
{
    public static RowKey Natural(int deviceId, int channel, long tsMicros) => new(false, deviceId, channel, tsMicros, Guid.Empty);

    public static RowKey ForId(Guid id) => new(true, 0, 0, 0, id);

    public override string ToString() => IsId
        ? Id.ToString("N")
        : string.Create(CultureInfo.InvariantCulture, $"{DeviceId}/{Channel}/{TsMicros}");

    public static RowKey Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        string[] parts = text.Split('/');
        if (parts.Length == 3)
        {
            return Natural(
                int.Parse(parts[0], CultureInfo.InvariantCulture),
                int.Parse(parts[1], CultureInfo.InvariantCulture),
                long.Parse(parts[2], CultureInfo.InvariantCulture));
        }

        return ForId(Guid.ParseExact(text, "N"));
    }

    /// <summary>The id's bytes in the order PostgreSQL's uuid and SQLite's BLOB compare them (RFC, big-endian).</summary>
    public byte[] IdBytes()
    {
        var bytes = new byte[16];
        Id.TryWriteBytes(bytes, bigEndian: true, out _);
        return bytes;
    }
}

/// <summary>
/// A part of one kind's hot table that one worker moves, batch after batch in key order: under the natural key a
/// range of device ids, under a GUID key a range of the id's first four bytes (GUID tables have no other index).
/// Bounds are inclusive; null means unbounded.
/// </summary>
public sealed record ArchiveSlice(ReadingKind Kind, int Number, long? Low, long? High)
{
    public override string ToString() => $"{ReadingKinds.Name(Kind)} slice {Number} [{Low?.ToString(CultureInfo.InvariantCulture) ?? "-inf"}..{High?.ToString(CultureInfo.InvariantCulture) ?? "+inf"}]";

    /// <summary>Splits [min, max] into at most <paramref name="parts"/> contiguous ranges, the first and last unbounded.</summary>
    public static IReadOnlyList<ArchiveSlice> Split(ReadingKind kind, long min, long max, int parts)
    {
        if (parts <= 1 || max <= min)
        {
            return [new ArchiveSlice(kind, 0, null, null)];
        }

        long span = max - min + 1;
        parts = (int)Math.Min(parts, span);
        var slices = new List<ArchiveSlice>(parts);
        long low = min;
        for (int i = 0; i < parts; i++)
        {
            long high = i == parts - 1 ? max : min + (span * (i + 1) / parts) - 1;
            slices.Add(new ArchiveSlice(kind, i, i == 0 ? null : low, i == parts - 1 ? null : high));
            low = high + 1;
        }

        return slices;
    }

    /// <summary>The first 16 bytes at or above a GUID slice's low bound: the four bytes, then zeros.</summary>
    public static byte[] IdPrefix(long prefix)
    {
        var bytes = new byte[16];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(bytes, checked((uint)prefix));
        return bytes;
    }
}

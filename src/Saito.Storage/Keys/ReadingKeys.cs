using System.Buffers.Binary;
using System.Security.Cryptography;
using Saito.Readings;

namespace Saito.Storage.Keys;

/// <summary>
/// GUID keys derived from the reading itself, so that a reading that arrives twice gets the same key and is
/// stored once, whichever key strategy a table uses.
/// <para>
/// <see cref="KeyStrategy.Guid"/>: an RFC 9562 version 5 (name-based, SHA-1) UUID of the reading's natural key
/// (kind, device id, channel, microsecond timestamp) in Saito's own namespace: scattered across the index like
/// a random GUID.
/// </para>
/// <para>
/// <see cref="KeyStrategy.SequentialGuid"/>: the microsecond timestamp in the bytes the database compares first,
/// the rest a hash of the natural key. PostgreSQL (and SQLite, which stores the 16 bytes as a BLOB) compare uuid
/// bytes from the first; SQL Server compares uniqueidentifier bytes 10 to 15 first, then 8-9, 6-7, 4-5 and 0-3
/// (of the .NET byte order, <see cref="Guid.ToByteArray()"/>). So each database gets its own layout, and a newer
/// reading sorts after an older one on the database that stores it.
/// </para>
/// </summary>
public static class ReadingKeys
{
    /// <summary>Saito's namespace for name-based UUIDs (itself a fixed, random version 4 UUID).</summary>
    public static readonly Guid Namespace = new("5a17b0c4-3e2d-4f6a-9b8c-7d1e0f2a3b4c");

    private const int NameLength = 1 + 4 + 4 + 8;

    /// <summary>The key a reading gets under <paramref name="strategy"/> on <paramref name="provider"/>; null for the natural key.</summary>
    public static Guid? For(in Reading reading, KeyStrategy strategy, StorageProvider provider) => strategy switch
    {
        KeyStrategy.Natural => null,
        KeyStrategy.Guid => NameBased(reading),
        KeyStrategy.SequentialGuid => provider == StorageProvider.SqlServer ? SequentialForSqlServer(reading) : SequentialForByteOrder(reading),
        _ => throw new ArgumentOutOfRangeException(nameof(strategy), strategy, null),
    };

    /// <summary>RFC 9562 version 5 UUID of the reading's natural key.</summary>
    public static Guid NameBased(in Reading reading)
    {
        Span<byte> input = stackalloc byte[16 + NameLength];
        Namespace.TryWriteBytes(input, bigEndian: true, out _);
        WriteName(reading, input[16..]);
        Span<byte> hash = stackalloc byte[SHA1.HashSizeInBytes];
#pragma warning disable CA5350 // SHA-1 is what RFC 9562 names for version 5; it derives an identifier, not a secret.
        SHA1.HashData(input, hash);
#pragma warning restore CA5350
        hash[6] = (byte)((hash[6] & 0x0F) | 0x50);
        hash[8] = (byte)((hash[8] & 0x3F) | 0x80);
        return new Guid(hash[..16], bigEndian: true);
    }

    /// <summary>
    /// Time first in byte order (RFC 9562 version 8 layout): bytes 0-7 the microsecond timestamp, big-endian,
    /// with the version nibble at byte 6 and the variant at byte 8 taking 6 bits of hash, the rest hash.
    /// As PostgreSQL compares uuid and SQLite compares BLOBs, newer sorts after older.
    /// </summary>
    public static Guid SequentialForByteOrder(in Reading reading)
    {
        Span<byte> bytes = stackalloc byte[16];
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        HashName(reading, hash);
        // 48 bits of milliseconds (as UUIDv7), then 12 bits of the sub-millisecond microseconds behind the version nibble.
        long millis = UnixMillis(reading, out long subMillis);
        WriteMillis48(bytes, millis);
        bytes[6] = (byte)(0x80 | ((subMillis >> 8) & 0x0F));
        bytes[7] = (byte)subMillis;
        hash[..8].CopyTo(bytes[8..]);
        bytes[8] = (byte)((bytes[8] & 0x3F) | 0x80);
        return new Guid(bytes, bigEndian: true);
    }

    /// <summary>
    /// Time first in SQL Server's uniqueidentifier order: the .NET byte array's bytes 10-15 hold the
    /// millisecond timestamp big-endian, bytes 8-9 the sub-millisecond microseconds, the rest a hash.
    /// </summary>
    public static Guid SequentialForSqlServer(in Reading reading)
    {
        Span<byte> bytes = stackalloc byte[16];
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        HashName(reading, hash);
        long millis = UnixMillis(reading, out long subMillis);
        hash[..8].CopyTo(bytes);
        BinaryPrimitives.WriteUInt16BigEndian(bytes[8..], (ushort)subMillis);
        WriteMillis48(bytes[10..], millis);
        return new Guid(bytes);
    }

    /// <summary>The reading's time in whole milliseconds since 1970, and the microseconds past the last of them.</summary>
    private static long UnixMillis(in Reading reading, out long subMillis) =>
        Math.DivRem(ReadingTime.ToUnixMicroseconds(reading.Timestamp), 1000, out subMillis);

    /// <summary>The low 48 bits of <paramref name="millis"/>, big-endian, into the first six bytes of <paramref name="destination"/>.</summary>
    private static void WriteMillis48(Span<byte> destination, long millis)
    {
        destination[0] = (byte)(millis >> 40);
        destination[1] = (byte)(millis >> 32);
        destination[2] = (byte)(millis >> 24);
        destination[3] = (byte)(millis >> 16);
        destination[4] = (byte)(millis >> 8);
        destination[5] = (byte)millis;
    }

    private static void HashName(in Reading reading, Span<byte> hash)
    {
        Span<byte> name = stackalloc byte[NameLength];
        WriteName(reading, name);
        SHA256.HashData(name, hash);
    }

    private static void WriteName(in Reading reading, Span<byte> destination)
    {
        destination[0] = (byte)reading.Kind;
        BinaryPrimitives.WriteInt32BigEndian(destination[1..], reading.DeviceId);
        BinaryPrimitives.WriteInt32BigEndian(destination[5..], reading.Channel);
        BinaryPrimitives.WriteInt64BigEndian(destination[9..], ReadingTime.ToUnixMicroseconds(reading.Timestamp));
    }
}

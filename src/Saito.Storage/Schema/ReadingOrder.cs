using System.Buffers;
using System.Buffers.Binary;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Schema;

/// <summary>
/// The readings of one kind in the order of the table's primary key, with the key of each computed once.
/// <para>
/// Writing rows in key order does two things: the B-tree takes them as appends to a few pages rather than
/// scattered inserts, and two writers whose batches overlap can never deadlock on each other's uncommitted
/// keys, since each waits only for keys above every key it already holds (classic lock ordering).
/// </para>
/// Rent, use <see cref="Count"/>, <see cref="IndexAt"/> and <see cref="Ids"/>, then dispose (the arrays are pooled).
/// </summary>
internal sealed class ReadingOrder : IDisposable
{
    private UInt128[] _sortKeys;
    private int[] _order;
    private Guid[] _ids;

    private ReadingOrder(int count)
    {
        Count = count;
        _sortKeys = ArrayPool<UInt128>.Shared.Rent(Math.Max(count, 1));
        _order = ArrayPool<int>.Shared.Rent(Math.Max(count, 1));
        _ids = ArrayPool<Guid>.Shared.Rent(Math.Max(count, 1));
    }

    public int Count { get; }

    /// <summary>The GUID key of each reading by its index in the batch (unused under the natural key).</summary>
    public Guid[] Ids => _ids;

    /// <summary>The index in the batch of the <paramref name="position"/>-th reading in key order.</summary>
    public int IndexAt(int position) => _order[position];

    /// <summary>
    /// Orders <paramref name="readings"/> by the key <paramref name="keys"/> gives them on a database that
    /// compares GUIDs byte by byte from the first (PostgreSQL's uuid, SQLite's BLOB).
    /// </summary>
    public static ReadingOrder ByteOrdered(IReadOnlyList<Reading> readings, KeyStrategy keys, StorageProvider provider)
    {
        ArgumentNullException.ThrowIfNull(readings);
        var order = new ReadingOrder(readings.Count);
        Span<byte> bytes = stackalloc byte[16];
        for (int i = 0; i < order.Count; i++)
        {
            Reading reading = readings[i];
            order._order[i] = i;
            if (keys == KeyStrategy.Natural)
            {
                order._sortKeys[i] = NaturalSortKey(reading);
            }
            else
            {
                Guid id = ReadingKeys.For(reading, keys, provider)!.Value;
                order._ids[i] = id;
                id.TryWriteBytes(bytes, bigEndian: true, out _);
                order._sortKeys[i] = BinaryPrimitives.ReadUInt128BigEndian(bytes);
            }
        }

        order._sortKeys.AsSpan(0, order.Count).Sort(order._order.AsSpan(0, order.Count));
        return order;
    }

    /// <summary>(device_id, channel, ts) as one unsigned number that sorts as the signed columns do.</summary>
    private static UInt128 NaturalSortKey(in Reading reading)
    {
        uint device = unchecked((uint)reading.DeviceId ^ 0x8000_0000u);
        uint channel = unchecked((uint)reading.Channel ^ 0x8000_0000u);
        ulong ts = unchecked((ulong)ReadingTime.ToUnixMicroseconds(reading.Timestamp) ^ 0x8000_0000_0000_0000ul);
        return new UInt128(((ulong)device << 32) | channel, ts);
    }

    public void Dispose()
    {
        ArrayPool<UInt128>.Shared.Return(_sortKeys);
        ArrayPool<int>.Shared.Return(_order);
        ArrayPool<Guid>.Shared.Return(_ids);
        _sortKeys = [];
        _order = [];
        _ids = [];
    }
}

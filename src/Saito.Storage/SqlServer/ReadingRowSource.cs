using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>
/// The readings of one kind as SqlBulkCopy's row source, streamed from the batch's list: no DataTable, no copy.
/// Columns are <see cref="ReadingTables.Columns"/> of the kind and key strategy, in that order:
/// <c>[id,] device_id, channel, ts, values..., received_at</c>. A missing value (a biosensor that sent only its
/// heart rate) is <see cref="DBNull"/>. The id is <see cref="ReadingKeys.For"/> for SQL Server, computed once per
/// row when <see cref="RowListReader.Read"/> moves to it. Nothing is allocated per row here (ReadAsync is
/// DbDataReader's, which answers with cached completed tasks); what SqlClient 6 allocates per row is its own: the
/// box of each value it reads through <see cref="GetValue"/>, and in WriteToServerAsync a continuation per
/// ReadAsync.
/// </summary>
internal sealed class ReadingRowSource : RowListReader
{
    private readonly ReadingKind _kind;
    private readonly KeyStrategy _keys;
    private readonly IReadOnlyList<Reading> _readings;
    private readonly int _first;
    private readonly int _receivedAtOrdinal;
    private Reading _current;
    private Guid _currentId;

    public ReadingRowSource(ReadingKind kind, KeyStrategy keys, IReadOnlyList<Reading> readings)
        : base(ReadingTables.Columns(kind, keys))
    {
        ArgumentNullException.ThrowIfNull(readings);
        _kind = kind;
        _keys = keys;
        _readings = readings;
        _first = keys == KeyStrategy.Natural ? 0 : 1;
        _receivedAtOrdinal = _first + 3 + ReadingTables.ValueColumns(kind).Count;
    }

    private enum Field
    {
        Id,
        DeviceId,
        Channel,
        Timestamp,
        Value,
        ReceivedAt,
    }

    protected override int RowCount => _readings.Count;

    public override Type GetFieldType(int ordinal) => FieldOf(ordinal, out _) switch
    {
        Field.Id => typeof(Guid),
        Field.DeviceId or Field.Channel => typeof(int),
        Field.Timestamp or Field.ReceivedAt => typeof(DateTime),
        _ => typeof(double),
    };

    public override string GetDataTypeName(int ordinal) => FieldOf(ordinal, out _) switch
    {
        Field.Id => "uniqueidentifier",
        Field.DeviceId or Field.Channel => "int",
        Field.Timestamp or Field.ReceivedAt => "datetime2",
        _ => "float",
    };

    public override bool IsDBNull(int ordinal)
    {
        CheckRow();
        return FieldOf(ordinal, out int value) == Field.Value && ReadingTables.Value(_current, value) is null;
    }

    public override object GetValue(int ordinal)
    {
        CheckRow();
        return FieldOf(ordinal, out int value) switch
        {
            Field.Id => _currentId,
            Field.DeviceId => _current.DeviceId,
            Field.Channel => _current.Channel,
            Field.Timestamp => _current.Timestamp,
            Field.ReceivedAt => _current.ReceivedAt,
            _ => ReadingTables.Value(_current, value) is { } number ? number : DBNull.Value,
        };
    }

    public override int GetInt32(int ordinal)
    {
        CheckRow();
        return FieldOf(ordinal, out _) switch
        {
            Field.DeviceId => _current.DeviceId,
            Field.Channel => _current.Channel,
            _ => throw Mismatch(ordinal, typeof(int)),
        };
    }

    public override long GetInt64(int ordinal) => GetInt32(ordinal);

    public override DateTime GetDateTime(int ordinal)
    {
        CheckRow();
        return FieldOf(ordinal, out _) switch
        {
            Field.Timestamp => _current.Timestamp,
            Field.ReceivedAt => _current.ReceivedAt,
            _ => throw Mismatch(ordinal, typeof(DateTime)),
        };
    }

    public override double GetDouble(int ordinal)
    {
        CheckRow();
        if (FieldOf(ordinal, out int value) != Field.Value)
        {
            throw Mismatch(ordinal, typeof(double));
        }

        return ReadingTables.Value(_current, value) ?? throw NullValue(ordinal);
    }

    public override Guid GetGuid(int ordinal)
    {
        CheckRow();
        return FieldOf(ordinal, out _) == Field.Id ? _currentId : throw Mismatch(ordinal, typeof(Guid));
    }

    protected override void OnRow(int row)
    {
        _current = _readings[row];
        if (_current.Kind != _kind)
        {
            throw new InvalidOperationException($"A {_current.Kind} reading in the {_kind} rows (row {row}): the batch is sorted by kind, so this is a bug.");
        }

        if (_first == 1)
        {
            _currentId = ReadingKeys.For(_current, _keys, StorageProvider.SqlServer)!.Value;
        }
    }

    private Field FieldOf(int ordinal, out int valueIndex)
    {
        CheckOrdinal(ordinal);
        valueIndex = -1;
        if (ordinal < _first)
        {
            return Field.Id;
        }

        int column = ordinal - _first;
        switch (column)
        {
            case 0:
                return Field.DeviceId;
            case 1:
                return Field.Channel;
            case 2:
                return Field.Timestamp;
        }

        if (ordinal == _receivedAtOrdinal)
        {
            return Field.ReceivedAt;
        }

        valueIndex = column - 3;
        return Field.Value;
    }
}

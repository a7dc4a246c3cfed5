using System.Collections;
using System.Data.Common;

namespace Saito.Storage.SqlServer;

/// <summary>
/// A forward-only <see cref="DbDataReader"/> over rows already in memory, for <c>SqlBulkCopy</c>: the plumbing
/// every row source shares (names, ordinals, Read, Close). Subclasses say what a column holds.
/// <para>
/// How SqlBulkCopy reads a <see cref="DbDataReader"/> that is not a SqlDataReader (Microsoft.Data.SqlClient 6.x,
/// <c>SqlBulkCopy.GetValueFromSourceRow</c>): <see cref="GetOrdinal"/> once per column mapping by name, then per
/// row <see cref="Read"/> (through <c>ReadAsync</c>), and per column <see cref="DbDataReader.IsDBNull(int)"/> (only with
/// EnableStreaming) followed by <see cref="DbDataReader.GetValue(int)"/>, which boxes; for an nvarchar(max) destination with
/// EnableStreaming it asks <see cref="DbDataReader.GetTextReader"/> instead (whose base implementation reads
/// <see cref="GetString"/>). The typed getters are there for everyone else and for the tests.
/// </para>
/// </summary>
internal abstract class RowListReader : DbDataReader
{
    private readonly IReadOnlyList<string> _names;
    private bool _closed;

    protected RowListReader(IReadOnlyList<string> names)
    {
        _names = names;
    }

    /// <summary>The current row's index: -1 before the first <see cref="Read"/>, <see cref="RowCount"/> after the last.</summary>
    protected int Row { get; private set; } = -1;

    protected abstract int RowCount { get; }

    public override int FieldCount => _names.Count;

    public override bool HasRows => RowCount > 0;

    public override bool IsClosed => _closed;

    public override int RecordsAffected => -1;

    public override int Depth => 0;

    public override object this[int ordinal] => GetValue(ordinal);

    public override object this[string name] => GetValue(GetOrdinal(name));

    public override bool Read()
    {
        ObjectDisposedException.ThrowIf(_closed, this);
        if (Row + 1 >= RowCount)
        {
            Row = RowCount;
            return false;
        }

        Row++;
        OnRow(Row);
        return true;
    }

    public override bool NextResult() => false;

    public override void Close() => _closed = true;

    public override string GetName(int ordinal)
    {
        CheckOrdinal(ordinal);
        return _names[ordinal];
    }

    /// <summary>The column's ordinal: an exact match first, then ignoring case (as IDataRecord asks).</summary>
    public override int GetOrdinal(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        for (int i = 0; i < _names.Count; i++)
        {
            if (string.Equals(_names[i], name, StringComparison.Ordinal))
            {
                return i;
            }
        }

        for (int i = 0; i < _names.Count; i++)
        {
            if (string.Equals(_names[i], name, StringComparison.OrdinalIgnoreCase))
            {
                return i;
            }
        }

#pragma warning disable CA2201 // IDataRecord.GetOrdinal's documented exception; SqlBulkCopy catches exactly this type.
        throw new IndexOutOfRangeException($"No column named '{name}' (columns: {string.Join(", ", _names)}).");
#pragma warning restore CA2201
    }

    public override int GetValues(object[] values)
    {
        ArgumentNullException.ThrowIfNull(values);
        int count = Math.Min(values.Length, FieldCount);
        for (int i = 0; i < count; i++)
        {
            values[i] = GetValue(i);
        }

        return count;
    }

    public override IEnumerator GetEnumerator() => new DbEnumerator(this, closeReader: false);

    public override bool GetBoolean(int ordinal) => throw Mismatch(ordinal, typeof(bool));

    public override byte GetByte(int ordinal) => throw Mismatch(ordinal, typeof(byte));

    public override long GetBytes(int ordinal, long dataOffset, byte[]? buffer, int bufferOffset, int length) => throw Mismatch(ordinal, typeof(byte[]));

    public override char GetChar(int ordinal) => throw Mismatch(ordinal, typeof(char));

    public override long GetChars(int ordinal, long dataOffset, char[]? buffer, int bufferOffset, int length) => throw Mismatch(ordinal, typeof(char[]));

    public override DateTime GetDateTime(int ordinal) => throw Mismatch(ordinal, typeof(DateTime));

    public override decimal GetDecimal(int ordinal) => throw Mismatch(ordinal, typeof(decimal));

    public override double GetDouble(int ordinal) => throw Mismatch(ordinal, typeof(double));

    public override float GetFloat(int ordinal) => throw Mismatch(ordinal, typeof(float));

    public override Guid GetGuid(int ordinal) => throw Mismatch(ordinal, typeof(Guid));

    public override short GetInt16(int ordinal) => throw Mismatch(ordinal, typeof(short));

    public override int GetInt32(int ordinal) => throw Mismatch(ordinal, typeof(int));

    public override long GetInt64(int ordinal) => throw Mismatch(ordinal, typeof(long));

    public override string GetString(int ordinal) => throw Mismatch(ordinal, typeof(string));

    /// <summary>Called by <see cref="Read"/> when it moves to row <paramref name="row"/>: take what the getters need from it.</summary>
    protected abstract void OnRow(int row);

    protected void CheckOrdinal(int ordinal)
    {
        if ((uint)ordinal >= (uint)_names.Count)
        {
#pragma warning disable CA2201 // IDataRecord's documented exception for an ordinal out of range.
            throw new IndexOutOfRangeException($"Ordinal {ordinal} is out of range: this reader has {_names.Count} columns.");
#pragma warning restore CA2201
        }
    }

    protected void CheckRow()
    {
        ObjectDisposedException.ThrowIf(_closed, this);
        if (Row < 0 || Row >= RowCount)
        {
            throw new InvalidOperationException("No current row: call Read first, and only while it returns true.");
        }
    }

    protected InvalidCastException Mismatch(int ordinal, Type requested)
    {
        CheckOrdinal(ordinal);
        return new InvalidCastException($"Column {_names[ordinal]} holds {GetFieldType(ordinal).Name}, not {requested.Name}.");
    }

    protected InvalidCastException NullValue(int ordinal) =>
        new($"Column {_names[ordinal]} is NULL in this row: check IsDBNull first.");
}

using Microsoft.Data.Sqlite;
using SQLitePCL;

namespace Saito.Storage.Archive;

/// <summary>
/// A statement prepared once and run per row through SQLite's own API (bind, step, reset), as
/// <see cref="Sqlite.SqliteWriter"/> does: no boxing per value. It runs inside whatever transaction the connection has open.
/// </summary>
internal sealed class SqliteRawStatement : IDisposable
{
    private readonly sqlite3 _db;
    private readonly sqlite3_stmt _statement;

    public SqliteRawStatement(SqliteConnection connection, string sql)
    {
        ArgumentNullException.ThrowIfNull(connection);
        _db = connection.Handle ?? throw new InvalidOperationException("The SQLite connection is not open.");
        Check(raw.sqlite3_prepare_v2(_db, sql, out _statement));
    }

    public void Int64(int index, long value) => Check(raw.sqlite3_bind_int64(_statement, index, value));

    public void Double(int index, double? value) =>
        Check(value.HasValue ? raw.sqlite3_bind_double(_statement, index, value.GetValueOrDefault()) : raw.sqlite3_bind_null(_statement, index));

    public void Blob(int index, ReadOnlySpan<byte> value) => Check(raw.sqlite3_bind_blob(_statement, index, value));

    /// <summary>True when a row came back (read it with the column methods), false when the statement is done.</summary>
    public bool Step()
    {
        int rc = raw.sqlite3_step(_statement);
        if (rc == raw.SQLITE_ROW)
        {
            return true;
        }

        if (rc == raw.SQLITE_DONE)
        {
            return false;
        }

        var error = new SqliteException(raw.sqlite3_errmsg(_db).utf8_to_string(), rc, raw.sqlite3_extended_errcode(_db));
        raw.sqlite3_reset(_statement);
        throw error;
    }

    /// <summary>Runs a statement that returns no rows, resets it, and returns the rows it changed.</summary>
    public int Execute()
    {
        Step();
        raw.sqlite3_reset(_statement);
        return raw.sqlite3_changes(_db);
    }

    public void Reset() => raw.sqlite3_reset(_statement);

    public long ColumnInt64(int column) => raw.sqlite3_column_int64(_statement, column);

    public double? ColumnDouble(int column) =>
        raw.sqlite3_column_type(_statement, column) == raw.SQLITE_NULL ? null : raw.sqlite3_column_double(_statement, column);

    public ReadOnlySpan<byte> ColumnBlob(int column) => raw.sqlite3_column_blob(_statement, column);

    public void Dispose() => _statement.Dispose();

    private void Check(int rc)
    {
        if (rc != raw.SQLITE_OK)
        {
            SqliteException.ThrowExceptionForRC(rc, _db);
        }
    }
}

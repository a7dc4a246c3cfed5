using System.Globalization;
using Microsoft.Data.Sqlite;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;
using Saito.Storage.Sqlite;

namespace Saito.Storage.Archive;

// SQLite's API is synchronous (Microsoft.Data.Sqlite's *Async methods run synchronously too): the Task-returning
// methods below do their work on the calling thread, as SqliteReadingStore does; the archiver calls them from its workers.
#pragma warning disable VSTHRD103

/// <summary>
/// The archiver on SQLite: hot rows in <c>saito-hot.db</c>, archive rows and the journal in <c>saito-archive.db</c>,
/// two files that no transaction spans atomically in WAL mode. So:
/// <list type="bullet">
/// <item>the journal lives in the archive file, and "archived" is committed in the same transaction as the archive
/// insert: a batch is archived exactly when its rows are;</item>
/// <item>the hot delete is its own short transaction on the hot file (<c>BEGIN IMMEDIATE</c>, one prepared
/// <c>DELETE</c> per key, commit): the only time the archiver holds the hot file's write lock, bounded by the batch
/// size. "done" follows in the archive file; a crash between the two is repaired by deleting the same keys again
/// (deleting a key that is gone changes nothing).</item>
/// </list>
/// Reads (the batch select, counts) run in WAL snapshots and never block the server's writer.
/// </summary>
internal sealed class SqliteArchiveEngine : ArchiveEngineBase, IArchiveEngine
{
    private const string Journal = "archive_journal";
    private const int RestoreChunk = 50_000;

    private readonly SqliteConnections _hot;
    private readonly SqliteConnections _archive;

    public SqliteArchiveEngine(StorageOptions options, IArchivePauses pauses)
        : base(options, pauses)
    {
        _hot = new SqliteConnections(Path.GetFullPath(Path.Combine(options.HotPath, SqliteSchema.HotFileName)), options);
        _archive = new SqliteConnections(Path.GetFullPath(Path.Combine(options.ArchivePath, SqliteSchema.ArchiveFileName)), options);
    }

    public string Describe() => $"SQLite hot {_hot.File}, archive and journal {_archive.File}";

    public Task<bool> JournalExistsAsync(CancellationToken cancellationToken)
    {
        if (!File.Exists(_archive.File))
        {
            return Task.FromResult(false);
        }

        using var connection = _archive.Open();
        using var command = connection.CreateCommand();
        command.CommandText = $"SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '{Journal}'";
        return Task.FromResult((long)command.ExecuteScalar()! > 0);
    }

    /// <summary>An exclusive lock (flock, through FileShare.None) on <c>saito-archive.db.archiver-lock</c> beside the archive file.</summary>
    public Task<IAsyncDisposable?> TryLockRunAsync(CancellationToken cancellationToken)
    {
        RequireFile(_archive);
        try
        {
            var file = new FileStream(_archive.File + ".archiver-lock", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
            return Task.FromResult<IAsyncDisposable?>(file);
        }
        catch (IOException)
        {
            return Task.FromResult<IAsyncDisposable?>(null);
        }
    }

    /// <summary>SQLite opens a connection per step and has no pool to size.</summary>
    public Task UseWorkersAsync(int workers) => Task.CompletedTask;

    public Task EnsureJournalAsync(CancellationToken cancellationToken)
    {
        RequireFile(_hot);
        RequireFile(_archive);
        using var connection = _archive.Open();
        using var command = connection.CreateCommand();
        command.CommandText =
            $"""
             CREATE TABLE IF NOT EXISTS {Journal} (
                 batch_id     TEXT    NOT NULL PRIMARY KEY,
                 run_id       TEXT    NOT NULL,
                 kind         TEXT    NOT NULL,
                 key_strategy TEXT    NOT NULL,
                 slice        INTEGER NOT NULL,
                 slice_low    INTEGER,
                 slice_high   INTEGER,
                 cursor       TEXT,
                 cutoff       INTEGER NOT NULL,
                 batch_rows   INTEGER NOT NULL,
                 state        TEXT    NOT NULL,
                 file         TEXT    NOT NULL,
                 rows         INTEGER NOT NULL DEFAULT 0,
                 first_key    TEXT,
                 last_key     TEXT,
                 sha256       TEXT,
                 updated_at   INTEGER NOT NULL
             ) STRICT
             """;
        command.ExecuteNonQuery();
        return Task.CompletedTask;
    }

    private static void RequireFile(SqliteConnections connections)
    {
        if (!File.Exists(connections.File))
        {
            throw new ArchiveSetupException(
                $"{connections.File} does not exist: start Saito once (it creates its databases) or check Storage:HotPath and Storage:ArchivePath.");
        }
    }

    public async Task<IReadOnlyList<ArchiveBatch>> LoadJournalAsync(bool unfinishedOnly, CancellationToken cancellationToken)
    {
        await using var connection = _archive.Open();
        return await ArchiveBatch.LoadAsync(connection, Journal, column => column, "'done'", unfinishedOnly, cancellationToken);
    }

    public Task PlanAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        using var connection = _archive.Open();
        using var command = connection.CreateCommand();
        command.CommandText =
            $"INSERT INTO {Journal} (batch_id, run_id, kind, key_strategy, slice, slice_low, slice_high, cursor, cutoff, batch_rows, state, file, updated_at) " +
            "VALUES ($id, $run, $kind, $keys, $slice, $low, $high, $cursor, $cutoff, $batch_rows, 'planned', $file, $now)";
        command.Parameters.AddWithValue("$id", batch.Id);
        command.Parameters.AddWithValue("$run", batch.RunId);
        command.Parameters.AddWithValue("$kind", ReadingKinds.Name(batch.Kind));
        command.Parameters.AddWithValue("$keys", SchemaScript.KeyStrategyName(batch.Keys));
        command.Parameters.AddWithValue("$slice", batch.Slice);
        command.Parameters.AddWithValue("$low", (object?)batch.SliceLow ?? DBNull.Value);
        command.Parameters.AddWithValue("$high", (object?)batch.SliceHigh ?? DBNull.Value);
        command.Parameters.AddWithValue("$cursor", (object?)batch.Cursor ?? DBNull.Value);
        command.Parameters.AddWithValue("$cutoff", batch.CutoffMicros);
        command.Parameters.AddWithValue("$batch_rows", batch.BatchRows);
        command.Parameters.AddWithValue("$file", batch.File);
        command.Parameters.AddWithValue("$now", Now());
        command.ExecuteNonQuery();
        return Task.CompletedTask;
    }

    public Task SetStateAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        using var connection = _archive.Open();
        SetState(connection, null, batch);
        return Task.CompletedTask;
    }

    private static void SetState(SqliteConnection connection, SqliteTransaction? transaction, ArchiveBatch batch)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText =
            $"UPDATE {Journal} SET state = $state, rows = $rows, first_key = $first, last_key = $last, sha256 = $sha, updated_at = $now WHERE batch_id = $id";
        command.Parameters.AddWithValue("$state", ArchiveBatch.StateName(batch.State));
        command.Parameters.AddWithValue("$rows", batch.Rows);
        command.Parameters.AddWithValue("$first", (object?)batch.FirstKey ?? DBNull.Value);
        command.Parameters.AddWithValue("$last", (object?)batch.LastKey ?? DBNull.Value);
        command.Parameters.AddWithValue("$sha", (object?)batch.Sha256 ?? DBNull.Value);
        command.Parameters.AddWithValue("$now", Now());
        command.Parameters.AddWithValue("$id", batch.Id);
        if (command.ExecuteNonQuery() != 1)
        {
            throw new InvalidOperationException($"Batch {batch.Id} is not in the archive journal.");
        }
    }

    public Task ForgetAsync(string batchId, CancellationToken cancellationToken)
    {
        using var connection = _archive.Open();
        using var command = connection.CreateCommand();
        command.CommandText = $"DELETE FROM {Journal} WHERE batch_id = $id";
        command.Parameters.AddWithValue("$id", batchId);
        command.ExecuteNonQuery();
        return Task.CompletedTask;
    }

    public Task<(long Min, long Max)?> DeviceRangeAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken)
    {
        RequireFile(_hot);
        using var connection = _hot.Open();
        using var command = connection.CreateCommand();
        command.CommandText = $"SELECT min(device_id), max(device_id) FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)}";
        using var reader = command.ExecuteReader();
        reader.Read();
        (long, long)? range = reader.IsDBNull(0) ? null : (reader.GetInt64(0), reader.GetInt64(1));
        return Task.FromResult(range);
    }

    public Task<long> CountOlderAsync(ReadingKind kind, KeyStrategy keys, long cutoffMicros, CancellationToken cancellationToken)
    {
        RequireFile(_hot);
        using var connection = _hot.Open();
        using var command = connection.CreateCommand();
        command.CommandText = $"SELECT count(*) FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} WHERE ts < $cutoff";
        command.Parameters.AddWithValue("$cutoff", cutoffMicros);
        return Task.FromResult((long)command.ExecuteScalar()!);
    }

    public Task<List<ArchiveRow>> SelectAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        var keys = batch.Keys;
        var kind = batch.Kind;
        var columns = ReadingTables.Columns(kind, keys);
        var where = new List<string> { "ts < ?" };
        var binds = new List<object> { batch.CutoffMicros };
        if (keys == KeyStrategy.Natural)
        {
            // Once there is a cursor it implies the low bound; leaving the bound out lets SQLite seek on the row value
            // (with both, it seeks on the device range and filters up to the cursor: a rescan per batch).
            if (batch.SliceLow is { } low && batch.Cursor is null)
            {
                where.Add("device_id >= ?");
                binds.Add(low);
            }

            if (batch.SliceHigh is { } high)
            {
                where.Add("device_id <= ?");
                binds.Add(high);
            }

            if (batch.Cursor is { } cursor)
            {
                var key = RowKey.Parse(cursor);
                where.Add("(device_id, channel, ts) > (?, ?, ?)");
                binds.Add((long)key.DeviceId);
                binds.Add((long)key.Channel);
                binds.Add(key.TsMicros);
            }
        }
        else
        {
            if (batch.SliceLow is { } low)
            {
                where.Add("id >= ?");
                binds.Add(ArchiveSlice.IdPrefix(low));
            }

            if (batch.SliceHigh is { } high)
            {
                where.Add("id < ?");
                binds.Add(ArchiveSlice.IdPrefix(high + 1));
            }

            if (batch.Cursor is { } cursor)
            {
                where.Add("id > ?");
                binds.Add(RowKey.Parse(cursor).IdBytes());
            }
        }

        string order = keys == KeyStrategy.Natural ? "device_id, channel, ts" : "id";
        string sql =
            $"SELECT {string.Join(", ", columns)} FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} " +
            $"WHERE {string.Join(" AND ", where)} ORDER BY {order} LIMIT {batch.BatchRows.ToString(CultureInfo.InvariantCulture)}";
        using var connection = _hot.Open();
        using var select = new SqliteRawStatement(connection, sql);
        for (int i = 0; i < binds.Count; i++)
        {
            if (binds[i] is byte[] blob)
            {
                select.Blob(i + 1, blob);
            }
            else
            {
                select.Int64(i + 1, (long)binds[i]);
            }
        }

        var rows = new List<ArchiveRow>(Math.Min(batch.BatchRows, 1 << 16));
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        int half = batch.BatchRows / 2;
        while (select.Step())
        {
            rows.Add(ReadRow(select, kind, keys, valueCount));
            if (rows.Count == half)
            {
                cancellationToken.ThrowIfCancellationRequested();
                Pauses.Reach("mid-select", batch.Id);
            }
        }

        select.Reset();
        return Task.FromResult(rows);
    }

    private static ArchiveRow ReadRow(SqliteRawStatement row, ReadingKind kind, KeyStrategy keys, int valueCount)
    {
        int c = 0;
        Guid id = keys == KeyStrategy.Natural ? Guid.Empty : new Guid(row.ColumnBlob(c++), bigEndian: true);
        int device = checked((int)row.ColumnInt64(c++));
        int channel = checked((int)row.ColumnInt64(c++));
        long ts = row.ColumnInt64(c++);
        double? v0 = valueCount > 0 ? row.ColumnDouble(c++) : null;
        double? v1 = valueCount > 1 ? row.ColumnDouble(c++) : null;
        double? v2 = valueCount > 2 ? row.ColumnDouble(c++) : null;
        double? v3 = valueCount > 3 ? row.ColumnDouble(c++) : null;
        long received = row.ColumnInt64(c);
        return new ArchiveRow(id, new Reading(kind, device, channel, ReadingTime.FromUnixMicroseconds(ts), ReadingTime.FromUnixMicroseconds(received), v0, v1, v2, v3));
    }

    private static SqliteRawStatement Insert(SqliteConnection connection, string table, ReadingKind kind, KeyStrategy keys)
    {
        var columns = ReadingTables.Columns(kind, keys);
        return new SqliteRawStatement(connection,
            $"INSERT OR IGNORE INTO {table} ({string.Join(", ", columns)}) VALUES ({string.Join(", ", columns.Select(_ => "?"))})");
    }

    private static void BindRow(SqliteRawStatement statement, in ArchiveRow row, KeyStrategy keys, int valueCount, Span<byte> idBuffer)
    {
        int p = 1;
        var reading = row.Reading;
        if (keys != KeyStrategy.Natural)
        {
            row.Id.TryWriteBytes(idBuffer, bigEndian: true, out _);
            statement.Blob(p++, idBuffer);
        }

        statement.Int64(p++, reading.DeviceId);
        statement.Int64(p++, reading.Channel);
        statement.Int64(p++, ReadingTime.ToUnixMicroseconds(reading.Timestamp));
        for (int i = 0; i < valueCount; i++)
        {
            statement.Double(p++, ReadingTables.Value(reading, i));
        }

        statement.Int64(p, ReadingTime.ToUnixMicroseconds(reading.ReceivedAt));
    }

    /// <summary>Binds a row's key to parameters 1.. (natural: device, channel, ts; GUID: id).</summary>
    private static void BindKey(SqliteRawStatement statement, in ArchiveRow row, KeyStrategy keys, Span<byte> idBuffer)
    {
        if (keys == KeyStrategy.Natural)
        {
            statement.Int64(1, row.Reading.DeviceId);
            statement.Int64(2, row.Reading.Channel);
            statement.Int64(3, ReadingTime.ToUnixMicroseconds(row.Reading.Timestamp));
        }
        else
        {
            row.Id.TryWriteBytes(idBuffer, bigEndian: true, out _);
            statement.Blob(1, idBuffer);
        }
    }

    private static string KeyPredicate(KeyStrategy keys) => keys == KeyStrategy.Natural ? "device_id = ? AND channel = ? AND ts = ?" : "id = ?";

    public Task<long> ArchiveAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        using var connection = _archive.Open();
        using var transaction = connection.BeginTransaction(deferred: false);
        long inserted = InsertRows(connection, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive), batch.Kind, batch.Keys, rows, cancellationToken);
        Pauses.Reach("archive-uncommitted", batch.Id);
        SetState(connection, transaction, batch with { State = BatchState.Archived });
        transaction.Commit();
        return Task.FromResult(inserted);
    }

    private static long InsertRows(SqliteConnection connection, string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows,
        CancellationToken cancellationToken)
    {
        using var insert = Insert(connection, table, kind, keys);
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        Span<byte> id = stackalloc byte[16];
        long inserted = 0;
        for (int i = 0; i < rows.Count; i++)
        {
            if ((i & 4095) == 0)
            {
                cancellationToken.ThrowIfCancellationRequested();
            }

            BindRow(insert, rows[i], keys, valueCount, id);
            inserted += insert.Execute();
        }

        return inserted;
    }

    public Task<long> DeleteHotAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, bool rangeFirst, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        long deleted = 0;
        string table = ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot);
        using (var connection = _hot.Open())
        {
            // BEGIN IMMEDIATE: the hot file's write lock, held for this delete only.
            using var transaction = connection.BeginTransaction(deferred: false);
            bool exact = false;
            if (rangeFirst && rows.Count > 0)
            {
                using (var savepoint = connection.CreateCommand())
                {
                    savepoint.Transaction = transaction;
                    savepoint.CommandText = "SAVEPOINT saito_range";
                    savepoint.ExecuteNonQuery();
                }

                using (var range = new SqliteRawStatement(connection, batch.Keys == KeyStrategy.Natural
                           ? $"DELETE FROM {table} WHERE (device_id, channel, ts) >= (?1, ?2, ?3) AND (device_id, channel, ts) <= (?4, ?5, ?6) AND ts < ?7"
                           : $"DELETE FROM {table} WHERE id >= ?1 AND id <= ?2 AND ts < ?7"))
                {
                    Span<byte> id = stackalloc byte[16];
                    BindKey(range, rows[0], batch.Keys, id);
                    if (batch.Keys == KeyStrategy.Natural)
                    {
                        range.Int64(4, rows[^1].Reading.DeviceId);
                        range.Int64(5, rows[^1].Reading.Channel);
                        range.Int64(6, ReadingTime.ToUnixMicroseconds(rows[^1].Reading.Timestamp));
                    }
                    else
                    {
                        rows[^1].Id.TryWriteBytes(id, bigEndian: true, out _);
                        range.Blob(2, id);
                    }

                    range.Int64(7, batch.CutoffMicros);
                    deleted = range.Execute();
                }

                exact = deleted == rows.Count;
                using var end = connection.CreateCommand();
                end.Transaction = transaction;
                end.CommandText = exact ? "RELEASE saito_range" : "ROLLBACK TO saito_range; RELEASE saito_range";
                end.ExecuteNonQuery();
            }

            if (!exact)
            {
                deleted = 0;
                using var delete = new SqliteRawStatement(connection, $"DELETE FROM {table} WHERE {KeyPredicate(batch.Keys)}");
                Span<byte> id = stackalloc byte[16];
                for (int i = 0; i < rows.Count; i++)
                {
                    BindKey(delete, rows[i], batch.Keys, id);
                    deleted += delete.Execute();
                }
            }

            Pauses.Reach("delete-uncommitted", batch.Id);
            transaction.Commit();
        }

        Pauses.Reach("deleted", batch.Id);
        using (var archive = _archive.Open())
        {
            SetState(archive, null, batch with { State = BatchState.Done });
        }

        return Task.FromResult(deleted);
    }

    public Task<(long InArchive, long InHot)> CheckAsync(ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var columns = ReadingTables.Columns(kind, keys);
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        long inArchive = 0;
        long inHot = 0;
        Span<byte> id = stackalloc byte[16];
        using (var connection = _archive.Open())
        using (var select = new SqliteRawStatement(connection,
                   $"SELECT {string.Join(", ", columns)} FROM {ReadingTables.TableName(kind, keys, StorageTier.Archive)} WHERE {KeyPredicate(keys)}"))
        {
            foreach (var row in rows)
            {
                BindKey(select, row, keys, id);
                if (select.Step() && ReadRow(select, kind, keys, valueCount) == row)
                {
                    inArchive++;
                }

                select.Reset();
            }
        }

        using (var connection = _hot.Open())
        using (var select = new SqliteRawStatement(connection,
                   $"SELECT 1 FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} WHERE {KeyPredicate(keys)}"))
        {
            foreach (var row in rows)
            {
                BindKey(select, row, keys, id);
                if (select.Step())
                {
                    inHot++;
                }

                select.Reset();
            }
        }

        return Task.FromResult((inArchive, inHot));
    }

    public Task<long> InBothTiersAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken)
    {
        using var connection = _hot.Open();
        using (var attach = connection.CreateCommand())
        {
            attach.CommandText = "ATTACH DATABASE $file AS arc";
            attach.Parameters.AddWithValue("$file", _archive.File);
            attach.ExecuteNonQuery();
        }

        try
        {
            string join = keys == KeyStrategy.Natural
                ? "a.device_id = h.device_id AND a.channel = h.channel AND a.ts = h.ts"
                : "a.id = h.id";
            using var command = connection.CreateCommand();
            command.CommandText =
                $"SELECT count(*) FROM main.{ReadingTables.TableName(kind, keys, StorageTier.Hot)} AS h " +
                $"WHERE EXISTS (SELECT 1 FROM arc.{ReadingTables.TableName(kind, keys, StorageTier.Archive)} AS a WHERE {join})";
            return Task.FromResult((long)command.ExecuteScalar()!);
        }
        finally
        {
            using var detach = connection.CreateCommand();
            detach.CommandText = "DETACH DATABASE arc";
            detach.ExecuteNonQuery();
        }
    }

    public Task<long> InsertAsync(string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var connections = HasTable(_hot, table) ? _hot
            : HasTable(_archive, table) ? _archive
            : throw new InvalidOperationException($"No table {table} in {_hot.File} or {_archive.File}.");
        using var connection = connections.Open();
        long inserted = 0;
        for (int start = 0; start < rows.Count; start += RestoreChunk)
        {
            var chunk = rows.Skip(start).Take(RestoreChunk).ToList();
            using var transaction = connection.BeginTransaction(deferred: false);
            inserted += InsertRows(connection, table, kind, keys, chunk, cancellationToken);
            transaction.Commit();
        }

        return Task.FromResult(inserted);
    }

    private static bool HasTable(SqliteConnections connections, string table)
    {
        if (!File.Exists(connections.File))
        {
            return false;
        }

        using var connection = connections.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = $name";
        command.Parameters.AddWithValue("$name", table);
        return (long)command.ExecuteScalar()! > 0;
    }

    private static long Now() => ReadingTime.ToUnixMicroseconds(DateTime.UtcNow);

    public ValueTask DisposeAsync()
    {
        _hot.ClearPool();
        _archive.ClearPool();
        return ValueTask.CompletedTask;
    }
}

/// <summary>Parsing the names the journal and manifests use.</summary>
internal static class ArchiveNames
{
    public static ReadingKind Kind(string name) => ReadingKinds.TryParse(name, out var kind)
        ? kind
        : throw new InvalidDataException($"Unknown reading kind '{name}'.");

    public static KeyStrategy Keys(string name) => name switch
    {
        "natural" => KeyStrategy.Natural,
        "guid" => KeyStrategy.Guid,
        "sequential-guid" => KeyStrategy.SequentialGuid,
        _ => throw new InvalidDataException($"Unknown key strategy '{name}'."),
    };
}

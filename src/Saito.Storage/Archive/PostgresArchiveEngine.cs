using System.Globalization;
using Npgsql;
using NpgsqlTypes;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Data;
using Saito.Storage.Schema;

namespace Saito.Storage.Archive;

/// <summary>
/// The archiver on PostgreSQL: hot and archive tables in one database (each tier on its tablespace) and the journal
/// (<c>archive_journal</c>) beside them, so every state change rides in the transaction of the step it records.
/// A new (planned) batch moves in one transaction (<see cref="MoveAsync"/>): <c>DELETE ... RETURNING</c> of the batch's
/// rows, the export written from them while they are copied into the archive table, the journal's "done", commit.
/// The step-by-step path serves batches a crash left exported or archived (and a batch with a key already archived):
/// select with a data reader; archive: binary <c>COPY</c> straight into the archive table behind a savepoint, and when
/// some rows are already there a temporary table and <c>INSERT ... ON CONFLICT DO NOTHING</c>; delete: one range
/// <c>DELETE</c>, or <c>DELETE ... USING unnest(keys)</c>. Row locks only, which never block the inserts of new readings
/// (a new reading has a new key).
/// </summary>
internal sealed class PostgresArchiveEngine : ArchiveEngineBase, IArchiveEngine, IArchiveMoveEngine
{
    private const string Journal = "archive_journal";
    private const string UniqueViolation = "23505";

    private readonly NpgsqlConnectionStringBuilder _settings;
    private NpgsqlDataSource _dataSource;
    private readonly string? _archiveTablespace;
    private readonly string _description;

    public PostgresArchiveEngine(StorageOptions options, IArchivePauses pauses)
        : base(options, pauses)
    {
        if (string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            throw new ArgumentException("Storage:ConnectionString is required for PostgreSQL.", nameof(options));
        }

        _settings = new NpgsqlConnectionStringBuilder(options.ConnectionString) { CommandTimeout = options.CommandTimeoutSeconds };
        if (string.IsNullOrEmpty(_settings.ApplicationName))
        {
            _settings.ApplicationName = "saito-archiver";
        }

        _description = $"PostgreSQL {_settings.Host}:{_settings.Port}/{_settings.Database ?? _settings.Username}";
        _archiveTablespace = options.Postgres.ArchiveTablespace;
        _dataSource = Build(workers: 1);
    }

    private const int MoveReadBufferBytes = 1 << 16;

    /// <summary>
    /// The pool for a run with <paramref name="workers"/> workers: at most <see cref="ArchiveConnections.Max"/> connections
    /// (the connection string's Maximum Pool Size is replaced), so the archiver never holds more than it needs,
    /// however many slices and batches it has. Npgsql's own default is 100, PostgreSQL's <c>max_connections</c>.
    /// </summary>
    private NpgsqlDataSource Build(int workers)
    {
        var builder = new NpgsqlDataSourceBuilder(_settings.ConnectionString);
        builder.ConnectionStringBuilder.MaxPoolSize = ArchiveConnections.Max(workers);
        builder.ConnectionStringBuilder.MinPoolSize = 0;
        // A batch's rows come back as one COPY of about 5 MB: read 64 KB at a time rather than Npgsql's default 8 KB.
        if (builder.ConnectionStringBuilder.ReadBufferSize < MoveReadBufferBytes)
        {
            builder.ConnectionStringBuilder.ReadBufferSize = MoveReadBufferBytes;
        }

        return builder.Build();
    }

    /// <summary>
    /// The settings of a move transaction. The sort of one batch (50,000 rows: about 5 MB) in memory rather than in a
    /// temporary file (work_mem is 4 MB by default). And a cancelled run (Ctrl+C, a stop) ends its statements by closing
    /// their connections (Npgsql cancels a COPY that way), which PostgreSQL notices only when it next writes to the
    /// connection: a move statement waiting for a row lock would wait on, holding the locks of the rows it had deleted so
    /// far, until the other transaction ended. From PostgreSQL 14 the server checks the connection while a statement runs
    /// (<c>client_connection_check_interval</c>), every second here. (A session setting would not last: Npgsql resets a
    /// pooled connection's settings when it is returned.)
    /// </summary>
    private static string MoveSettings(NpgsqlConnection connection)
    {
        // enable_seqscan off: the move statement's key range is bounded by a value the planner cannot see, and a scan of
        // the whole table for every batch would be a cliff (its other statements go through primary keys anyway).
        const string settings = "SET LOCAL work_mem = '64MB'; SET LOCAL enable_seqscan = off";
        return connection.PostgreSqlVersion.Major >= 14 ? settings + "; SET LOCAL client_connection_check_interval = '1s'" : settings;
    }

    public async Task UseWorkersAsync(int workers)
    {
        var previous = _dataSource;
        _dataSource = Build(workers);
        await previous.DisposeAsync();
    }

    public string Describe() => _description;

    public async Task<bool> JournalExistsAsync(CancellationToken cancellationToken) =>
        await ScalarAsync<bool>($"SELECT to_regclass('{Journal}') IS NOT NULL", cancellationToken);

    // pg_try_advisory_lock key held by a run for its whole length ("SAITOA" in ASCII).
    private const long RunLockKey = 0x5341_4954_4F41;

    /// <summary>A session advisory lock on a connection kept open for the run; closing it (or the process dying) releases it.</summary>
    public async Task<IAsyncDisposable?> TryLockRunAsync(CancellationToken cancellationToken) =>
        await (await _dataSource.OpenConnectionAsync(cancellationToken))
            .HoldSessionLockAsync($"SELECT pg_try_advisory_lock({RunLockKey})", result => result is true, cancellationToken);

    public async Task EnsureJournalAsync(CancellationToken cancellationToken)
    {
        string tablespace = string.IsNullOrEmpty(_archiveTablespace) ? string.Empty : $" TABLESPACE {_archiveTablespace}";
        await ExecuteAsync(
            $"""
             CREATE TABLE IF NOT EXISTS {Journal} (
                 batch_id     text        NOT NULL PRIMARY KEY,
                 run_id       text        NOT NULL,
                 kind         text        NOT NULL,
                 key_strategy text        NOT NULL,
                 slice        integer     NOT NULL,
                 slice_low    bigint,
                 slice_high   bigint,
                 cursor       text,
                 cutoff       bigint      NOT NULL,
                 batch_rows   integer     NOT NULL,
                 state        text        NOT NULL,
                 file         text        NOT NULL,
                 rows         bigint      NOT NULL DEFAULT 0,
                 first_key    text,
                 last_key     text,
                 sha256       text,
                 updated_at   timestamptz NOT NULL DEFAULT now()
             ){tablespace}
             """, cancellationToken);
    }

    public async Task<IReadOnlyList<ArchiveBatch>> LoadJournalAsync(bool unfinishedOnly, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        return await ArchiveBatch.LoadAsync(connection, Journal, column => column, "'done'", unfinishedOnly, cancellationToken);
    }

    public async Task PlanAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var command = new NpgsqlCommand(
            $"INSERT INTO {Journal} (batch_id, run_id, kind, key_strategy, slice, slice_low, slice_high, cursor, cutoff, batch_rows, state, file) " +
            "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'planned', $11)", connection);
        command.Parameters.Add(new NpgsqlParameter<string>{ TypedValue = batch.Id });
        command.Parameters.Add(new NpgsqlParameter<string>{ TypedValue = batch.RunId });
        command.Parameters.Add(new NpgsqlParameter<string>{ TypedValue = ReadingKinds.Name(batch.Kind) });
        command.Parameters.Add(new NpgsqlParameter<string>{ TypedValue = SchemaScript.KeyStrategyName(batch.Keys) });
        command.Parameters.Add(new NpgsqlParameter<int>{ TypedValue = batch.Slice });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.SliceLow ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Bigint });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.SliceHigh ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Bigint });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.Cursor ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Text });
        command.Parameters.Add(new NpgsqlParameter<long> { TypedValue = batch.CutoffMicros });
        command.Parameters.Add(new NpgsqlParameter<int> { TypedValue = batch.BatchRows });
        command.Parameters.Add(new NpgsqlParameter<string> { TypedValue = batch.File });
        await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public async Task SetStateAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await SetStateAsync(connection, batch, cancellationToken);
    }

    private static async Task SetStateAsync(NpgsqlConnection connection, ArchiveBatch batch, CancellationToken cancellationToken)
    {
        await using var command = new NpgsqlCommand(
            $"UPDATE {Journal} SET state = $1, rows = $2, first_key = $3, last_key = $4, sha256 = $5, updated_at = now() WHERE batch_id = $6", connection);
        command.Parameters.Add(new NpgsqlParameter<string> { TypedValue = ArchiveBatch.StateName(batch.State) });
        command.Parameters.Add(new NpgsqlParameter<long> { TypedValue = batch.Rows });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.FirstKey ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Text });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.LastKey ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Text });
        command.Parameters.Add(new NpgsqlParameter { Value = (object?)batch.Sha256 ?? DBNull.Value, NpgsqlDbType = NpgsqlDbType.Text });
        command.Parameters.Add(new NpgsqlParameter<string> { TypedValue = batch.Id });
        if (await command.ExecuteNonQueryAsync(cancellationToken) != 1)
        {
            throw new InvalidOperationException($"Batch {batch.Id} is not in the archive journal.");
        }
    }

    public async Task ForgetAsync(string batchId, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var command = new NpgsqlCommand($"DELETE FROM {Journal} WHERE batch_id = $1", connection);
        command.Parameters.Add(new NpgsqlParameter<string> { TypedValue = batchId });
        await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public async Task<(long Min, long Max)?> DeviceRangeAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var command = new NpgsqlCommand(
            $"SELECT min(device_id)::bigint, max(device_id)::bigint FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)}", connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        await reader.ReadAsync(cancellationToken);
        return await reader.IsDBNullAsync(0, cancellationToken) ? null : (reader.GetInt64(0), reader.GetInt64(1));
    }

    public async Task<long> CountOlderAsync(ReadingKind kind, KeyStrategy keys, long cutoffMicros, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var command = new NpgsqlCommand($"SELECT count(*) FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} WHERE ts < $1", connection);
        command.Parameters.Add(new NpgsqlParameter<DateTime> { TypedValue = ReadingTime.FromUnixMicroseconds(cutoffMicros), NpgsqlDbType = NpgsqlDbType.TimestampTz });
        return (long)(await command.ExecuteScalarAsync(cancellationToken))!;
    }

    private static string TimeLiteral(long micros) =>
        "'" + ReadingTime.FromUnixMicroseconds(micros).ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", CultureInfo.InvariantCulture) + "'::timestamptz";

    private static string UuidLiteral(byte[] bigEndian) => "'" + new Guid(bigEndian, bigEndian: true).ToString("D") + "'::uuid";

    /// <summary>The batch's rows: older than its cutoff, in its slice, after its cursor (a condition on the hot table's columns).</summary>
    private static string BatchCondition(ArchiveBatch batch)
    {
        // Every value below is a number or a time/uuid formatted here, never text from outside.
        var where = new List<string> { "ts < " + TimeLiteral(batch.CutoffMicros) };
        if (batch.Keys == KeyStrategy.Natural)
        {
            // Once there is a cursor it implies the low bound; leaving the bound out lets SQLite seek on the row value
            // (with both, it seeks on the device range and filters up to the cursor: a rescan per batch).
            if (batch.SliceLow is { } low && batch.Cursor is null)
            {
                where.Add(string.Create(CultureInfo.InvariantCulture, $"device_id >= {low}"));
            }

            if (batch.SliceHigh is { } high)
            {
                where.Add(string.Create(CultureInfo.InvariantCulture, $"device_id <= {high}"));
            }

            if (batch.Cursor is { } cursor)
            {
                var key = RowKey.Parse(cursor);
                where.Add(string.Create(CultureInfo.InvariantCulture, $"(device_id, channel, ts) > ({key.DeviceId}, {key.Channel}, {TimeLiteral(key.TsMicros)})"));
            }
        }
        else
        {
            if (batch.SliceLow is { } low)
            {
                where.Add("id >= " + UuidLiteral(ArchiveSlice.IdPrefix(low)));
            }

            if (batch.SliceHigh is { } high)
            {
                where.Add("id < " + UuidLiteral(ArchiveSlice.IdPrefix(high + 1)));
            }

            if (batch.Cursor is { } cursor)
            {
                where.Add("id > " + UuidLiteral(RowKey.Parse(cursor).IdBytes()));
            }
        }

        return string.Join(" AND ", where);
    }

    private static string KeyOrder(KeyStrategy keys) => keys == KeyStrategy.Natural ? "device_id, channel, ts" : "id";

    public async Task<List<ArchiveRow>> SelectAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        // A plain query read with a data reader: per row one async read, then synchronous gets from the buffered row.
        // (A binary COPY TO STDOUT read column by column with async reads took 200-900 ms per 50,000 rows, where the
        // query itself takes 45-90 ms in psql.)
        string sql =
            $"SELECT {string.Join(", ", ReadingTables.Columns(batch.Kind, batch.Keys))} FROM {ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot)} " +
            $"WHERE {BatchCondition(batch)} ORDER BY {KeyOrder(batch.Keys)} LIMIT {batch.BatchRows.ToString(CultureInfo.InvariantCulture)}";
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var command = new NpgsqlCommand(sql, connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await ReadRowsAsync(reader, batch, cancellationToken);
    }

    /// <summary>Reads rows of the batch's kind and key strategy (its columns, in <see cref="ReadingTables.Columns"/> order) to the end.</summary>
    private async Task<List<ArchiveRow>> ReadRowsAsync(NpgsqlDataReader reader, ArchiveBatch batch, CancellationToken cancellationToken)
    {
        var keys = batch.Keys;
        var kind = batch.Kind;
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        var rows = new List<ArchiveRow>(Math.Min(batch.BatchRows, 1 << 16));
        var values = new double?[4];
        int first = keys == KeyStrategy.Natural ? 0 : 1;
        // Not SequentialAccess: ReadAsync buffers the whole row, so the synchronous gets below never wait on the network.
#pragma warning disable VSTHRD103
        while (await reader.ReadAsync(cancellationToken))
        {
            Guid id = keys == KeyStrategy.Natural ? Guid.Empty : reader.GetGuid(0);
            int device = reader.GetInt32(first);
            int channel = reader.GetInt32(first + 1);
            var ts = reader.GetFieldValue<DateTime>(first + 2);
            Array.Clear(values);
            for (int i = 0; i < valueCount; i++)
            {
                if (!reader.IsDBNull(first + 3 + i))
                {
                    values[i] = reader.GetDouble(first + 3 + i);
                }
            }

            var received = reader.GetFieldValue<DateTime>(first + 3 + valueCount);
            AddSelected(rows, new ArchiveRow(id, new Reading(kind, device, channel, ts, received, values[0], values[1], values[2], values[3])), batch);
        }
#pragma warning restore VSTHRD103

        return rows;
    }

    /// <summary>
    /// One transaction per batch. One statement picks the batch's rows in the hot table (the same rows the
    /// step-by-step select takes: older than the cutoff, in the slice, after the cursor, in key order, at most the batch
    /// size; as the key range up to the batch's last key, found through the primary key in the same snapshot), deletes
    /// them and returns them in the table's order; they are sorted by key here. The export is written from them (synced and renamed into place) while they are copied into the archive table (binary
    /// <c>COPY</c>); the journal's "done" rides in the same transaction, committed once both are finished. No key list goes back to the server and the hot
    /// table is read once. A reading that arrives in the batch's key range meanwhile is not in the statement's
    /// snapshot, so it stays in hot. A key already in the archive table makes the copy fail: everything rolls back
    /// and the batch is <see cref="ArchiveMoveOutcome.Conflict"/>.
    /// <para>
    /// The pause points the crash tests stop at: mid-select while the rows are read; mid-export, export-renamed and
    /// manifest-written in <paramref name="export"/>; exported, archive-uncommitted, archived and
    /// delete-uncommitted once the export and the copy are both finished, with the transaction still open (a kill at any of these leaves the batch
    /// planned and its rows in hot only); deleted right after the commit (journal done).
    /// </para>
    /// </summary>
    public async Task<ArchiveMove> MoveAsync(ArchiveBatch batch, Func<List<ArchiveRow>, ArchiveBatch> export, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(export);
        string hot = ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot);
        string columns = string.Join(", ", ReadingTables.Columns(batch.Kind, batch.Keys));
        string order = KeyOrder(batch.Keys);
        string condition = BatchCondition(batch);
        // The batch is the keys up to its last one: the batch size's key after the cursor, found through the primary key
        // (under the natural key an index-only scan while the hot table is all-visible; a GUID table's rows are read for
        // their ts), or every key left when fewer remain. In one statement, so the bound and the delete share a snapshot
        // and the range holds exactly those rows. The range is deleted through the index (a bitmap scan: MoveSettings
        // keeps the planner, which cannot see the bound, from choosing a scan of the whole table); the rows come back in
        // the table's order and are sorted here, by key, for the export.
        // (It replaced "DELETE ... WHERE ctid = ANY (ARRAY(SELECT ctid ... ORDER BY key LIMIT n)) ... ORDER BY key": with the
        // key range instead of the row addresses and no sort in the server, PostgreSQL spent 51-88 ms on a 50,000-row
        // batch's statement against 117-122 ms, docs/archiver.md.)
        string upToBound = batch.Keys == KeyStrategy.Natural
            ? "(device_id, channel, ts) <= (COALESCE((SELECT device_id FROM bound), 2147483647), COALESCE((SELECT channel FROM bound), 2147483647), COALESCE((SELECT ts FROM bound), 'infinity'))"
            : "id <= COALESCE((SELECT id FROM bound), 'ffffffff-ffff-ffff-ffff-ffffffffffff'::uuid)";
        string sql =
            $"""
             WITH bound AS MATERIALIZED (
                 SELECT {order} FROM {hot} WHERE {condition} ORDER BY {order} OFFSET {(batch.BatchRows - 1).ToString(CultureInfo.InvariantCulture)} LIMIT 1)
             DELETE FROM {hot}
             WHERE {condition} AND {upToBound}
             RETURNING {columns}
             """;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        await connection.ExecuteAsync(MoveSettings(connection), cancellationToken);
        // The statement's rows as binary COPY, decoded in PostgresArchiveCopy (the data reader's per-value reads were the
        // second largest share of this process's CPU with four workers).
        var rows = await PostgresArchiveCopy.ReadAsync(connection, sql, batch.Kind, batch.Keys, batch.BatchRows, () => Pauses.Reach("mid-select", batch.Id),
            cancellationToken);
        rows = PostgresArchiveCopy.SortByKey(rows, batch.Keys);

        long statement = clock.ElapsedMilliseconds;
        if (rows.Count == 0)
        {
            await transaction.RollbackAsync(cancellationToken);
            return new ArchiveMove(ArchiveMoveOutcome.Empty, batch with { Rows = 0 }, statement);
        }

        // The export (this process's CPU and the disk) and the archive copy (the server) at once: the transaction commits
        // only after both, so the export is still on disk before the rows leave hot.
        long exportMs = 0;
        var exporting = Task.Run(() =>
        {
            var written = export(rows);
            exportMs = clock.ElapsedMilliseconds - statement;
            return written;
        }, cancellationToken);
        bool conflict = false;
        try
        {
            await CopyRowsAsync(connection, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive), batch.Kind, batch.Keys, rows, cancellationToken);
        }
        catch (PostgresException e) when (e.SqlState == UniqueViolation)
        {
            conflict = true;
        }
        catch
        {
            // The copy's error is the one to report; the export is not left running behind it (its files are discarded
            // when the batch, still planned, is done again).
            await ((Task)exporting).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            throw;
        }

        long copyMs = clock.ElapsedMilliseconds - statement;
        var exported = await exporting;
        Pauses.Reach("exported", batch.Id);
        if (conflict)
        {
            await transaction.RollbackAsync(cancellationToken);
            return new ArchiveMove(ArchiveMoveOutcome.Conflict, batch);
        }

        long copied = clock.ElapsedMilliseconds;
        foreach (string point in (ReadOnlySpan<string>)["archive-uncommitted", "archived", "delete-uncommitted"])
        {
            Pauses.Reach(point, batch.Id);
        }

        var done = exported with { State = BatchState.Done };
        await SetStateAsync(connection, done, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        Pauses.Reach("deleted", batch.Id);
        return new ArchiveMove(ArchiveMoveOutcome.Moved, done, statement, exportMs, copyMs, clock.ElapsedMilliseconds - copied);
    }

    private static Task CopyRowsAsync(NpgsqlConnection connection, string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows,
        CancellationToken cancellationToken) => PostgresArchiveCopy.CopyAsync(connection, table, kind, keys, rows, cancellationToken);

    /// <summary>Inserts rows into a table inside the connection's transaction, skipping keys already there; returns the rows inserted.</summary>
    private static async Task<long> InsertRowsAsync(NpgsqlConnection connection, NpgsqlTransaction transaction, string table, ReadingKind kind, KeyStrategy keys,
        IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        await transaction.SaveAsync("saito_archive", cancellationToken);
        try
        {
            await CopyRowsAsync(connection, table, kind, keys, rows, cancellationToken);
            await transaction.ReleaseAsync("saito_archive", cancellationToken);
            return rows.Count;
        }
        catch (PostgresException e) when (e.SqlState == UniqueViolation)
        {
            await transaction.RollbackAsync("saito_archive", cancellationToken);
        }

        await connection.ExecuteAsync($"CREATE TEMP TABLE saito_stage (LIKE {table}) ON COMMIT DROP", cancellationToken);
        await CopyRowsAsync(connection, "saito_stage", kind, keys, rows, cancellationToken);
        int inserted = await connection.ExecuteAsync($"INSERT INTO {table} SELECT * FROM saito_stage ON CONFLICT DO NOTHING", cancellationToken);
        await connection.ExecuteAsync("DROP TABLE saito_stage", cancellationToken);
        return inserted;
    }

    public async Task<long> ArchiveAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        long inserted = await InsertRowsAsync(connection, transaction, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive),
            batch.Kind, batch.Keys, rows, cancellationToken);
        Pauses.Reach("archive-uncommitted", batch.Id);
        await SetStateAsync(connection, batch with { State = BatchState.Archived }, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        return inserted;
    }

    public async Task<long> DeleteHotAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, bool rangeFirst, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        string table = ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot);
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        long deleted = -1;
        if (rangeFirst && rows.Count > 0)
        {
            await transaction.SaveAsync("saito_range", cancellationToken);
            await using var range = new NpgsqlCommand { Connection = connection };
            if (batch.Keys == KeyStrategy.Natural)
            {
                range.CommandText = $"DELETE FROM {table} WHERE (device_id, channel, ts) >= ($1, $2, $3) AND (device_id, channel, ts) <= ($4, $5, $6) AND ts < $7";
                range.Parameters.Add(new NpgsqlParameter<int> { TypedValue = rows[0].Reading.DeviceId });
                range.Parameters.Add(new NpgsqlParameter<int> { TypedValue = rows[0].Reading.Channel });
                range.Parameters.Add(new NpgsqlParameter<DateTime> { TypedValue = rows[0].Reading.Timestamp, NpgsqlDbType = NpgsqlDbType.TimestampTz });
                range.Parameters.Add(new NpgsqlParameter<int> { TypedValue = rows[^1].Reading.DeviceId });
                range.Parameters.Add(new NpgsqlParameter<int> { TypedValue = rows[^1].Reading.Channel });
                range.Parameters.Add(new NpgsqlParameter<DateTime> { TypedValue = rows[^1].Reading.Timestamp, NpgsqlDbType = NpgsqlDbType.TimestampTz });
            }
            else
            {
                range.CommandText = $"DELETE FROM {table} WHERE id >= $1 AND id <= $2 AND ts < $3";
                range.Parameters.Add(new NpgsqlParameter<Guid> { TypedValue = rows[0].Id });
                range.Parameters.Add(new NpgsqlParameter<Guid> { TypedValue = rows[^1].Id });
            }

            range.Parameters.Add(new NpgsqlParameter<DateTime> { TypedValue = ReadingTime.FromUnixMicroseconds(batch.CutoffMicros), NpgsqlDbType = NpgsqlDbType.TimestampTz });
            deleted = await range.ExecuteNonQueryAsync(cancellationToken);
            if (deleted == rows.Count)
            {
                await transaction.ReleaseAsync("saito_range", cancellationToken);
            }
            else
            {
                await transaction.RollbackAsync("saito_range", cancellationToken);
                deleted = -1;
            }
        }

        if (deleted < 0)
        {
            await using var delete = KeyCommand(connection, $"DELETE FROM {table} AS t USING {{0}} WHERE {{1}}", batch.Keys, rows);
            deleted = await delete.ExecuteNonQueryAsync(cancellationToken);
        }

        Pauses.Reach("delete-uncommitted", batch.Id);
        await SetStateAsync(connection, batch with { State = BatchState.Done }, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        Pauses.Reach("deleted", batch.Id);
        return deleted;
    }

    /// <summary>A command whose <c>{0}</c> is a set of the rows' keys (<c>k</c>, from arrays) and <c>{1}</c> joins it to table alias <c>t</c>.</summary>
    private static NpgsqlCommand KeyCommand(NpgsqlConnection connection, string template, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows)
    {
        var command = new NpgsqlCommand { Connection = connection };
        if (keys == KeyStrategy.Natural)
        {
            command.CommandText = string.Format(CultureInfo.InvariantCulture, template,
                "unnest($1::integer[], $2::integer[], $3::timestamptz[]) AS k(device_id, channel, ts)",
                "t.device_id = k.device_id AND t.channel = k.channel AND t.ts = k.ts");
            command.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = rows.Select(r => r.Reading.DeviceId).ToArray() });
            command.Parameters.Add(new NpgsqlParameter<int[]> { TypedValue = rows.Select(r => r.Reading.Channel).ToArray() });
            command.Parameters.Add(new NpgsqlParameter<DateTime[]> { TypedValue = rows.Select(r => r.Reading.Timestamp).ToArray(), NpgsqlDbType = NpgsqlDbType.Array | NpgsqlDbType.TimestampTz });
        }
        else
        {
            command.CommandText = string.Format(CultureInfo.InvariantCulture, template, "unnest($1::uuid[]) AS k(id)", "t.id = k.id");
            command.Parameters.Add(new NpgsqlParameter<Guid[]> { TypedValue = rows.Select(r => r.Id).ToArray() });
        }

        return command;
    }

    public async Task<(long InArchive, long InHot)> CheckAsync(ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(rows);
        string archive = ReadingTables.TableName(kind, keys, StorageTier.Archive);
        var columns = ReadingTables.Columns(kind, keys);
        string join = keys == KeyStrategy.Natural ? "a.device_id = s.device_id AND a.channel = s.channel AND a.ts = s.ts" : "a.id = s.id";
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        await connection.ExecuteAsync($"CREATE TEMP TABLE saito_verify (LIKE {archive}) ON COMMIT DROP", cancellationToken);
        await CopyRowsAsync(connection, "saito_verify", kind, keys, rows, cancellationToken);
        long inArchive = await connection.ScalarAsync<long>(
            $"SELECT count(*) FROM saito_verify AS s JOIN {archive} AS a ON {join} " +
            $"WHERE ({string.Join(", ", columns.Select(c => "a." + c))}) IS NOT DISTINCT FROM ({string.Join(", ", columns.Select(c => "s." + c))})",
            cancellationToken);
        long inHot = await connection.ScalarAsync<long>(
            $"SELECT count(*) FROM saito_verify AS s JOIN {ReadingTables.TableName(kind, keys, StorageTier.Hot)} AS a ON {join}", cancellationToken);
        await transaction.RollbackAsync(cancellationToken);
        return (inArchive, inHot);
    }

    public async Task<long> InBothTiersAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken)
    {
        string join = keys == KeyStrategy.Natural ? "a.device_id = h.device_id AND a.channel = h.channel AND a.ts = h.ts" : "a.id = h.id";
        return await ScalarAsync<long>(
            $"SELECT count(*) FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} AS h JOIN {ReadingTables.TableName(kind, keys, StorageTier.Archive)} AS a ON {join}",
            cancellationToken);
    }

    public async Task<long> InsertAsync(string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        long inserted = await InsertRowsAsync(connection, transaction, table, kind, keys, rows, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        return inserted;
    }

    private async Task ExecuteAsync(string sql, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await connection.ExecuteAsync(sql, cancellationToken);
    }

    private async Task<T> ScalarAsync<T>(string sql, CancellationToken cancellationToken)
    {
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        return await connection.ScalarAsync<T>(sql, cancellationToken);
    }

    public ValueTask DisposeAsync() => _dataSource.DisposeAsync();
}

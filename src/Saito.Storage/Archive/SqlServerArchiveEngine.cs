using System.Data;
using System.Data.Common;
using Microsoft.Data.SqlClient;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Data;
using Saito.Storage.Schema;
using Saito.Storage.SqlServer;
using static Saito.Storage.Archive.SqlServerArchiveSql;

namespace Saito.Storage.Archive;

/// <summary>
/// The archiver on SQL Server: hot and archive tables in one database (each tier on its filegroup), the journal
/// beside them on the archive filegroup, so each state change commits with the step it records, as on PostgreSQL.
/// Select: <c>SELECT TOP (n) ... ORDER BY key</c> through a data reader. Archive: the rows are bulk-copied
/// (<see cref="SqlBulkCopy"/>, from <see cref="ReadingRowSource"/>) into a #temp table, then
/// <c>INSERT ... WHERE NOT EXISTS</c>, which counts what it inserted (the archive tables' IGNORE_DUP_KEY would drop
/// duplicates too, but without a count). Delete: one range <c>DELETE</c> of [first key, last key] older than the cutoff,
/// kept when its <c>@@ROWCOUNT</c> is the batch's; otherwise rolled back to a savepoint and done by joining the
/// batch's keys, bulk-copied into a #temp table. A run holds a session application lock (<c>sp_getapplock</c>).
/// GUID keys: the stored GUID is <see cref="ReadingKeys.For"/> on SQL Server, so the bulk copy derives it again
/// from the reading, as the store did; GUID slices follow SQL Server's uniqueidentifier order
/// (<see cref="SqlServerArchiveSql.IdBoundary"/>).
/// Tested without a server (SQL text, slice boundaries); its integration tests run when SAITO_TEST_SQLSERVER is set.
/// </summary>
internal sealed class SqlServerArchiveEngine : ArchiveEngineBase, IArchiveEngine
{
    private readonly string _configured;
    private string _connectionString;
    private readonly string _description;
    private readonly string? _archiveFilegroup;
    private readonly int _timeoutSeconds;

    public SqlServerArchiveEngine(StorageOptions options, IArchivePauses pauses)
        : base(options, pauses)
    {
        if (string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            throw new ArchiveSetupException("Storage:ConnectionString is required for SQL Server.");
        }

        var builder = new SqlConnectionStringBuilder(options.ConnectionString);
        if (!builder.ShouldSerialize("Application Name"))
        {
            builder.ApplicationName = "saito-archiver";
        }

        _configured = builder.ConnectionString;
        _connectionString = Pooled(_configured, workers: 1);
        _description = $"SQL Server {builder.DataSource}/{builder.InitialCatalog}";
        _archiveFilegroup = SqlServerSql.ValidFilegroup(options.SqlServer.ArchiveFilegroup, "Storage:SqlServer:ArchiveFilegroup");
        _timeoutSeconds = options.CommandTimeoutSeconds;
    }

    public string Describe() => _description;

    private async Task<SqlConnection> OpenAsync(CancellationToken cancellationToken)
    {
        if (SqlServerReadingStore.GlobalizationInvariant.Value)
        {
            throw new ArchiveSetupException(SqlServerReadingStore.InvariantGlobalizationMessage);
        }

        return await SqlServerReadingStore.OpenConnectionAsync(_connectionString, cancellationToken);
    }

    private DbCommand Command(SqlConnection connection, string sql, SqlTransaction? transaction = null) =>
        connection.Command(sql, _timeoutSeconds, transaction);

    private async Task<object?> ScalarAsync(SqlConnection connection, string sql, SqlTransaction? transaction, CancellationToken cancellationToken,
        params SqlParameter[] parameters)
    {
        await using var command = Command(connection, sql, transaction);
        command.Parameters.AddRange(parameters);
        return await command.ExecuteScalarAsync(cancellationToken);
    }

    private async Task<object?> ScalarAsync(string sql, CancellationToken cancellationToken, params SqlParameter[] parameters)
    {
        await using var connection = await OpenAsync(cancellationToken);
        return await ScalarAsync(connection, sql, null, cancellationToken, parameters);
    }

    private static SqlParameter Time(string name, DateTime value) => new(name, SqlDbType.DateTime2) { Scale = 6, Value = value };

    private static SqlParameter Micros(string name, long micros) => Time(name, ReadingTime.FromUnixMicroseconds(micros));

    private static SqlParameter Text(string name, string? value) => new(name, SqlDbType.NVarChar, 1000) { Value = (object?)value ?? DBNull.Value };

    private static SqlParameter Big(string name, long? value) => new(name, SqlDbType.BigInt) { Value = (object?)value ?? DBNull.Value };

    public async Task<bool> JournalExistsAsync(CancellationToken cancellationToken) =>
        await ScalarAsync($"SELECT CASE WHEN OBJECT_ID(N'{SqlServerSql.Schema}.{Journal}', N'U') IS NULL THEN 0 ELSE 1 END", cancellationToken) is 1;

    public async Task<IAsyncDisposable?> TryLockRunAsync(CancellationToken cancellationToken) =>
        await (await OpenAsync(cancellationToken)).HoldSessionLockAsync(RunLock, result => result is int code && code >= 0, cancellationToken, _timeoutSeconds);

    /// <summary>
    /// Sizes the pool for a run with <paramref name="workers"/> workers: at most
    /// <see cref="ArchiveConnections.Max"/> connections, as on PostgreSQL (the connection string's
    /// <c>Max Pool Size</c> is replaced; SqlClient's default is 100). The previous size's idle connections are closed.
    /// </summary>
    public Task UseWorkersAsync(int workers)
    {
        string previous = _connectionString;
        _connectionString = Pooled(_configured, workers);
        if (!string.Equals(previous, _connectionString, StringComparison.Ordinal))
        {
            ClearPool(previous);
        }

        return Task.CompletedTask;
    }

    /// <summary>The connection string the engine opens connections with now (its pool's size included).</summary>
    internal string ConnectionString => _connectionString;

    internal static string Pooled(string connectionString, int workers) =>
        new SqlConnectionStringBuilder(connectionString) { MaxPoolSize = ArchiveConnections.Max(workers), MinPoolSize = 0 }.ConnectionString;

    private static void ClearPool(string connectionString)
    {
        using var connection = new SqlConnection(connectionString);
        SqlConnection.ClearPool(connection);
    }

    public async Task EnsureJournalAsync(CancellationToken cancellationToken) => await ScalarAsync(JournalDdl(_archiveFilegroup), cancellationToken);

    public async Task<IReadOnlyList<ArchiveBatch>> LoadJournalAsync(bool unfinishedOnly, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        return await ArchiveBatch.LoadAsync(connection, SqlServerSql.Table(Journal), SqlServerSql.Quote, "N'done'", unfinishedOnly, cancellationToken, _timeoutSeconds);
    }

    public async Task PlanAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        await ScalarAsync(
            $"INSERT INTO {SqlServerSql.Table(Journal)} ([batch_id], [run_id], [kind], [key_strategy], [slice], [slice_low], [slice_high], [cursor], [cutoff], [batch_rows], [state], [file]) " +
            "VALUES (@id, @run, @kind, @keys, @slice, @low, @high, @cursor, @cutoff, @batch_rows, N'planned', @file)",
            cancellationToken,
            Text("@id", batch.Id), Text("@run", batch.RunId), Text("@kind", ReadingKinds.Name(batch.Kind)),
            Text("@keys", SchemaScript.KeyStrategyName(batch.Keys)), new SqlParameter("@slice", SqlDbType.Int) { Value = batch.Slice },
            Big("@low", batch.SliceLow), Big("@high", batch.SliceHigh), Text("@cursor", batch.Cursor), Big("@cutoff", batch.CutoffMicros),
            new SqlParameter("@batch_rows", SqlDbType.Int) { Value = batch.BatchRows }, Text("@file", batch.File));
    }

    public async Task SetStateAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await SetStateAsync(connection, null, batch, cancellationToken);
    }

    private async Task SetStateAsync(SqlConnection connection, SqlTransaction? transaction, ArchiveBatch batch, CancellationToken cancellationToken)
    {
        await using var command = Command(connection,
            $"UPDATE {SqlServerSql.Table(Journal)} SET [state] = @state, [rows] = @rows, [first_key] = @first, [last_key] = @last, [sha256] = @sha, [updated_at] = SYSUTCDATETIME() WHERE [batch_id] = @id",
            transaction);
        command.Parameters.AddRange(new SqlParameter[]
        {
            Text("@state", ArchiveBatch.StateName(batch.State)), Big("@rows", batch.Rows), Text("@first", batch.FirstKey), Text("@last", batch.LastKey),
            Text("@sha", batch.Sha256), Text("@id", batch.Id),
        });
        if (await command.ExecuteNonQueryAsync(cancellationToken) != 1)
        {
            throw new InvalidOperationException($"Batch {batch.Id} is not in the archive journal.");
        }
    }

    public async Task ForgetAsync(string batchId, CancellationToken cancellationToken) =>
        await ScalarAsync($"DELETE FROM {SqlServerSql.Table(Journal)} WHERE [batch_id] = @id", cancellationToken, Text("@id", batchId));

    public async Task<(long Min, long Max)?> DeviceRangeAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection,
            $"SELECT CAST(MIN([device_id]) AS bigint), CAST(MAX([device_id]) AS bigint) FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))}");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        await reader.ReadAsync(cancellationToken);
        return await reader.IsDBNullAsync(0, cancellationToken) ? null : (reader.GetInt64(0), reader.GetInt64(1));
    }

    public async Task<long> CountOlderAsync(ReadingKind kind, KeyStrategy keys, long cutoffMicros, CancellationToken cancellationToken) =>
        (long)(await ScalarAsync(
            $"SELECT COUNT_BIG(*) FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} WHERE [ts] < @cutoff",
            cancellationToken, Micros("@cutoff", cutoffMicros)))!;

    public async Task<List<ArchiveRow>> SelectAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        var keys = batch.Keys;
        var kind = batch.Kind;
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection,
            Select(kind, keys, batch.SliceLow is not null, batch.SliceHigh is not null, batch.Cursor is not null));
        command.Parameters.Add(new SqlParameter("@n", SqlDbType.Int) { Value = batch.BatchRows });
        command.Parameters.Add(Micros("@cutoff", batch.CutoffMicros));
        if (keys == KeyStrategy.Natural)
        {
            if (batch.SliceLow is { } low && batch.Cursor is null)
            {
                command.Parameters.Add(new SqlParameter("@low", SqlDbType.Int) { Value = checked((int)low) });
            }

            if (batch.SliceHigh is { } high)
            {
                command.Parameters.Add(new SqlParameter("@high", SqlDbType.Int) { Value = checked((int)high) });
            }

            if (batch.Cursor is { } cursor)
            {
                var key = RowKey.Parse(cursor);
                command.Parameters.Add(new SqlParameter("@d", SqlDbType.Int) { Value = key.DeviceId });
                command.Parameters.Add(new SqlParameter("@c", SqlDbType.Int) { Value = key.Channel });
                command.Parameters.Add(Micros("@t", key.TsMicros));
            }
        }
        else
        {
            if (batch.SliceLow is { } low)
            {
                command.Parameters.Add(new SqlParameter("@low", SqlDbType.UniqueIdentifier) { Value = IdBoundary(low) });
            }

            if (batch.SliceHigh is { } high)
            {
                command.Parameters.Add(new SqlParameter("@high", SqlDbType.UniqueIdentifier) { Value = IdBoundary(high + 1) });
            }

            if (batch.Cursor is { } cursor)
            {
                command.Parameters.Add(new SqlParameter("@after", SqlDbType.UniqueIdentifier) { Value = RowKey.Parse(cursor).Id });
            }
        }

        int valueCount = ReadingTables.ValueColumns(kind).Count;
        var rows = new List<ArchiveRow>(Math.Min(batch.BatchRows, 1 << 16));
        var values = new double?[4];
        await using var reader = await command.ExecuteReaderAsync(CommandBehavior.SequentialAccess, cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            int c = 0;
            Guid id = keys == KeyStrategy.Natural ? Guid.Empty : reader.GetGuid(c++);
            int device = reader.GetInt32(c++);
            int channel = reader.GetInt32(c++);
            var ts = reader.GetDateTime(c++);
            Array.Clear(values);
            for (int i = 0; i < valueCount; i++, c++)
            {
                values[i] = await reader.IsDBNullAsync(c, cancellationToken) ? null : reader.GetDouble(c);
            }

            var received = reader.GetDateTime(c);
            AddSelected(rows, new ArchiveRow(id, new Reading(kind, device, channel, ts, received, values[0], values[1], values[2], values[3])), batch);
        }

        return rows;
    }

    /// <summary>Bulk-copies the rows into a new #temp table shaped like <paramref name="like"/>.</summary>
    private async Task StageAsync(SqlConnection connection, SqlTransaction transaction, string stage, string like, ReadingKind kind, KeyStrategy keys,
        IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        await ScalarAsync(connection, Stage(stage, like, kind, keys), transaction, cancellationToken);
        using var bulkCopy = SqlServerReadingStore.CreateBulkCopy(connection, transaction, stage, ReadingTables.Columns(kind, keys), _timeoutSeconds);
        await using var source = new ReadingRowSource(kind, keys, rows.Select(r => r.Reading).ToList());
        await bulkCopy.WriteToServerAsync(source, cancellationToken);
    }

    private async Task<long> InsertMissingAsync(SqlConnection connection, SqlTransaction transaction, string table, ReadingKind kind, KeyStrategy keys,
        IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        await StageAsync(connection, transaction, "#saito_stage", table, kind, keys, rows, cancellationToken);
        long inserted = Convert.ToInt64(await ScalarAsync(connection, InsertMissing("#saito_stage", table, kind, keys), transaction, cancellationToken),
            System.Globalization.CultureInfo.InvariantCulture);
        await ScalarAsync(connection, "DROP TABLE #saito_stage", transaction, cancellationToken);
        return inserted;
    }

    public async Task<long> ArchiveAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        await using var connection = await OpenAsync(cancellationToken);
        await using var transaction = (SqlTransaction)await connection.BeginTransactionAsync(cancellationToken);
        long inserted = await InsertMissingAsync(connection, transaction, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive),
            batch.Kind, batch.Keys, rows, cancellationToken);
        Pauses.Reach("archive-uncommitted", batch.Id);
        await SetStateAsync(connection, transaction, batch with { State = BatchState.Archived }, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        return inserted;
    }

    public async Task<long> DeleteHotAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, bool rangeFirst, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        ArgumentNullException.ThrowIfNull(rows);
        await using var connection = await OpenAsync(cancellationToken);
        await using var transaction = (SqlTransaction)await connection.BeginTransactionAsync(cancellationToken);
        long deleted = -1;
        if (rangeFirst && rows.Count > 0)
        {
            await transaction.SaveAsync("saito_range", cancellationToken);
            var first = rows[0];
            var last = rows[^1];
            var parameters = batch.Keys == KeyStrategy.Natural
                ? new[]
                {
                    new SqlParameter("@d1", SqlDbType.Int) { Value = first.Reading.DeviceId }, new SqlParameter("@c1", SqlDbType.Int) { Value = first.Reading.Channel },
                    Time("@t1", first.Reading.Timestamp), new SqlParameter("@d2", SqlDbType.Int) { Value = last.Reading.DeviceId },
                    new SqlParameter("@c2", SqlDbType.Int) { Value = last.Reading.Channel }, Time("@t2", last.Reading.Timestamp),
                    Micros("@cutoff", batch.CutoffMicros),
                }
                : new[]
                {
                    new SqlParameter("@first", SqlDbType.UniqueIdentifier) { Value = Id(first, batch.Keys) },
                    new SqlParameter("@last", SqlDbType.UniqueIdentifier) { Value = Id(last, batch.Keys) },
                    Micros("@cutoff", batch.CutoffMicros),
                };
            deleted = Convert.ToInt64(await ScalarAsync(connection, RangeDelete(batch.Kind, batch.Keys), transaction, cancellationToken, parameters),
                System.Globalization.CultureInfo.InvariantCulture);
            if (deleted != rows.Count)
            {
                await transaction.RollbackAsync("saito_range", cancellationToken);
                deleted = -1;
            }
        }

        if (deleted < 0)
        {
            string hot = ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot);
            await StageAsync(connection, transaction, "#saito_keys", hot, batch.Kind, batch.Keys, rows, cancellationToken);
            deleted = Convert.ToInt64(await ScalarAsync(connection, DeleteStaged("#saito_keys", batch.Kind, batch.Keys), transaction, cancellationToken),
                System.Globalization.CultureInfo.InvariantCulture);
            await ScalarAsync(connection, "DROP TABLE #saito_keys", transaction, cancellationToken);
        }

        Pauses.Reach("delete-uncommitted", batch.Id);
        await SetStateAsync(connection, transaction, batch with { State = BatchState.Done }, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        Pauses.Reach("deleted", batch.Id);
        return deleted;
    }

    /// <summary>The key SQL Server stores for the row (derived from the reading, as the store derived it).</summary>
    private static Guid Id(in ArchiveRow row, KeyStrategy keys) => ReadingKeys.For(row.Reading, keys, StorageProvider.SqlServer)!.Value;

    public async Task<(long InArchive, long InHot)> CheckAsync(ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(rows);
        await using var connection = await OpenAsync(cancellationToken);
        await using var transaction = (SqlTransaction)await connection.BeginTransactionAsync(cancellationToken);
        await StageAsync(connection, transaction, "#saito_verify", ReadingTables.TableName(kind, keys, StorageTier.Archive), kind, keys, rows, cancellationToken);
        long inArchive = (long)(await ScalarAsync(connection, CountExactInArchive("#saito_verify", kind, keys), transaction, cancellationToken))!;
        long inHot = (long)(await ScalarAsync(connection,
            $"SELECT COUNT_BIG(*) FROM #saito_verify AS s JOIN {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} AS h ON {KeyJoin(keys, "h", "s")}",
            transaction, cancellationToken))!;
        await transaction.RollbackAsync(cancellationToken);
        return (inArchive, inHot);
    }

    public async Task<long> InBothTiersAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken) =>
        (long)(await ScalarAsync(
            $"SELECT COUNT_BIG(*) FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} AS h " +
            $"JOIN {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Archive))} AS a ON {KeyJoin(keys, "a", "h")}",
            cancellationToken))!;

    public async Task<long> InsertAsync(string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var transaction = (SqlTransaction)await connection.BeginTransactionAsync(cancellationToken);
        long inserted = await InsertMissingAsync(connection, transaction, table, kind, keys, rows, cancellationToken);
        await transaction.CommitAsync(cancellationToken);
        return inserted;
    }

    public ValueTask DisposeAsync()
    {
        ClearPool(_connectionString);
        return ValueTask.CompletedTask;
    }
}

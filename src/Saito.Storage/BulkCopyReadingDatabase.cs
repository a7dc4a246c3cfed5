using System.Data.Common;
using Saito.Readings;

namespace Saito.Storage;

/// <summary>
/// The write loop of the databases that take many writers at once (PostgreSQL, SQL Server): a batch is one transaction
/// on its own pooled connection; each kind's readings go through the database's bulk path behind a savepoint (the fast
/// path, nothing between the rows and the table); when that copy meets a reading already stored, the transaction rolls
/// back to the savepoint and that kind takes the database's staging path, which skips and counts the duplicates and then
/// adds the values a stored row lacked or dead-letters a conflicting one (<see cref="DuplicateReadings"/>). Dead
/// letters go in the same transaction. A database supplies only the steps: <see cref="CopyReadingsAsync"/>,
/// <see cref="StageReadingsAsync"/> and <see cref="CopyDeadLettersAsync"/>.
/// </summary>
public abstract class BulkCopyReadingDatabase : ReadingDatabase
{
    private const string Savepoint = "saito_kind";

    /// <param name="options">The storage settings; a database behind a server needs its connection string.</param>
    /// <param name="databaseName">The database's name in the message when that is missing (<c>PostgreSQL</c>).</param>
    private protected BulkCopyReadingDatabase(StorageOptions options, string databaseName)
        : base(options)
    {
        if (string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            throw new ArgumentException($"Storage:ConnectionString is required for {databaseName}.", nameof(options));
        }
    }

    public override async Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        if (batch.IsEmpty)
        {
            return default;
        }

        await using var connection = await OpenWriterAsync(cancellationToken);
        return await WriteBatchAsync(connection, batch, cancellationToken);
    }

    /// <summary>The batch in one transaction on <paramref name="connection"/>; all or nothing.</summary>
    private protected async Task<BatchWriteResult> WriteBatchAsync(DbConnection connection, ReadingBatch batch, CancellationToken cancellationToken)
    {
        await using var transaction = await connection.BeginTransactionAsync(cancellationToken);
        var tally = new BatchTally();
        foreach (var kind in ReadingKinds.All)
        {
            var readings = batch.Of(kind);
            if (readings.Count == 0)
            {
                continue;
            }

            await transaction.SaveAsync(Savepoint, cancellationToken);
            long? copied = await CopyReadingsAsync(connection, transaction, kind, readings, cancellationToken);
            if (copied is { } rows)
            {
                tally.Inserted += rows;
            }
            else
            {
                await transaction.RollbackAsync(Savepoint, cancellationToken);
                tally.Inserted += await StageReadingsAsync(connection, transaction, kind, readings, cancellationToken);
                var (added, conflictsOnly) = await ReconcileAsync(connection, transaction, kind, readings, tally.Conflicts ??= [], cancellationToken);
                tally.Inserted += added;
                tally.Conflicted += conflictsOnly;
            }

            tally.Sent += readings.Count;
        }

        // The batch's own list is left as it is: a batch that fails is written again, and would add them twice.
        var deadLetters = tally.Conflicts is { Count: > 0 } conflicts ? [.. batch.DeadLetters, .. conflicts] : batch.DeadLetters;
        if (deadLetters.Count > 0)
        {
            await CopyDeadLettersAsync(connection, transaction, deadLetters, cancellationToken);
        }

        await transaction.CommitAsync(cancellationToken);
        return tally.Result(deadLetters.Count);
    }

    /// <summary>
    /// After the staging path: the readings whose key was stored already (before this batch, or by another reading of
    /// it) against the stored rows (<see cref="DuplicateReadings"/>): values a row lacks are added to it, a value that
    /// differs is a dead letter in <paramref name="conflicts"/>. Returns the readings that added values, and those
    /// that only conflicted. One query for the stored rows of the staged keys, one update per row that gained values.
    /// </summary>
    private async Task<(long Added, long ConflictsOnly)> ReconcileAsync(DbConnection connection, DbTransaction transaction, ReadingKind kind,
        IReadOnlyList<Reading> readings, List<DeadLetter> conflicts, CancellationToken cancellationToken)
    {
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        var stored = new Dictionary<(int Device, int Channel, long Micros), double?[]>();
        await using (var select = connection.CreateCommand())
        {
            select.Transaction = transaction;
            select.CommandText = StoredRowsOfStageSql(kind);
            await using var reader = await select.ExecuteReaderAsync(cancellationToken);
            while (await reader.ReadAsync(cancellationToken))
            {
                var values = new double?[valueCount];
                for (int i = 0; i < valueCount; i++)
                {
                    values[i] = await reader.IsDBNullAsync(3 + i, cancellationToken) ? null : reader.GetDouble(3 + i);
                }

                var ts = await reader.GetFieldValueAsync<DateTime>(2, cancellationToken);
                stored[(reader.GetInt32(0), reader.GetInt32(1), ReadingTime.ToUnixMicroseconds(DateTime.SpecifyKind(ts, DateTimeKind.Utc)))] = values;
            }
        }

        long added = 0;
        long conflictsOnly = 0;
        var changed = new HashSet<(int Device, int Channel, long Micros)>();
        foreach (var reading in readings)
        {
            var key = (reading.DeviceId, reading.Channel, ReadingTime.ToUnixMicroseconds(reading.Timestamp));
            if (!stored.TryGetValue(key, out var values))
            {
                // Not found by its natural key: a GUID table whose row has this id under another key; nothing is written over it.
                continue;
            }

            var outcome = DuplicateReadings.Compare(reading, values, out var conflict);
            if ((outcome & DuplicateOutcome.Added) != 0)
            {
                added++;
                changed.Add(key);
            }
            else if (conflict is not null)
            {
                conflictsOnly++;
            }

            if (conflict is not null)
            {
                conflicts.Add(conflict);
            }
        }

        foreach (var key in changed)
        {
            await using var update = connection.CreateCommand();
            update.Transaction = transaction;
            update.CommandText = UpdateValuesSql(kind);
            AddParameter(update, "d", key.Device);
            AddParameter(update, "c", key.Channel);
            update.Parameters.Add(TimeParameter(update, "ts", ReadingTime.FromUnixMicroseconds(key.Micros)));
            var values = stored[key];
            for (int i = 0; i < valueCount; i++)
            {
                AddParameter(update, "v" + i.ToString(System.Globalization.CultureInfo.InvariantCulture), values[i] is { } v ? v : DBNull.Value);
            }

            await update.ExecuteNonQueryAsync(cancellationToken);
        }

        return (added, conflictsOnly);
    }

    private static void AddParameter(DbCommand command, string name, object value)
    {
        var parameter = command.CreateParameter();
        parameter.ParameterName = name;
        parameter.Value = value;
        command.Parameters.Add(parameter);
    }

    /// <summary>
    /// The stored rows (device_id, channel, ts, then the value columns) of the hot table whose natural key is one the
    /// staging path just staged; the stage is still there (the same transaction).
    /// </summary>
    private protected abstract string StoredRowsOfStageSql(ReadingKind kind);

    /// <summary>
    /// <c>UPDATE</c> of the hot table's value columns (<c>@v0</c>, <c>@v1</c>, ...) of the row with natural key <c>@d</c>,
    /// <c>@c</c>, <c>@ts</c>.
    /// </summary>
    private protected abstract string UpdateValuesSql(ReadingKind kind);

    /// <summary>A UTC time parameter of the database's timestamp type (timestamptz, datetime2).</summary>
    private protected abstract DbParameter TimeParameter(DbCommand command, string name, DateTime utc);

    /// <summary>
    /// The fast path: one bulk copy of the kind's readings straight into its hot table. Returns the rows stored, or null
    /// when the copy met a reading already there (the loop then rolls back to the savepoint and stages the kind).
    /// </summary>
    private protected abstract Task<long?> CopyReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken);

    /// <summary>The counting path: the readings into a staging table, then what is new into the hot table; returns how many were.</summary>
    private protected abstract Task<long> StageReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken);

    private protected abstract Task CopyDeadLettersAsync(
        DbConnection connection, DbTransaction transaction, List<DeadLetter> deadLetters, CancellationToken cancellationToken);
}

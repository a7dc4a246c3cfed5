using System.Data.Common;
using Saito.Readings;

namespace Saito.Storage;

/// <summary>
/// The write loop of the databases that take many writers at once (PostgreSQL, SQL Server): a batch is one transaction
/// on its own pooled connection; each kind's readings go through the database's bulk path behind a savepoint (the fast
/// path, nothing between the rows and the table); when that copy meets a reading already stored, the transaction rolls
/// back to the savepoint and that kind takes the database's staging path, which skips and counts the duplicates. Dead
/// letters go in the same transaction. A database supplies only the steps: <see cref="CopyReadingsAsync"/>,
/// <see cref="StageReadingsAsync"/> and <see cref="CopyDeadLettersAsync"/>.
/// </summary>
public abstract class BulkCopyReadingDatabase : ReadingDatabase
{
    private const string Savepoint = "saito_kind";

    private protected BulkCopyReadingDatabase(StorageOptions options)
        : base(options)
    {
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
        long sent = 0;
        long inserted = 0;
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
                inserted += rows;
            }
            else
            {
                await transaction.RollbackAsync(Savepoint, cancellationToken);
                inserted += await StageReadingsAsync(connection, transaction, kind, readings, cancellationToken);
            }

            sent += readings.Count;
        }

        if (batch.DeadLetters.Count > 0)
        {
            await CopyDeadLettersAsync(connection, transaction, batch.DeadLetters, cancellationToken);
        }

        await transaction.CommitAsync(cancellationToken);
        return new BatchWriteResult(inserted, sent - inserted, batch.DeadLetters.Count);
    }

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

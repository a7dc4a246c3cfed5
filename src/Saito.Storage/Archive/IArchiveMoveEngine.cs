using Microsoft.Extensions.Logging;

namespace Saito.Storage.Archive;

/// <summary>
/// An engine that can take a planned batch to done in one transaction, inside the database (PostgreSQL: the journal,
/// the hot and the archive table are in one database). One statement deletes the batch's rows from the hot table and
/// returns them; the export is written from what it returned, synced and renamed into place, while the rows are
/// inserted into the archive table; then the journal's "done" is recorded and the transaction commits. A kill anywhere before the
/// commit rolls all of it back (the rows are in hot only, the journal says planned, and the next run exports the batch
/// again); after it, the rows are in the archive only and their export is on disk. So the export is durable before
/// the rows leave hot, as on the step-by-step path, and there is no moment at which a row is in both tiers.
/// </summary>
internal interface IArchiveMoveEngine
{
    /// <summary>
    /// Moves a planned batch: deletes its rows from hot, hands them (key order) to <paramref name="export"/>, which
    /// writes the export and its manifest and returns the batch as exported (rows, first and last key, SHA-256),
    /// inserts them into the archive table, records the batch as done and commits. The rows are handed over before the export is written, so a caller can
    /// start the next batch (after the last key) while this one is written.
    /// <see cref="ArchiveMoveOutcome.Conflict"/>: a key of the batch is already in the archive table (a reading sent
    /// again after its first copy was archived); nothing changed, and the batch must go the step-by-step way, which
    /// skips such keys.
    /// </summary>
    Task<ArchiveMove> MoveAsync(ArchiveBatch batch, Func<List<ArchiveRow>, ArchiveBatch> export, CancellationToken cancellationToken);
}

internal enum ArchiveMoveOutcome
{
    /// <summary>The rows are in the archive table and their export on disk; the journal says done.</summary>
    Moved,

    /// <summary>No row of the slice after the batch's cursor is older than the cutoff; nothing changed.</summary>
    Empty,

    /// <summary>A key of the batch is already archived; rolled back, nothing changed.</summary>
    Conflict,
}

/// <summary>What <see cref="IArchiveMoveEngine.MoveAsync"/> did, and how long each part took (milliseconds).</summary>
internal sealed record ArchiveMove(ArchiveMoveOutcome Outcome, ArchiveBatch Batch, long StatementMilliseconds = 0, long ExportMilliseconds = 0,
    long ArchiveMilliseconds = 0, long CommitMilliseconds = 0)
{
    public long TotalMilliseconds => StatementMilliseconds + Math.Max(ExportMilliseconds, ArchiveMilliseconds) + CommitMilliseconds;
}

internal static partial class ArchiveMoveLog
{
    [LoggerMessage(EventId = 4520, Level = LogLevel.Information,
        Message = "Batch {BatchId}: {Rows} rows moved from {Hot} to {Archive} in one transaction in {Milliseconds} ms (delete statement {StatementMilliseconds} ms, " +
            "export {ExportMilliseconds} ms and archive copy {ArchiveMilliseconds} ms at once, commit {CommitMilliseconds} ms; the rows were locked that long); done")]
    public static partial void Moved(ILogger logger, string batchId, long rows, string hot, string archive, long milliseconds, long statementMilliseconds,
        long exportMilliseconds, long archiveMilliseconds, long commitMilliseconds);

    [LoggerMessage(EventId = 4521, Level = LogLevel.Information,
        Message = "Batch {BatchId}: a key of it is already in {Archive} (a reading sent again after it was archived); moving it step by step, which skips such keys")]
    public static partial void Conflict(ILogger logger, string batchId, string archive);
}

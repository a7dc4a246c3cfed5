using Microsoft.Extensions.Logging;

namespace Saito.Storage.Archive;

internal static partial class ArchiveLog
{
    [LoggerMessage(EventId = 4501, Level = LogLevel.Information, Message = "Archiving {Kinds} readings older than {Cutoff:O} from {Store}: {Rows} rows in {Slices} slice(s), {Threads} worker(s), batches of {BatchRows}, exports in {ExportDirectory}")]
    public static partial void RunStarted(ILogger logger, string kinds, DateTime cutoff, string store, long rows, int slices, int threads, int batchRows, string exportDirectory);

    [LoggerMessage(EventId = 4502, Level = LogLevel.Information, Message = "Resuming batch {BatchId} ({Kind}, journal says {State})")]
    public static partial void Resuming(ILogger logger, string batchId, string kind, string state);

    [LoggerMessage(EventId = 4503, Level = LogLevel.Information, Message = "Batch {BatchId}: exported {Rows} rows ({FirstKey} .. {LastKey}) to {File} in {Milliseconds} ms (select {SelectMilliseconds} ms)")]
    public static partial void Exported(ILogger logger, string batchId, long rows, string? firstKey, string? lastKey, string file, long milliseconds, long selectMilliseconds);

    [LoggerMessage(EventId = 4504, Level = LogLevel.Information, Message = "Batch {BatchId}: {Inserted} of {Rows} rows inserted into {Table} in {Milliseconds} ms{Note}")]
    public static partial void Archived(ILogger logger, string batchId, long inserted, long rows, string table, long milliseconds, string note);

    [LoggerMessage(EventId = 4505, Level = LogLevel.Information, Message = "Batch {BatchId}: {Deleted} rows deleted from {Table} in {Milliseconds} ms (hot write lock held that long); done")]
    public static partial void Deleted(ILogger logger, string batchId, long deleted, string table, long milliseconds);

    [LoggerMessage(EventId = 4506, Level = LogLevel.Error, Message = "Batch {BatchId} failed; its journal entry stays '{State}' and the next run resumes it")]
    public static partial void BatchFailed(ILogger logger, Exception exception, string batchId, string state);

    [LoggerMessage(EventId = 4507, Level = LogLevel.Information, Message = "{Slice}: no more rows older than the cutoff")]
    public static partial void SliceFinished(ILogger logger, string slice);

    [LoggerMessage(EventId = 4508, Level = LogLevel.Information, Message = "Restored {Inserted} of {Rows} rows of {File} into {Table}")]
    public static partial void Restored(ILogger logger, long inserted, long rows, string file, string table);

    [LoggerMessage(EventId = 4509, Level = LogLevel.Warning, Message = "Restore skipped {Manifest}: {Problem}")]
    public static partial void RestoreSkipped(ILogger logger, string manifest, string problem);

    [LoggerMessage(EventId = 4510, Level = LogLevel.Warning, Message = "Restore rejected {File}:{Line}: {Reason}")]
    public static partial void RestoreLineRejected(ILogger logger, string file, long line, string reason);

    [LoggerMessage(EventId = 4511, Level = LogLevel.Warning, Message = "Restore did not follow the symbolic link {Link} (links in a folder are not followed)")]
    public static partial void RestoreLinkSkipped(ILogger logger, string link);

    [LoggerMessage(EventId = 4512, Level = LogLevel.Information, Message = "Restore created what was missing of the schema before restoring: {Created}")]
    public static partial void RestoreSchemaCreated(ILogger logger, string created);
}

using Microsoft.Extensions.Logging;

namespace Saito.Storage.Sqlite;

internal static partial class SqliteLog
{
    [LoggerMessage(EventId = 4100, Level = LogLevel.Information, Message = "SQLite schema: created {Created} in {File}")]
    public static partial void SchemaCreated(ILogger logger, string created, string file);

    [LoggerMessage(EventId = 4101, Level = LogLevel.Warning, Message = "SQLite {File} could not switch to WAL journaling (journal_mode is {JournalMode}); writes are slower and readers block the writer")]
    public static partial void NotWal(ILogger logger, string file, string journalMode);

    [LoggerMessage(EventId = 4102, Level = LogLevel.Debug, Message = "SQLite writer connection opened on {File} (synchronous={Synchronous})")]
    public static partial void WriterOpened(ILogger logger, string file, string synchronous);

    [LoggerMessage(EventId = 4103, Level = LogLevel.Debug, Message = "SQLite write failed; the writer connection is closed and reopened on the next write")]
    public static partial void WriterDiscarded(ILogger logger, Exception exception);

    [LoggerMessage(EventId = 4104, Level = LogLevel.Information, Message = "SQLite schema: added column {Table}.{Column} in {File} (the table was made by an older Saito)")]
    public static partial void ColumnAdded(ILogger logger, string table, string column, string file);

    [LoggerMessage(EventId = 4105, Level = LogLevel.Critical, Message = "Flushing the SQLite log {File} to disk failed; readings committed since the last flush may not be on disk. Saito acknowledges no more readings until it is restarted: check the disk, then restart Saito")]
    public static partial void WalFlushFailed(ILogger logger, Exception exception, string file);
}

using Microsoft.Extensions.Logging;

namespace Saito.Storage.Postgres;

internal static partial class PostgresLog
{
    [LoggerMessage(EventId = 4200, Level = LogLevel.Information, Message = "PostgreSQL schema: created {Created}")]
    public static partial void SchemaCreated(ILogger logger, string created);

    [LoggerMessage(EventId = 4201, Level = LogLevel.Information, Message = "PostgreSQL tablespace {Tablespace} created at {Location}")]
    public static partial void TablespaceCreated(ILogger logger, string tablespace, string location);

    [LoggerMessage(EventId = 4202, Level = LogLevel.Warning, Message = "PostgreSQL table {Table} is on tablespace {Actual}, not {Configured} as configured; Saito does not move existing tables (ALTER TABLE {Table} SET TABLESPACE ...)")]
    public static partial void TableOnOtherTablespace(ILogger logger, string table, string actual, string configured);

    [LoggerMessage(EventId = 4203, Level = LogLevel.Debug, Message = "COPY into {Table} met a reading already stored; {Count} readings go through the staging table instead")]
    public static partial void DuplicatesStaged(ILogger logger, string table, int count);

    [LoggerMessage(EventId = 4204, Level = LogLevel.Information, Message = "PostgreSQL schema: added column {Table}.{Column} (the table was made by an older Saito)")]
    public static partial void ColumnAdded(ILogger logger, string table, string column);
}

using System.Text;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>What a schema statement makes.</summary>
internal enum SqlServerSchemaObject
{
    Filegroup,
    File,
    Table,
    View,
}

/// <summary>One statement of the schema: what it makes (for <see cref="SchemaReport"/>) and its idempotent T-SQL.</summary>
/// <param name="Name">what it makes, as the report names it: <c>reading_biosensor</c>, <c>v_pressure</c>, <c>filegroup [hot]</c>, <c>file /data/saito_hot.ndf</c></param>
/// <param name="Object">a filegroup, a filegroup's data file, a table or a view</param>
/// <param name="Target">the table or view (unqualified), or the filegroup (for a filegroup and for its file)</param>
/// <param name="Sql">one batch, guarded (or, for a view, CREATE OR ALTER) so that running it again changes nothing</param>
internal sealed record SqlServerSchemaStep(string Name, SqlServerSchemaObject Object, string Target, string Sql);

/// <summary>
/// The SQL Server schema as T-SQL text, the single place it is written: <see cref="SqlServerReadingStore.EnsureSchemaAsync"/>
/// runs these statements, and <c>sql/sqlserver/001_schema.sql</c> is <see cref="Script"/> (a test regenerates and
/// compares it). Every key strategy's reading tables exist, hot and archive, so switching <c>Storage:KeyStrategy</c>
/// needs no migration; device, dead_letter and the hot tables go on the hot filegroup, the archive tables on the
/// archive filegroup (PRIMARY for either when unset). Views <c>v_&lt;kind&gt;</c> show a person the hot readings
/// of every key strategy with the device's serial.
/// <para>
/// Duplicates: every reading table's clustered primary key is created <c>WITH (IGNORE_DUP_KEY = ON)</c>, and the
/// store bulk-copies straight into the table. The CREATE INDEX reference says of IGNORE_DUP_KEY = ON: "A warning
/// message will occur when duplicate key values are inserted into a unique index. Only the rows violating the
/// uniqueness constraint will fail"; the option applies to insert operations, which a bulk load (the TDS
/// INSERT BULK that SqlBulkCopy sends) is. Source: https://learn.microsoft.com/sql/t-sql/statements/create-index-transact-sql
/// (IGNORE_DUP_KEY; the same index option is allowed on PRIMARY KEY constraints in CREATE TABLE). SqlBulkCopy into
/// such a table is reported not to fail, counting the rows it sent rather than the rows stored, in
/// https://github.com/mikependon/RepoDB/issues/1020. The warning is message 3604, severity 10, "Duplicate key was
/// ignored.", which SqlClient raises as <c>SqlConnection.InfoMessage</c>, not as an exception. So a batch holding a
/// reading already stored (or the same reading twice) never fails, and there is no staging table on the common
/// path. A staging table (<see cref="CreateStage"/>, <see cref="InsertFromStage"/>) is used only to count exactly
/// when the warning says a copy dropped something (see <see cref="SqlServerReadingStore.WriteAsync"/>); its
/// INSERT ... SELECT goes into the same IGNORE_DUP_KEY table, so it needs no NOT EXISTS and no lock hints to be
/// safe against a concurrent writer of the same readings.
/// </para>
/// </summary>
internal sealed class SqlServerSchema
{
    /// <summary>Column sizes of the registry, so the store can cut what a device announces to fit.</summary>
    public const int SerialLength = 128;
    public const int DeviceKindLength = 32;
    public const int FirmwareLength = 64;
    public const int HubLength = 128;
    public const int ClientIdLength = 256;
    public const int ReasonLength = 64;

    /// <summary>
    /// Serials compare byte for byte (as on SQLite and PostgreSQL), not by the database's default collation,
    /// which is usually case-insensitive and would make <c>ABC</c> and <c>abc</c> one device.
    /// </summary>
    public const string SerialCollation = "Latin1_General_100_BIN2";

    /// <summary>The natural key's columns, in clustered index order.</summary>
    public static IReadOnlyList<string> NaturalKey { get; } = ["device_id", "channel", "ts"];

    /// <summary>Every reading table with what it holds, in creation order (hot, then archive; natural, guid, sequential-guid; by kind).</summary>
    private static readonly (string Name, ReadingKind Kind, KeyStrategy Keys, StorageTier Tier)[] ReadingTableSpecs =
        (from tier in new[] { StorageTier.Hot, StorageTier.Archive }
         from keys in new[] { KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid }
         from kind in ReadingKinds.All
         select (ReadingTables.TableName(kind, keys, tier), kind, keys, tier)).ToArray();

    private static readonly List<string> ReadingTableNameList = ReadingTableSpecs.Select(spec => spec.Name).ToList();

    public SqlServerSchema(SqlServerStorageOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        HotFilegroup = SqlServerSql.ValidFilegroup(options.HotFilegroup, "Storage:SqlServer:HotFilegroup");
        ArchiveFilegroup = SqlServerSql.ValidFilegroup(options.ArchiveFilegroup, "Storage:SqlServer:ArchiveFilegroup");
        HotFilePath = SqlServerSql.ValidFolder(options.HotFilePath, "Storage:SqlServer:HotFilePath");
        ArchiveFilePath = SqlServerSql.ValidFolder(options.ArchiveFilePath, "Storage:SqlServer:ArchiveFilePath");
        if (HotFilePath is not null && HotFilegroup is null)
        {
            throw new ArgumentException("Storage:SqlServer:HotFilePath needs Storage:SqlServer:HotFilegroup (the filegroup to create).", nameof(options));
        }

        if (ArchiveFilePath is not null && ArchiveFilegroup is null)
        {
            throw new ArgumentException("Storage:SqlServer:ArchiveFilePath needs Storage:SqlServer:ArchiveFilegroup (the filegroup to create).", nameof(options));
        }

        if (HotFilegroup is not null && string.Equals(HotFilegroup, ArchiveFilegroup, StringComparison.OrdinalIgnoreCase)
            && HotFilePath is not null && ArchiveFilePath is not null && !string.Equals(HotFilePath, ArchiveFilePath, StringComparison.Ordinal))
        {
            throw new ArgumentException($"Hot and archive tiers share filegroup '{HotFilegroup}' but name different folders for it; give one folder or two filegroups.", nameof(options));
        }
    }

    public string? HotFilegroup { get; }

    public string? ArchiveFilegroup { get; }

    public string? HotFilePath { get; }

    public string? ArchiveFilePath { get; }

    /// <summary>The filegroup a tier's tables go on: the configured one, else PRIMARY.</summary>
    public string Filegroup(StorageTier tier) =>
        (tier == StorageTier.Hot ? HotFilegroup : ArchiveFilegroup) ?? SqlServerSql.DefaultFilegroup;

    /// <summary>Filegroups named in configuration (to check that they exist), each once.</summary>
    public IReadOnlyList<string> ConfiguredFilegroups() =>
        new[] { HotFilegroup, ArchiveFilegroup }.OfType<string>().Distinct(StringComparer.OrdinalIgnoreCase).ToList();

    /// <summary>
    /// The filegroups Saito adds, with their data files, because a folder is configured: for each, an
    /// <c>ADD FILEGROUP</c> step then an <c>ADD FILE</c> step, both skipped when already there.
    /// </summary>
    public IReadOnlyList<SqlServerSchemaStep> FilegroupSteps(string databaseName)
    {
        ArgumentException.ThrowIfNullOrEmpty(databaseName);
        var steps = new List<SqlServerSchemaStep>();
        var done = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        foreach (var (filegroup, folder) in new[] { (HotFilegroup, HotFilePath), (ArchiveFilegroup, ArchiveFilePath) })
        {
            if (filegroup is null || folder is null || !done.Add(filegroup))
            {
                continue;
            }

            steps.Add(new SqlServerSchemaStep($"filegroup {SqlServerSql.Quote(filegroup)}", SqlServerSchemaObject.Filegroup, filegroup, AddFilegroup(filegroup)));
            string fileName = FileName(databaseName, filegroup);
            steps.Add(new SqlServerSchemaStep($"file {SqlServerSql.JoinPath(folder, fileName + ".ndf")}", SqlServerSchemaObject.File, filegroup, AddFile(filegroup, folder, fileName)));
        }

        return steps;
    }

    /// <summary>
    /// Every table, in creation order: device and dead_letter, then the hot reading tables of each key strategy,
    /// then the archive ones. Each step is named by its table, as <see cref="SchemaReport"/> lists it.
    /// </summary>
    public IReadOnlyList<SqlServerSchemaStep> TableSteps()
    {
        var steps = new List<SqlServerSchemaStep>
        {
            new(ReadingTables.DeviceTable, SqlServerSchemaObject.Table, ReadingTables.DeviceTable, Guarded(ReadingTables.DeviceTable, CreateDeviceTable()) + "\n" + AddDeviceRegistryColumns),
            new(ReadingTables.DeadLetterTable, SqlServerSchemaObject.Table, ReadingTables.DeadLetterTable,
                Guarded(ReadingTables.DeadLetterTable, CreateDeadLetterTable()) + "\n" + AddDeadLetterPayloadBytes),
        };
        foreach (var (table, kind, keys, tier) in ReadingTableSpecs)
        {
            string sql = Guarded(table, CreateReadingTable(kind, keys, tier));
            if (keys != KeyStrategy.Natural)
            {
                sql += "\n" + NaturalKeyIndex(table, tier);
            }

            steps.Add(new SqlServerSchemaStep(table, SqlServerSchemaObject.Table, table, sql));
        }

        return steps;
    }

    /// <summary>
    /// The views for a person, one per kind after the tables: <c>v_biosensor</c>, <c>v_location</c>, <c>v_pressure</c>,
    /// the hot readings of every key strategy's table with the device's serial beside device_id and the strategy named.
    /// <c>CREATE OR ALTER VIEW</c> must start its batch, so a view cannot sit in an IF; it is idempotent itself.
    /// </summary>
    public static IReadOnlyList<SqlServerSchemaStep> ViewSteps() =>
        ReadingKinds.All.Select(kind => new SqlServerSchemaStep(ViewName(kind), SqlServerSchemaObject.View, ViewName(kind), CreateView(kind))).ToList();

    public static string ViewName(ReadingKind kind) => "v_" + ReadingKinds.Name(kind);

    private static string CreateView(ReadingKind kind)
    {
        string values = string.Concat(ReadingTables.ValueColumns(kind).Select(column => "r." + SqlServerSql.Quote(column) + ", "));
        var selects = new[] { KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid }.Select(keys =>
            $"SELECT d.[serial], r.[device_id], r.[channel], r.[ts], {values}r.[received_at], {SqlServerSql.Literal(KeyStrategyName(keys))} AS [key_strategy]\n" +
            $"  FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} AS r " +
            $"LEFT JOIN {SqlServerSql.Table(ReadingTables.DeviceTable)} AS d ON d.[id] = r.[device_id]");
        return $"CREATE OR ALTER VIEW {SqlServerSql.Table(ViewName(kind))} AS\n{string.Join("\nUNION ALL\n", selects)};";
    }

    /// <summary>The configuration spelling: natural, guid, sequential-guid.</summary>
    private static string KeyStrategyName(KeyStrategy keys) => keys switch
    {
        KeyStrategy.Natural => "natural",
        KeyStrategy.Guid => "guid",
        KeyStrategy.SequentialGuid => "sequential-guid",
        _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
    };

    /// <summary>The eighteen reading tables: hot then archive, each key strategy, each kind.</summary>
    public static IReadOnlyList<string> ReadingTableNames() => ReadingTableNameList;

    private static (ReadingKind Kind, KeyStrategy Keys, StorageTier Tier) Parse(string table)
    {
        var spec = Array.Find(ReadingTableSpecs, spec => spec.Name == table);
        return spec.Name is null ? throw new ArgumentOutOfRangeException(nameof(table), table, "Not a reading table") : (spec.Kind, spec.Keys, spec.Tier);
    }

    /// <summary>The name of a reading table's primary key (and clustered index).</summary>
    public static string PrimaryKeyName(string table) => "pk_" + table;

    /// <summary>
    /// <c>CREATE TABLE</c> of one reading table: <c>[id uniqueidentifier,]</c> device_id, channel, ts, the kind's
    /// values (float; NULL allowed for biosensor values, which a device may send any subset of, NOT NULL for
    /// location and pressure, whose values are all required), received_at; clustered primary key on
    /// (device_id, channel, ts) or on id, <c>WITH (IGNORE_DUP_KEY = ON)</c>; on the tier's filegroup.
    /// </summary>
    public string CreateReadingTable(ReadingKind kind, KeyStrategy keys, StorageTier tier)
    {
        string table = ReadingTables.TableName(kind, keys, tier);
        var sql = new StringBuilder();
        sql.Append("CREATE TABLE ").Append(SqlServerSql.Table(table)).Append(" (\n");
        foreach (string column in ReadingTables.Columns(kind, keys))
        {
            sql.Append("    ").Append(SqlServerSql.Quote(column)).Append(' ').Append(ColumnType(kind, column)).Append(",\n");
        }

        string key = keys == KeyStrategy.Natural
            ? string.Join(", ", NaturalKey.Select(SqlServerSql.Quote))
            : SqlServerSql.Quote("id");
        sql.Append("    CONSTRAINT ").Append(SqlServerSql.Quote(PrimaryKeyName(table)))
            .Append(" PRIMARY KEY CLUSTERED (").Append(key).Append(")\n")
            .Append("        WITH (IGNORE_DUP_KEY = ON)\n")
            .Append(") ON ").Append(SqlServerSql.Quote(Filegroup(tier))).Append(';');
        return sql.ToString();
    }

    /// <summary>The device registry: auto-numbered id, unique serial, what the device last said of itself.</summary>
    public string CreateDeviceTable() =>
        $"""
        CREATE TABLE {SqlServerSql.Table(ReadingTables.DeviceTable)} (
            [id] int IDENTITY(1, 1) NOT NULL,
            [serial] nvarchar({SerialLength}) COLLATE {SerialCollation} NOT NULL,
            [kind] nvarchar({DeviceKindLength}) NULL,
            [channels] int NULL,
            [firmware] nvarchar({FirmwareLength}) NULL,
            [hub] nvarchar({HubLength}) NULL,
            [first_seen] datetime2(6) NOT NULL CONSTRAINT [df_device_first_seen] DEFAULT (SYSUTCDATETIME()),
            [last_hello] datetime2(6) NULL,
            [last_seen] datetime2(6) NULL,
            [retired_at] datetime2(6) NULL,
            CONSTRAINT [pk_device] PRIMARY KEY CLUSTERED ([id]),
            CONSTRAINT [uq_device_serial] UNIQUE ([serial])
        ) ON {SqlServerSql.Quote(Filegroup(StorageTier.Hot))};
        """;

    /// <summary>Messages (or parts of them) that could not be stored as readings, kept with the reason.</summary>
    public string CreateDeadLetterTable() =>
        $"""
        CREATE TABLE {SqlServerSql.Table(ReadingTables.DeadLetterTable)} (
            [id] bigint IDENTITY(1, 1) NOT NULL,
            [received_at] datetime2(6) NOT NULL,
            [topic] nvarchar({DeadLetter.MaxTopicChars}) NOT NULL,
            [client_id] nvarchar({ClientIdLength}) NULL,
            [reason] nvarchar({ReasonLength}) NOT NULL,
            [detail] nvarchar({DeadLetter.MaxReasonChars}) NOT NULL,
            [payload] nvarchar(max) NOT NULL,
            [payload_bytes] varbinary(max) NULL,
            CONSTRAINT [pk_dead_letter] PRIMARY KEY CLUSTERED ([id])
        ) ON {SqlServerSql.Quote(Filegroup(StorageTier.Hot))};
        """;

    /// <summary>
    /// payload_bytes came after the first dead_letter table: a table made by an older Saito gets it on start (nullable,
    /// so adding it changes only metadata). payload holds the rejected bytes as text when they are UTF-8 without NUL,
    /// else a preview, and payload_bytes then holds the exact bytes.
    /// </summary>
    public static string AddDeadLetterPayloadBytes { get; } =
        $"IF COL_LENGTH({SqlServerSql.Literal(SqlServerSql.Table(ReadingTables.DeadLetterTable))}, N'payload_bytes') IS NULL\n" +
        $"    ALTER TABLE {SqlServerSql.Table(ReadingTables.DeadLetterTable)} ADD [payload_bytes] varbinary(max) NULL;";

    /// <summary>
    /// last_seen (set by ingestion every few seconds) and retired_at (set by staff through the registry) came after
    /// the first device table: a table made by an older Saito gets them on start (nullable, metadata only).
    /// </summary>
    public static string AddDeviceRegistryColumns { get; } =
        $"IF COL_LENGTH({SqlServerSql.Literal(SqlServerSql.Table(ReadingTables.DeviceTable))}, N'last_seen') IS NULL\n" +
        $"    ALTER TABLE {SqlServerSql.Table(ReadingTables.DeviceTable)} ADD [last_seen] datetime2(6) NULL;\n" +
        $"IF COL_LENGTH({SqlServerSql.Literal(SqlServerSql.Table(ReadingTables.DeviceTable))}, N'retired_at') IS NULL\n" +
        $"    ALTER TABLE {SqlServerSql.Table(ReadingTables.DeviceTable)} ADD [retired_at] datetime2(6) NULL;";

    /// <summary>The columns Saito bulk-copies into dead_letter, in the order of its row source.</summary>
    public static IReadOnlyList<string> DeadLetterColumns { get; } = ["received_at", "topic", "client_id", "reason", "detail", "payload", "payload_bytes"];

    /// <summary>The session's staging table: a heap, gone with the session or the transaction that made it.</summary>
    public const string StageTable = "#saito_stage";

    /// <summary>
    /// An empty heap with the reading table's columns and types (<c>SELECT TOP (0) ... INTO</c>), for the counting
    /// path of <see cref="SqlServerReadingStore.WriteAsync"/>. A stage left by an earlier failure is dropped first.
    /// </summary>
    public static string CreateStage(string table, IReadOnlyList<string> columns) =>
        $"DROP TABLE IF EXISTS {StageTable};\nSELECT TOP (0) {ColumnList(columns)} INTO {StageTable} FROM {SqlServerSql.Table(table)};";

    /// <summary>
    /// Moves the stage into the reading table and answers how many rows it stored: the rows whose key is already
    /// there, or twice in the stage, are dropped by IGNORE_DUP_KEY and not counted in @@ROWCOUNT. The stage stays for
    /// <see cref="StoredRowsOfStage"/> (the next <see cref="CreateStage"/> drops it, and it ends with the session).
    /// </summary>
    public static string InsertFromStage(string table, IReadOnlyList<string> columns) =>
        $"""
        DECLARE @inserted int;
        INSERT INTO {SqlServerSql.Table(table)} ({ColumnList(columns)})
            SELECT {ColumnList(columns)} FROM {StageTable};
        SET @inserted = @@ROWCOUNT;
        SELECT @inserted;
        """;

    /// <summary>The stored rows (device_id, channel, ts, the values) of the reading table whose natural key is in the stage.</summary>
    public static string StoredRowsOfStage(string table, IReadOnlyList<string> valueColumns) =>
        $"""
        SELECT t.[device_id], t.[channel], t.[ts], {string.Join(", ", valueColumns.Select(c => "t." + SqlServerSql.Quote(c)))}
        FROM {SqlServerSql.Table(table)} AS t
        WHERE EXISTS (SELECT 1 FROM {StageTable} AS s WHERE s.[device_id] = t.[device_id] AND s.[channel] = t.[channel] AND s.[ts] = t.[ts]);
        """;

    /// <summary>The value columns (<c>@v0</c>, <c>@v1</c>, ...) of the row with natural key <c>@d</c>, <c>@c</c>, <c>@ts</c>.</summary>
    public static string UpdateValues(string table, IReadOnlyList<string> valueColumns) =>
        $"UPDATE {SqlServerSql.Table(table)} SET {string.Join(", ", valueColumns.Select((c, i) => $"{SqlServerSql.Quote(c)} = @v{i}"))} " +
        "WHERE [device_id] = @d AND [channel] = @c AND [ts] = @ts;";

    private static string ColumnList(IReadOnlyList<string> columns) => string.Join(", ", columns.Select(SqlServerSql.Quote));

    /// <summary>
    /// The index on the natural key (device_id, channel, ts) of a GUID-keyed reading table, on the tier's filegroup, for
    /// the readings queries; created when missing, so a table made by an older Saito gets it on start too.
    /// </summary>
    public string NaturalKeyIndex(string table, StorageTier tier)
    {
        string index = Schema.SchemaScript.NaturalKeyIndexName(table);
        return
            $"IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID({SqlServerSql.Literal(SqlServerSql.Table(table))}) AND [name] = {SqlServerSql.Literal(index)})\n" +
            $"    CREATE NONCLUSTERED INDEX {SqlServerSql.Quote(index)} ON {SqlServerSql.Table(table)} ([device_id], [channel], [ts]) ON {SqlServerSql.Quote(Filegroup(tier))};";
    }

    /// <summary><c>statement</c>, run only when the table does not exist yet.</summary>
    public static string Guarded(string table, string createStatement) =>
        $"IF OBJECT_ID({SqlServerSql.Literal(SqlServerSql.Table(table))}, N'U') IS NULL\nBEGIN\n{Indent(createStatement)}\nEND;";

    /// <summary><c>ALTER DATABASE CURRENT ADD FILEGROUP</c>, unless there is one of that name.</summary>
    public static string AddFilegroup(string filegroup) =>
        $"""
        IF NOT EXISTS (SELECT 1 FROM sys.filegroups WHERE [name] = {SqlServerSql.Literal(filegroup)})
            ALTER DATABASE CURRENT ADD FILEGROUP {SqlServerSql.Quote(filegroup)};
        """;

    /// <summary>
    /// <c>ALTER DATABASE CURRENT ADD FILE (NAME = '&lt;db&gt;_&lt;fg&gt;', FILENAME = '&lt;folder&gt;/&lt;db&gt;_&lt;fg&gt;.ndf') TO FILEGROUP</c>,
    /// unless the filegroup already has a file. FILENAME takes no parameter, so the path is a literal with its
    /// quotes doubled (<see cref="SqlServerSql.Literal"/>); the folder must exist on the database server.
    /// </summary>
    public static string AddFile(string filegroup, string folder, string fileName) =>
        $"""
        IF NOT EXISTS (SELECT 1 FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id WHERE g.[name] = {SqlServerSql.Literal(filegroup)})
            ALTER DATABASE CURRENT ADD FILE (NAME = {SqlServerSql.Literal(fileName)}, FILENAME = {SqlServerSql.Literal(SqlServerSql.JoinPath(folder, fileName + ".ndf"))}) TO FILEGROUP {SqlServerSql.Quote(filegroup)};
        """;

    /// <summary>The logical (and physical, before <c>.ndf</c>) name of a filegroup's file: <c>&lt;db&gt;_&lt;filegroup&gt;</c>.</summary>
    public static string FileName(string databaseName, string filegroup) => databaseName + "_" + filegroup;

    /// <summary>
    /// <c>sql/sqlserver/001_schema.sql</c>: every table, each statement exactly as <see cref="SqlServerReadingStore.EnsureSchemaAsync"/>
    /// runs it with no filegroup configured (ON [PRIMARY]); and, commented out, the filegroup statements Saito runs
    /// when <c>Storage:SqlServer:*FilePath</c> is set.
    /// </summary>
    public static string Script()
    {
        var plain = new SqlServerSchema(new SqlServerStorageOptions());
        var example = new SqlServerSchema(new SqlServerStorageOptions
        {
            HotFilegroup = "saito_hot",
            HotFilePath = "/var/opt/mssql/data/fast",
            ArchiveFilegroup = "saito_archive",
            ArchiveFilePath = "/var/opt/mssql/data/slow",
        });

        var sql = new StringBuilder();
        sql.Append("""
            -- Saito: SQL Server schema (SQL Server 2016 SP1 or later, Azure SQL Database, Azure SQL Managed Instance).
            --
            -- GENERATED from src/Saito.Storage/SqlServer/SqlServerSchema.cs: do not edit by hand. Saito runs these
            -- same statements on start (Storage:Provider=sqlserver) and creates only what is missing, so applying
            -- this script first is optional: it is for DBAs who create schemas themselves. Every statement is
            -- guarded (the views are CREATE OR ALTER) and can be run again:
            --   sqlcmd -b -d saito -i sql/sqlserver/001_schema.sql
            -- Regenerate after changing the C#:
            --   SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
            --
            -- Tables (names: src/Saito.Storage/ReadingTables.cs): device and dead_letter, then one reading table
            -- per kind, key strategy and tier, then the views v_biosensor, v_location and v_pressure:
            --   reading_<kind>[_guid|_seqguid]  hot tier, written by Saito
            --   archive_<kind>[_guid|_seqguid]  archive tier, written by the archiver
            -- Every key strategy's tables exist, so switching Storage:KeyStrategy (natural, guid, sequential-guid)
            -- needs no migration; Saito writes the ones it is configured for. Times are UTC in datetime2(6)
            -- (microseconds, as Saito holds them), values float, GUID keys uniqueidentifier.
            --
            -- Duplicates: every reading table's clustered primary key is WITH (IGNORE_DUP_KEY = ON). Saito
            -- bulk-copies batches straight into the hot tables, and a reading that is already stored (an MQTT
            -- redelivery) is dropped by the engine with the warning "Duplicate key was ignored." (3604) instead of
            -- failing the batch. Keep the option if you create these tables another way: Saito checks for it on
            -- start and refuses to run without it.
            --
            -- Filegroups: device, dead_letter and the reading_* tables are created ON Storage:SqlServer:HotFilegroup,
            -- the archive_* tables ON Storage:SqlServer:ArchiveFilegroup (PRIMARY when unset, as below). When
            -- *FilePath is set too, Saito adds a missing filegroup and its data file <folder>/<database>_<filegroup>.ndf
            -- (the folder must exist on the database server) with the statements of the commented example that
            -- follows, then creates the tables ON that filegroup. The example is for a database named saito with
            -- HotFilegroup=saito_hot, HotFilePath=/var/opt/mssql/data/fast, ArchiveFilegroup=saito_archive and
            -- ArchiveFilePath=/var/opt/mssql/data/slow. To place the tables yourself, run such statements and replace
            -- ON [PRIMARY] below with your hot filegroup (device, dead_letter, reading_*) and archive filegroup (archive_*).

            """);
        foreach (var step in example.FilegroupSteps("saito"))
        {
            sql.Append('\n').Append("-- ").Append(step.Name).Append('\n');
            foreach (string line in step.Sql.Split('\n'))
            {
                sql.Append("-- ").Append(line).Append('\n');
            }

            sql.Append("-- GO\n");
        }

        foreach (var step in plain.TableSteps().Concat(ViewSteps()))
        {
            sql.Append('\n').Append("-- ").Append(Describe(step.Target)).Append('\n').Append(step.Sql).Append("\nGO\n");
        }

        // LF whatever the checkout did to this file's line endings, so the committed script compares equal everywhere.
        return sql.ToString().ReplaceLineEndings("\n");
    }

    /// <summary>The comment above a table in the script.</summary>
    private static string Describe(string table)
    {
        if (table == ReadingTables.DeviceTable)
        {
            return "device: registered devices (the readings' device_id); a hello message updates kind, channels, firmware, hub, last_hello; ingestion sets last_seen; staff set retired_at.";
        }

        if (table == ReadingTables.DeadLetterTable)
        {
            return "dead_letter: messages (or single readings) Saito could not store as readings, with the reason; newest: ORDER BY id DESC.";
        }

        var view = ReadingKinds.All.Where(kind => ViewName(kind) == table).Select(kind => (ReadingKind?)kind).FirstOrDefault();
        if (view is { } viewKind)
        {
            return $"{table}: the hot {ReadingKinds.Name(viewKind)} readings of every key strategy's table, with the device's serial, for a person:\n" +
                   $"--   SELECT TOP (5) * FROM dbo.{table} ORDER BY ts DESC;";
        }

        var (kind, keys, tier) = Parse(table);
        string values = kind switch
        {
            ReadingKind.Biosensor => "heart rate, systolic, diastolic, skin temperature; any may be NULL",
            ReadingKind.Location => "x, y, z in metres",
            _ => "kPa",
        };
        return $"{table}: {ReadingKinds.Name(kind)} readings ({values}), {(tier == StorageTier.Hot ? "hot" : "archive")} tier, {StrategyName(keys)}.";
    }

    private static string StrategyName(KeyStrategy keys) => keys switch
    {
        KeyStrategy.Natural => "natural key: clustered primary key (device_id, channel, ts)",
        KeyStrategy.Guid => "guid key: a name-based GUID of the reading (scattered) as clustered primary key",
        KeyStrategy.SequentialGuid => "sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key",
        _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
    };

    private static string ColumnType(ReadingKind kind, string column) => column switch
    {
        "id" => "uniqueidentifier NOT NULL",
        "device_id" or "channel" => "int NOT NULL",
        "ts" or "received_at" => "datetime2(6) NOT NULL",
        _ => ValuesNullable(kind) ? "float NULL" : "float NOT NULL",
    };

    /// <summary>Whether a kind's values may be missing: a biosensor sends any subset; location and pressure send all.</summary>
    public static bool ValuesNullable(ReadingKind kind) => kind == ReadingKind.Biosensor;

    private static string Indent(string text) =>
        string.Join('\n', text.Split('\n').Select(line => line.Length == 0 ? line : "    " + line));
}

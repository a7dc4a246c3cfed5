using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Sqlite;

/// <summary>
/// SQLite's schema, in two files: <c>saito-hot.db</c> in <see cref="StorageOptions.HotPath"/> (device, dead_letter,
/// the hot reading tables and readable views) and <c>saito-archive.db</c> in <see cref="StorageOptions.ArchivePath"/>
/// (the archive tables). Every key strategy's tables are created, so switching <c>Storage:KeyStrategy</c> needs no
/// migration. The scripts <c>sql/sqlite/*.sql</c> are <see cref="Script"/> written out (a test keeps them equal).
/// </summary>
public static class SqliteSchema
{
    public const string HotFileName = "saito-hot.db";
    public const string ArchiveFileName = "saito-archive.db";

    /// <summary>The files in <c>sql/sqlite/</c>, relative to the repository root, and the tier each creates.</summary>
    public static IReadOnlyList<(string Path, StorageTier Tier)> ScriptFiles { get; } =
    [
        ("sql/sqlite/001_hot.sql", StorageTier.Hot),
        ("sql/sqlite/002_archive.sql", StorageTier.Archive),
    ];

    /// <summary>The file name of a tier's database.</summary>
    public static string FileName(StorageTier tier) => tier == StorageTier.Hot ? HotFileName : ArchiveFileName;

    /// <summary>The objects of one tier's file, in creation order.</summary>
    public static IReadOnlyList<SchemaObject> Objects(StorageTier tier)
    {
        var objects = new List<SchemaObject>();
        if (tier == StorageTier.Hot)
        {
            objects.Add(DeviceTable());
            objects.Add(DeadLetterTable());
        }

        foreach (var keys in SchemaScript.KeyStrategies)
        {
            foreach (var kind in ReadingKinds.All)
            {
                objects.Add(ReadingTable(kind, keys, tier));
                if (keys != KeyStrategy.Natural)
                {
                    objects.Add(NaturalKeyIndex(ReadingTables.TableName(kind, keys, tier), tier));
                }
            }
        }

        if (tier == StorageTier.Hot)
        {
            foreach (var kind in ReadingKinds.All)
            {
                objects.Add(ReadingView(kind));
            }

            objects.Add(DeviceView());
            objects.Add(DeadLetterView());
        }

        return objects;
    }

    /// <summary>The script a DBA applies with <c>sqlite3 saito-hot.db &lt; 001_hot.sql</c> (or the archive one).</summary>
    public static string Script(StorageTier tier)
    {
        string file = FileName(tier);
        string header = tier == StorageTier.Hot
            ? $"""
              Saito: SQLite schema of the hot tier, the file {file} in Storage:HotPath (fast storage).
              GENERATED from src/Saito.Storage/Sqlite/SqliteSchema.cs: do not edit by hand. To regenerate:
                SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
              Saito runs the same statements on start for whatever is missing; this script is for a DBA who
              creates the files beforehand:  sqlite3 data/hot/{file} < sql/sqlite/001_hot.sql
              Times are INTEGER microseconds since 1970-01-01 UTC; the v_* views show them as ISO-8601 text.
              Every key strategy's tables exist; Storage:KeyStrategy chooses the ones Saito writes.
              Saito sets per connection: PRAGMA synchronous = FULL (or NORMAL, Storage:Sqlite:Synchronous), busy_timeout,
              cache_size, wal_autocheckpoint = {SqliteStorageOptions.DefaultWalAutoCheckpointPages} (Storage:Sqlite:WalAutoCheckpointPages).
              """
            : $"""
              Saito: SQLite schema of the archive tier, the file {file} in Storage:ArchivePath (slow storage).
              GENERATED from src/Saito.Storage/Sqlite/SqliteSchema.cs: do not edit by hand. To regenerate:
                SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
              Saito runs the same statements on start for whatever is missing; this script is for a DBA who
              creates the files beforehand:  sqlite3 data/archive/{file} < sql/sqlite/002_archive.sql
              The archive tables have the shapes of the hot tables in {HotFileName}; the archiver moves old readings here.
              """;
        return SchemaScript.Render(header, ["PRAGMA journal_mode = WAL"], Objects(tier));
    }

    private static SchemaObject DeviceTable() => SchemaScript.DeviceTable(
        $"""
         CREATE TABLE IF NOT EXISTS {ReadingTables.DeviceTable} (
         {SchemaScript.DeviceColumns("PRIMARY KEY AUTOINCREMENT", "NOT NULL UNIQUE", "NOT NULL", integer: "INTEGER", text: "TEXT", timestamp: "INTEGER")}
         ) STRICT
         """);

    private static SchemaObject DeadLetterTable() => SchemaScript.DeadLetterTable(
        "ALTER TABLE dead_letter ADD COLUMN payload_bytes BLOB",
        $"""
         CREATE TABLE IF NOT EXISTS {ReadingTables.DeadLetterTable} (
         {SchemaScript.DeadLetterColumns(id: "INTEGER", idConstraints: "PRIMARY KEY", timestamp: "INTEGER", text: "TEXT", bytes: "BLOB")}
         ) STRICT
         """);

    /// <summary>Columns added after a table was first created (<see cref="AddedColumn"/>), added on start when missing.</summary>
    public static IReadOnlyList<AddedColumn> AddedColumns { get; } =
        [
            new(ReadingTables.DeadLetterTable, "payload_bytes", $"ALTER TABLE {ReadingTables.DeadLetterTable} ADD COLUMN payload_bytes BLOB"),
            new(ReadingTables.DeviceTable, "last_seen", $"ALTER TABLE {ReadingTables.DeviceTable} ADD COLUMN last_seen INTEGER"),
            new(ReadingTables.DeviceTable, "retired_at", $"ALTER TABLE {ReadingTables.DeviceTable} ADD COLUMN retired_at INTEGER"),
        ];

    private static readonly ReadingColumnTypes Types = new("BLOB", "NOT NULL PRIMARY KEY CHECK (length(id) = 16)", "INTEGER", "INTEGER", "REAL");

    private static SchemaObject ReadingTable(ReadingKind kind, KeyStrategy keys, StorageTier tier)
    {
        string table = ReadingTables.TableName(kind, keys, tier);
        var columns = SchemaScript.ReadingColumns(kind, keys, Types);
        string body = SchemaScript.Columns(columns);
        if (keys == KeyStrategy.Natural)
        {
            body += ",\n    PRIMARY KEY (device_id, channel, ts)";
        }

        return new SchemaObject(
            table,
            SchemaObjectKind.Table,
            tier,
            $"{ReadingKinds.Description(kind)}, {(tier == StorageTier.Hot ? "hot" : "archive")} tier, {KeyDescription(keys)}.",
            $"CREATE TABLE IF NOT EXISTS {table} (\n{body}\n) WITHOUT ROWID, STRICT");
    }

    private static SchemaObject NaturalKeyIndex(string table, StorageTier tier) => new(
        SchemaScript.NaturalKeyIndexName(table),
        SchemaObjectKind.Index,
        tier,
        SchemaScript.NaturalKeyIndexComment(table),
        $"CREATE INDEX IF NOT EXISTS {SchemaScript.NaturalKeyIndexName(table)} ON {table} (device_id, channel, ts)");

    private static string KeyDescription(KeyStrategy keys) => keys switch
    {
        KeyStrategy.Natural => "natural key: the clustered primary key (device_id, channel, ts)",
        KeyStrategy.Guid => "key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered",
        KeyStrategy.SequentialGuid => "key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order",
        _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
    };

    private static string IsoTime(string column) => $"strftime('%Y-%m-%dT%H:%M:%fZ', ({column} / 1000) / 1000.0, 'unixepoch')";

    private static SchemaObject ReadingView(ReadingKind kind)
    {
        string view = "v_" + ReadingKinds.Name(kind);
        var selects = new List<string>();
        foreach (var keys in SchemaScript.KeyStrategies)
        {
            string values = string.Concat(ReadingTables.ValueColumns(kind).Select(column => $"r.{column}, "));
            selects.Add(
                $"SELECT d.serial, r.device_id, r.channel, {IsoTime("r.ts")} AS ts, {values}" +
                $"{IsoTime("r.received_at")} AS received_at, '{SchemaScript.KeyStrategyName(keys)}' AS key_strategy\n" +
                $"  FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} AS r LEFT JOIN {ReadingTables.DeviceTable} AS d ON d.id = r.device_id");
        }

        return new SchemaObject(
            view,
            SchemaObjectKind.View,
            StorageTier.Hot,
            $"The hot {ReadingKinds.Name(kind)} readings for a person: device serial, times as ISO-8601 UTC text (milliseconds), every key strategy's table.\n" +
            $"  sqlite3 data/hot/{HotFileName} \"SELECT * FROM {view} ORDER BY ts DESC LIMIT 5\"",
            $"CREATE VIEW IF NOT EXISTS {view} AS\n{string.Join("\nUNION ALL\n", selects)}");
    }

    private static SchemaObject DeviceView() => new(
        "v_device",
        SchemaObjectKind.View,
        StorageTier.Hot,
        "The device registry with its times as ISO-8601 UTC text.",
        $"""
         CREATE VIEW IF NOT EXISTS v_device AS
         SELECT id, serial, kind, channels, firmware, hub, {IsoTime("first_seen")} AS first_seen, {IsoTime("last_hello")} AS last_hello
           FROM {ReadingTables.DeviceTable}
         """);

    private static SchemaObject DeadLetterView() => new(
        "v_dead_letter",
        SchemaObjectKind.View,
        StorageTier.Hot,
        "Dead letters with received_at as ISO-8601 UTC text.",
        $"""
         CREATE VIEW IF NOT EXISTS v_dead_letter AS
         SELECT id, {IsoTime("received_at")} AS received_at, topic, client_id, reason, detail, payload
           FROM {ReadingTables.DeadLetterTable}
         """);
}

using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Postgres;

/// <summary>
/// PostgreSQL's schema: device, dead_letter and the hot reading tables on the hot tablespace, the archive tables
/// on the archive tablespace (<see cref="PostgresStorageOptions"/>; unset means the database's default), each
/// table's primary-key index beside it (<c>USING INDEX TABLESPACE</c>). Every key strategy's tables are created,
/// so switching <c>Storage:KeyStrategy</c> needs no migration. <c>sql/postgres/001_schema.sql</c> is
/// <see cref="Script"/> written out (a test keeps them equal).
/// </summary>
public static class PostgresSchema
{
    public const string ScriptFile = "sql/postgres/001_schema.sql";

    /// <summary>The objects, in creation order, placed on the tablespaces <paramref name="options"/> names.</summary>
    public static IReadOnlyList<SchemaObject> Objects(PostgresStorageOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var objects = new List<SchemaObject> { DeviceTable(options.HotTablespace), DeadLetterTable(options.HotTablespace) };
        AddReadingTables(objects, StorageTier.Hot, options.HotTablespace);
        foreach (var kind in ReadingKinds.All)
        {
            objects.Add(ReadingView(kind));
        }

        AddReadingTables(objects, StorageTier.Archive, options.ArchiveTablespace);
        return objects;
    }

    /// <summary>The script for a DBA: the objects on the database's default tablespace (see its header for tablespaces).</summary>
    public static string Script()
    {
        const string header =
            """
            Saito: PostgreSQL schema (PostgreSQL 13 or later).
            GENERATED from src/Saito.Storage/Postgres/PostgresSchema.cs: do not edit by hand. To regenerate:
              SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
            Saito runs the same statements on start for whatever is missing; this script is for a DBA who creates
            the schema beforehand:  psql -v ON_ERROR_STOP=1 -d saito -f sql/postgres/001_schema.sql

            Tiers. Written out here without tablespaces. With Storage:Postgres:HotTablespace / ArchiveTablespace set,
            Saito adds "TABLESPACE <name>" to each table and "USING INDEX TABLESPACE <name>" to its primary key:
            device, dead_letter and reading_* on the hot tablespace, archive_* on the archive one. To do the same by
            hand, create the tablespaces first (as a superuser, outside a transaction), e.g.
              CREATE TABLESPACE saito_fast LOCATION '/mnt/nvme/saito';
              CREATE TABLESPACE saito_slow LOCATION '/mnt/hdd/saito';
            and run "SET default_tablespace = saito_fast;" at the start of the hot tier section below and
            "SET default_tablespace = saito_slow;" at the start of the archive tier section: a table and its
            primary-key index then go to that tablespace.

            Times are timestamptz (microseconds), values double precision; GUID keys are uuid.
            Every key strategy's tables exist; Storage:KeyStrategy chooses the ones Saito writes.
            """;
        return SchemaScript.Render(header, [], Objects(new PostgresStorageOptions()));
    }

    private static void AddReadingTables(List<SchemaObject> objects, StorageTier tier, string? tablespace)
    {
        foreach (var keys in SchemaScript.KeyStrategies)
        {
            foreach (var kind in ReadingKinds.All)
            {
                objects.Add(ReadingTable(kind, keys, tier, tablespace));
                if (keys != KeyStrategy.Natural)
                {
                    string table = ReadingTables.TableName(kind, keys, tier);
                    objects.Add(new SchemaObject(
                        SchemaScript.NaturalKeyIndexName(table),
                        SchemaObjectKind.Index,
                        tier,
                        SchemaScript.NaturalKeyIndexComment(table),
                        $"CREATE INDEX IF NOT EXISTS {SchemaScript.NaturalKeyIndexName(table)} ON {table} (device_id, channel, ts){TablespaceClause(tablespace)}"));
                }
            }
        }
    }

    private static string TablespaceClause(string? tablespace) => string.IsNullOrEmpty(tablespace) ? string.Empty : " TABLESPACE " + tablespace;

    private static string IndexTablespaceClause(string? tablespace) =>
        string.IsNullOrEmpty(tablespace) ? string.Empty : " USING INDEX TABLESPACE " + tablespace;

    private static SchemaObject DeviceTable(string? tablespace) => new(
        ReadingTables.DeviceTable,
        SchemaObjectKind.Table,
        StorageTier.Hot,
        "Registered devices: the readings' device_id. A hello message updates kind, channels, firmware, hub and last_hello; ingestion sets last_seen every few seconds; staff set retired_at through the registry.",
        $"""
         CREATE TABLE IF NOT EXISTS {ReadingTables.DeviceTable} (
         {SchemaScript.Columns([
             ("id", "integer", "GENERATED BY DEFAULT AS IDENTITY"),
             ("serial", "text", "NOT NULL"),
             ("kind", "text", ""),
             ("channels", "integer", ""),
             ("firmware", "text", ""),
             ("hub", "text", ""),
             ("first_seen", "timestamptz", "NOT NULL DEFAULT now()"),
             ("last_hello", "timestamptz", ""),
             ("last_seen", "timestamptz", ""),
             ("retired_at", "timestamptz", ""),
         ])},
             CONSTRAINT {ReadingTables.DeviceTable}_pkey PRIMARY KEY (id){IndexTablespaceClause(tablespace)},
             CONSTRAINT {ReadingTables.DeviceTable}_serial_key UNIQUE (serial){IndexTablespaceClause(tablespace)}
         ){TablespaceClause(tablespace)}
         """);

    private static SchemaObject DeadLetterTable(string? tablespace) => new(
        ReadingTables.DeadLetterTable,
        SchemaObjectKind.Table,
        StorageTier.Hot,
        SchemaScript.DeadLetterComment(AddPayloadBytes),
        $"""
         CREATE TABLE IF NOT EXISTS {ReadingTables.DeadLetterTable} (
         {SchemaScript.Columns([
             ("id", "bigint", "GENERATED ALWAYS AS IDENTITY"),
             ("received_at", "timestamptz", "NOT NULL"),
             ("topic", "text", "NOT NULL"),
             ("client_id", "text", ""),
             ("reason", "text", "NOT NULL"),
             ("detail", "text", "NOT NULL"),
             ("payload", "text", "NOT NULL"),
             ("payload_bytes", "bytea", ""),
         ])},
             CONSTRAINT {ReadingTables.DeadLetterTable}_pkey PRIMARY KEY (id){IndexTablespaceClause(tablespace)}
         ){TablespaceClause(tablespace)}
         """);

    private const string AddPayloadBytes = $"ALTER TABLE {ReadingTables.DeadLetterTable} ADD COLUMN IF NOT EXISTS payload_bytes bytea";

    /// <summary>Columns added after a table was first created (<see cref="AddedColumn"/>), added on start when missing.</summary>
    public static IReadOnlyList<AddedColumn> AddedColumns { get; } =
    [
        new(ReadingTables.DeadLetterTable, "payload_bytes", AddPayloadBytes),
        new(ReadingTables.DeviceTable, "last_seen", $"ALTER TABLE {ReadingTables.DeviceTable} ADD COLUMN IF NOT EXISTS last_seen timestamptz"),
        new(ReadingTables.DeviceTable, "retired_at", $"ALTER TABLE {ReadingTables.DeviceTable} ADD COLUMN IF NOT EXISTS retired_at timestamptz"),
    ];

    /// <summary>The name of a table's primary-key constraint (and index).</summary>
    public static string PrimaryKeyName(string table) => table + "_pkey";

    private static readonly ReadingColumnTypes Types = new("uuid", "NOT NULL", "integer", "timestamptz", "double precision");

    private static SchemaObject ReadingTable(ReadingKind kind, KeyStrategy keys, StorageTier tier, string? tablespace)
    {
        string table = ReadingTables.TableName(kind, keys, tier);
        var columns = SchemaScript.ReadingColumns(kind, keys, Types);
        string key = keys == KeyStrategy.Natural ? "device_id, channel, ts" : "id";
        return new SchemaObject(
            table,
            SchemaObjectKind.Table,
            tier,
            $"{ReadingKinds.Description(kind)}, {(tier == StorageTier.Hot ? "hot" : "archive")} tier, {KeyDescription(keys)}.",
            $"CREATE TABLE IF NOT EXISTS {table} (\n{SchemaScript.Columns(columns)},\n" +
            $"    CONSTRAINT {PrimaryKeyName(table)} PRIMARY KEY ({key}){IndexTablespaceClause(tablespace)}\n" +
            $"){TablespaceClause(tablespace)}");
    }

    private static string KeyDescription(KeyStrategy keys) => keys switch
    {
        KeyStrategy.Natural => "natural key: primary key (device_id, channel, ts)",
        KeyStrategy.Guid => "key: a uuid derived from the reading (version 5), scattered",
        KeyStrategy.SequentialGuid => "key: a uuid derived from the reading with the time in its first bytes, so uuid order is time order",
        _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
    };

    private static SchemaObject ReadingView(ReadingKind kind)
    {
        string view = "v_" + ReadingKinds.Name(kind);
        string values = string.Concat(ReadingTables.ValueColumns(kind).Select(column => $"r.{column}, "));
        var selects = new List<string>();
        foreach (var keys in SchemaScript.KeyStrategies)
        {
            selects.Add(
                $"SELECT d.serial, r.device_id, r.channel, r.ts, {values}r.received_at, '{SchemaScript.KeyStrategyName(keys)}'::text AS key_strategy\n" +
                $"  FROM {ReadingTables.TableName(kind, keys, StorageTier.Hot)} AS r LEFT JOIN {ReadingTables.DeviceTable} AS d ON d.id = r.device_id");
        }

        return new SchemaObject(
            view,
            SchemaObjectKind.View,
            StorageTier.Hot,
            $"The hot {ReadingKinds.Name(kind)} readings for a person: device serial beside device_id, every key strategy's table.\n" +
            $"  psql -d saito -c \"SELECT * FROM {view} ORDER BY ts DESC LIMIT 5\"",
            $"CREATE OR REPLACE VIEW {view} AS\n{string.Join("\nUNION ALL\n", selects)}");
    }
}

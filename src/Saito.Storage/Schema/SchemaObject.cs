using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Schema;

/// <summary>How one database spells the types of a reading table's columns.</summary>
/// <param name="Id">the GUID key column's type</param>
/// <param name="IdConstraints">its constraints</param>
/// <param name="Integer">device_id and channel</param>
/// <param name="Timestamp">ts and received_at</param>
/// <param name="Real">the values</param>
public sealed record ReadingColumnTypes(string Id, string IdConstraints, string Integer, string Timestamp, string Real);

public enum SchemaObjectKind
{
    Table,
    View,
    Index,
}

/// <summary>
/// One object of a database's schema: its name, the tier that holds it, a comment for the person who reads the
/// script, and the statement that creates it when missing (idempotent: <c>IF NOT EXISTS</c> or <c>OR REPLACE</c>).
/// A store's <see cref="IStorageSchema.EnsureSchemaAsync"/> runs <see cref="CreateSql"/> for the objects it does not
/// find; the scripts in <c>sql/</c> are the same objects written out by <see cref="SchemaScript"/>.
/// </summary>
public sealed record SchemaObject(string Name, SchemaObjectKind Kind, StorageTier Tier, string Comment, string CreateSql);

/// <summary>
/// A column added to a table after Saito first created it. A database made by an older Saito lacks it; the store
/// adds it on start when <see cref="Table"/> exists without <see cref="Column"/>. Added columns are nullable, so the
/// rows already there keep NULL and nothing is rewritten (a metadata change on SQLite, PostgreSQL and SQL Server).
/// </summary>
public sealed record AddedColumn(string Table, string Column, string AddSql);

/// <summary>Writes schema objects out as a commented SQL script (the files in <c>sql/</c>).</summary>
public static class SchemaScript
{
    /// <summary>
    /// The name of the index on the natural key (device_id, channel, ts) that a GUID-keyed reading table has beside its
    /// primary key, so that a device's time range, its newest reading per channel and the readings queries' cross-tier
    /// de-duplication seek instead of scanning (under the natural key the primary key is that index).
    /// </summary>
    public static string NaturalKeyIndexName(string table) => "ix_" + table + "_natural";

    /// <summary>The comment above a natural-key index in the scripts.</summary>
    public static string NaturalKeyIndexComment(string table) =>
        $"The natural key (device_id, channel, ts) of {table}, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);\n" +
        "created on start when missing, so databases made by an older Saito get it too.";

    /// <summary>
    /// The script: <paramref name="header"/> as comment lines, the <paramref name="preamble"/> statements, then
    /// every object under its comment, each statement ended with a semicolon. Line ends are <c>\n</c>. When the
    /// objects are of both tiers, each run of one tier starts with a section comment naming it.
    /// </summary>
    public static string Render(string header, IEnumerable<string> preamble, IEnumerable<SchemaObject> objects)
    {
        ArgumentNullException.ThrowIfNull(header);
        ArgumentNullException.ThrowIfNull(preamble);
        ArgumentNullException.ThrowIfNull(objects);
        var script = new System.Text.StringBuilder();
        AppendComment(script, header);
        foreach (string statement in preamble)
        {
            script.Append('\n').Append(statement).Append(";\n");
        }

        var list = objects.ToList();
        bool sections = list.Select(o => o.Tier).Distinct().Count() > 1;
        StorageTier? tier = null;
        foreach (var schemaObject in list)
        {
            if (sections && schemaObject.Tier != tier)
            {
                tier = schemaObject.Tier;
                string title = tier == StorageTier.Hot ? "Hot tier (fast storage)" : "Archive tier (slow storage)";
                script.Append('\n').Append("-- ").Append(new string('=', 20)).Append(' ').Append(title).Append(' ').Append(new string('=', 20)).Append('\n');
            }

            script.Append('\n');
            AppendComment(script, schemaObject.Comment);
            script.Append(schemaObject.CreateSql).Append(";\n");
        }

        return script.ToString();
    }

    private static void AppendComment(System.Text.StringBuilder script, string comment)
    {
        foreach (string line in comment.Split('\n'))
        {
            script.Append(line.Length == 0 ? "--" : "-- ").Append(line).Append('\n');
        }
    }

    /// <summary>Column definitions aligned in columns: name, type, then the rest, joined with ",\n" and indented.</summary>
    /// <summary>
    /// A reading table's columns in <see cref="ReadingTables.Columns"/> order, typed for one database: every column
    /// NOT NULL except biosensor values (any subset may be missing).
    /// </summary>
    public static IReadOnlyList<(string Name, string Type, string Constraints)> ReadingColumns(ReadingKind kind, KeyStrategy keys, ReadingColumnTypes types)
    {
        ArgumentNullException.ThrowIfNull(types);
        var values = ReadingTables.ValueColumns(kind);
        return ReadingTables.Columns(kind, keys).Select(column => column switch
        {
            "id" => (column, types.Id, types.IdConstraints),
            "device_id" or "channel" => (column, types.Integer, "NOT NULL"),
            "ts" or "received_at" => (column, types.Timestamp, "NOT NULL"),
            _ when values.Contains(column) => (column, types.Real, kind == ReadingKind.Biosensor ? string.Empty : "NOT NULL"),
            _ => throw new InvalidOperationException($"No type for reading column {column}."),
        }).ToList();
    }

    public static string Columns(IReadOnlyList<(string Name, string Type, string Constraints)> columns)
    {
        ArgumentNullException.ThrowIfNull(columns);
        int nameWidth = 0;
        int typeWidth = 0;
        foreach (var (name, type, _) in columns)
        {
            nameWidth = Math.Max(nameWidth, name.Length);
            typeWidth = Math.Max(typeWidth, type.Length);
        }

        var lines = new List<string>(columns.Count);
        foreach (var (name, type, constraints) in columns)
        {
            string line = "    " + name.PadRight(nameWidth) + " " + (constraints.Length == 0 ? type : type.PadRight(typeWidth) + " " + constraints);
            lines.Add(line);
        }

        return string.Join(",\n", lines);
    }

    /// <summary>
    /// The devices table, created by <paramref name="createSql"/> in one database's dialect; its comment and its
    /// columns (<see cref="DeviceColumns"/>) are the same on every database.
    /// </summary>
    public static SchemaObject DeviceTable(string createSql) => new(ReadingTables.DeviceTable, SchemaObjectKind.Table, StorageTier.Hot,
        "Registered devices: the readings' device_id. A hello message updates kind, channels, firmware, hub and last_hello; ingestion sets last_seen every few seconds; staff set retired_at through the registry.",
        createSql);

    /// <summary>The devices table's columns in their order, typed for one database (<see cref="Columns"/>).</summary>
    public static string DeviceColumns(string idConstraints, string serialConstraints, string firstSeenConstraints, string integer, string text, string timestamp) =>
        Columns([
            ("id", integer, idConstraints),
            ("serial", text, serialConstraints),
            ("kind", text, ""),
            ("channels", integer, ""),
            ("firmware", text, ""),
            ("hub", text, ""),
            ("first_seen", timestamp, firstSeenConstraints),
            ("last_hello", timestamp, ""),
            ("last_seen", timestamp, ""),
            ("retired_at", timestamp, ""),
        ]);

    /// <summary>The dead-letter table, created by <paramref name="createSql"/>; its comment names <paramref name="addPayloadBytes"/>.</summary>
    public static SchemaObject DeadLetterTable(string addPayloadBytes, string createSql) =>
        new(ReadingTables.DeadLetterTable, SchemaObjectKind.Table, StorageTier.Hot, DeadLetterComment(addPayloadBytes), createSql);

    /// <summary>The dead-letter table's columns in their order, typed for one database (<see cref="Columns"/>).</summary>
    public static string DeadLetterColumns(string id, string idConstraints, string timestamp, string text, string bytes) =>
        Columns([
            ("id", id, idConstraints),
            ("received_at", timestamp, "NOT NULL"),
            ("topic", text, "NOT NULL"),
            ("client_id", text, ""),
            ("reason", text, "NOT NULL"),
            ("detail", text, "NOT NULL"),
            ("payload", text, "NOT NULL"),
            ("payload_bytes", bytes, ""),
        ]);

    /// <summary>
    /// The dead-letter table's comment, naming the statement that adds payload_bytes to a table made by an older
    /// Saito (which a store runs on start).
    /// </summary>
    private static string DeadLetterComment(string addPayloadBytes) =>
        "Messages (or single readings) Saito could not store as readings, with the reason. Newest: ORDER BY id DESC.\n" +
        "payload is the rejected bytes as text, exactly, when they are UTF-8 without NUL; otherwise a 4096-character preview,\n" +
        "and payload_bytes holds the exact bytes (NULL when payload is exact). A table made by an older Saito has no\n" +
        $"payload_bytes; Saito adds it on start: {addPayloadBytes}";

    /// <summary>Every key strategy, in the order the scripts list their tables.</summary>
    public static IReadOnlyList<Keys.KeyStrategy> KeyStrategies { get; } =
        [Keys.KeyStrategy.Natural, Keys.KeyStrategy.Guid, Keys.KeyStrategy.SequentialGuid];

    /// <summary>The configuration spelling of a key strategy: natural, guid, sequential-guid.</summary>
    public static string KeyStrategyName(Keys.KeyStrategy keys) => keys switch
    {
        Keys.KeyStrategy.Natural => "natural",
        Keys.KeyStrategy.Guid => "guid",
        Keys.KeyStrategy.SequentialGuid => "sequential-guid",
        _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
    };
}

using System.Data.Common;
using Microsoft.Extensions.Logging;
using Npgsql;
using NpgsqlTypes;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Postgres;

/// <summary>
/// Readings in PostgreSQL through binary COPY (<see cref="PostgresSchema"/> for the tables and tablespaces).
/// <para>
/// A batch is one transaction. Each kind's readings are copied straight into their table, in primary-key
/// order, behind a savepoint: the fast path, with nothing between the rows and the table. When the table already
/// holds one of them (unique_violation: a QoS 1 redelivery, or the same reading twice in the batch), the
/// transaction rolls back to the savepoint and that kind takes the staging path instead: COPY into a temporary
/// table, then <c>INSERT ... SELECT ... ON CONFLICT DO NOTHING</c>, which skips and counts the duplicates.
/// Dead letters go in the same transaction.
/// </para>
/// Each call takes its own pooled connection, so many writers can run at once: writes and registrations from one
/// <see cref="NpgsqlDataSource"/>, reads from another, each with its maximum (<see cref="ConnectionBudget"/>).
/// </summary>
public sealed class PostgresReadingStore : BulkCopyReadingDatabase
{
    // pg_advisory_xact_lock key that serialises EnsureSchemaAsync between Saito processes ("SAITO" in ASCII).
    private const long SchemaLockKey = 0x5341_4954_4F;

    private readonly ILogger<PostgresReadingStore> _logger;
    private readonly NpgsqlDataSource _dataSource;
    private readonly NpgsqlDataSource _queries;
    private readonly CopyTarget[] _targets;
    private readonly CopyTarget _deadLetters;
    private readonly TimeSpan _copyTimeout;
    private readonly string _description;

    public PostgresReadingStore(StorageOptions options, ILogger<PostgresReadingStore> logger)
        : base(options, "PostgreSQL")
    {
        ArgumentNullException.ThrowIfNull(logger);
        foreach (string? tablespace in new[] { options.Postgres.HotTablespace, options.Postgres.ArchiveTablespace })
        {
            if (!string.IsNullOrEmpty(tablespace) && !StorageOptionsValidator.IsPlainIdentifier(tablespace))
            {
                throw new ArgumentException($"Tablespace '{tablespace}' is not a plain identifier (letters, digits, underscore).", nameof(options));
            }
        }

        _logger = logger;
        // Two pools, each with its maximum (ConnectionBudget): the writers' (and registration's) and the queries', so
        // that a burst of dashboard queries never keeps a writer waiting for a connection, nor the reverse.
        var settings = ConnectionBudget.Postgres(options, ConnectionPool.Writes);
        _description =
            $"PostgreSQL {settings.Host}:{settings.Port}/{settings.Database ?? settings.Username} " +
            $"(keys {SchemaScript.KeyStrategyName(options.KeyStrategy)}, " +
            $"hot tablespace {options.Postgres.HotTablespace ?? "default"}, archive tablespace {options.Postgres.ArchiveTablespace ?? "default"}, " +
            $"at most {ConnectionBudget.PoolSize(options, ConnectionPool.Writes)} + {ConnectionBudget.PoolSize(options, ConnectionPool.Queries)} connections)";
        _dataSource = NpgsqlDataSource.Create(settings);
        _queries = NpgsqlDataSource.Create(ConnectionBudget.Postgres(options, ConnectionPool.Queries));
        _copyTimeout = TimeSpan.FromSeconds(options.CommandTimeoutSeconds);
        _targets = new CopyTarget[ReadingKinds.All.Count];
        foreach (var kind in ReadingKinds.All)
        {
            _targets[(int)kind] = CopyTarget.ForReadings(kind, options.KeyStrategy);
        }

        _deadLetters = CopyTarget.ForDeadLetters();
    }

    public override StorageProvider Provider => StorageProvider.Postgres;

    public override string Describe() => _description;

    private protected override DbDataSource Source(StorageTier tier) => _queries;

    /// <summary>Closes idle connections of the writes' and queries' pools, and of the registry's (Npgsql's connection-string pools).</summary>
    public override void ConnectionsLost()
    {
        _dataSource.Clear();
        _queries.Clear();
        NpgsqlConnection.ClearAllPools();
    }

    private protected override async ValueTask<DbConnection> OpenWriterAsync(CancellationToken cancellationToken) =>
        await _dataSource.OpenConnectionAsync(cancellationToken);

    /// <summary>extract(epoch) is numeric (exact) since PostgreSQL 14; in 13 a double, exact to the microsecond for centuries yet.</summary>
    private protected override string EpochMicroseconds(string column) => $"(extract(epoch from {column}) * 1000000)::bigint";

    private protected override string TimeBefore(string time, TimeSpan span) =>
        FormattableString.Invariant($"({time} - interval '{(long)span.TotalSeconds} seconds')");

    public override async Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken)
    {
        var created = new List<string>();
        var existing = new List<string>();
        await using var connection = await _dataSource.OpenConnectionAsync(cancellationToken);
        await EnsureTablespacesAsync(connection, created, existing, cancellationToken);

        var createdHere = new List<string>();
        await using (var transaction = await connection.BeginTransactionAsync(cancellationToken))
        {
            await ExecuteAsync(connection, $"SELECT pg_advisory_xact_lock({SchemaLockKey})", cancellationToken);
            var names = new HashSet<string>(StringComparer.Ordinal);
            await using (var command = new NpgsqlCommand(
                             "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p', 'v', 'i')",
                             connection))
            await using (var reader = await command.ExecuteReaderAsync(cancellationToken))
            {
                while (await reader.ReadAsync(cancellationToken))
                {
                    names.Add(reader.GetString(0));
                }
            }

            foreach (var schemaObject in PostgresSchema.Objects(Options.Postgres))
            {
                if (names.Contains(schemaObject.Name))
                {
                    existing.Add(schemaObject.Name);
                    continue;
                }

                await ExecuteAsync(connection, schemaObject.CreateSql, cancellationToken);
                createdHere.Add(schemaObject.Name);
            }

            foreach (var added in PostgresSchema.AddedColumns.Where(a => names.Contains(a.Table)))
            {
                await AddColumnIfMissingAsync(connection, added, cancellationToken);
            }

            await transaction.CommitAsync(cancellationToken);
        }

        if (createdHere.Count > 0)
        {
            string createdNames = string.Join(", ", createdHere);
            PostgresLog.SchemaCreated(_logger, createdNames);
        }

        created.AddRange(createdHere);
        await WarnAboutMisplacedTablesAsync(connection, cancellationToken);
        return new SchemaReport(created, existing);
    }

    /// <summary>
    /// Each configured tablespace must exist; one with a location is created when missing. CREATE TABLESPACE
    /// cannot run in a transaction, so this comes first, on its own.
    /// </summary>
    private async Task EnsureTablespacesAsync(NpgsqlConnection connection, List<string> created, List<string> existing, CancellationToken cancellationToken)
    {
        var postgres = Options.Postgres;
        var wanted = new List<(string Name, string? Location, string Setting)>();
        if (!string.IsNullOrEmpty(postgres.HotTablespace))
        {
            wanted.Add((postgres.HotTablespace, postgres.HotTablespaceLocation, "Storage:Postgres:HotTablespaceLocation"));
        }

        if (!string.IsNullOrEmpty(postgres.ArchiveTablespace))
        {
            if (string.Equals(postgres.ArchiveTablespace, postgres.HotTablespace, StringComparison.OrdinalIgnoreCase))
            {
                if (string.IsNullOrEmpty(wanted[0].Location))
                {
                    wanted[0] = (wanted[0].Name, postgres.ArchiveTablespaceLocation, "Storage:Postgres:ArchiveTablespaceLocation");
                }
            }
            else
            {
                wanted.Add((postgres.ArchiveTablespace, postgres.ArchiveTablespaceLocation, "Storage:Postgres:ArchiveTablespaceLocation"));
            }
        }

        foreach (var (name, location, setting) in wanted)
        {
            string entry = "tablespace " + name;
            if (await TablespaceExistsAsync(connection, name, cancellationToken))
            {
                existing.Add(entry);
                continue;
            }

            if (string.IsNullOrEmpty(location))
            {
                throw new InvalidOperationException(
                    $"PostgreSQL tablespace '{name}' does not exist. Create it (CREATE TABLESPACE {name} LOCATION '/path', as a superuser) " +
                    $"or set {setting} so that Saito creates it.");
            }

            try
            {
                // A utility statement takes no parameters: the location is a quoted literal.
                await ExecuteAsync(connection, $"CREATE TABLESPACE {name} LOCATION '{location.Replace("'", "''", StringComparison.Ordinal)}'", cancellationToken);
                created.Add(entry);
                PostgresLog.TablespaceCreated(_logger, name, location);
            }
            catch (PostgresException e) when (e.SqlState == PostgresErrorCodes.DuplicateObject)
            {
                existing.Add(entry); // another Saito created it a moment ago
            }
        }
    }

    private static async Task<bool> TablespaceExistsAsync(NpgsqlConnection connection, string name, CancellationToken cancellationToken)
    {
        await using var command = new NpgsqlCommand("SELECT EXISTS (SELECT 1 FROM pg_tablespace WHERE spcname = @name)", connection);
        command.Parameters.AddWithValue("name", name.ToLowerInvariant());
        return (bool)(await command.ExecuteScalarAsync(cancellationToken))!;
    }

    private async Task WarnAboutMisplacedTablesAsync(NpgsqlConnection connection, CancellationToken cancellationToken)
    {
        var configured = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var schemaObject in PostgresSchema.Objects(Options.Postgres))
        {
            string? tablespace = schemaObject.Tier == StorageTier.Hot ? Options.Postgres.HotTablespace : Options.Postgres.ArchiveTablespace;
            if (schemaObject.Kind == SchemaObjectKind.Table)
            {
                configured[schemaObject.Name] = string.IsNullOrEmpty(tablespace) ? string.Empty : tablespace.ToLowerInvariant();
            }
        }

        await using var command = new NpgsqlCommand("SELECT tablename, coalesce(tablespace, '') FROM pg_tables WHERE schemaname = current_schema()", connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            string table = reader.GetString(0);
            string actual = reader.GetString(1);
            if (configured.TryGetValue(table, out string? wanted) && !string.Equals(actual, wanted, StringComparison.Ordinal))
            {
                PostgresLog.TableOnOtherTablespace(_logger, table, actual.Length == 0 ? "the default" : actual, wanted.Length == 0 ? "the default" : wanted);
            }
        }
    }

    /// <summary>
    /// One <c>INSERT ... SELECT FROM unnest(...) ON CONFLICT (serial) DO UPDATE ... RETURNING serial, id</c> for the
    /// whole batch. DO UPDATE (rather than DO NOTHING) so that RETURNING gives the id of every row, new or not: of two
    /// Saito instances registering one serial at once, the second waits for the first and then updates its row (the
    /// serials come sorted, so two batches lock their rows in the same order and cannot deadlock each other). A hello
    /// records what the device says; what it leaves out keeps its earlier value.
    /// </summary>
    private protected override async Task<IReadOnlyDictionary<string, RegisteredDevice>> RegisterDistinctAsync(
        IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken)
    {
        int count = devices.Count;
        string[] serials = new string[count];
        string?[] kinds = new string?[count];
        int?[] channels = new int?[count];
        string?[] firmwares = new string?[count];
        string?[] hubs = new string?[count];
        bool[] hellos = new bool[count];
        for (int i = 0; i < count; i++)
        {
            var (serial, announcement, _) = devices[i];
            serials[i] = serial;
            kinds[i] = announcement?.Kind;
            channels[i] = announcement?.Channels;
            firmwares[i] = announcement?.Firmware;
            hubs[i] = devices[i].NewHub;
            hellos[i] = announcement is not null;
        }

        await using var connection = (NpgsqlConnection)await OpenWriterAsync(cancellationToken);
        await using var upsert = new NpgsqlCommand(RegisterSql, connection);
        upsert.Parameters.AddWithValue("serials", NpgsqlDbType.Array | NpgsqlDbType.Text, serials);
        upsert.Parameters.AddWithValue("kinds", NpgsqlDbType.Array | NpgsqlDbType.Text, kinds);
        upsert.Parameters.AddWithValue("channels", NpgsqlDbType.Array | NpgsqlDbType.Integer, channels);
        upsert.Parameters.AddWithValue("firmwares", NpgsqlDbType.Array | NpgsqlDbType.Text, firmwares);
        upsert.Parameters.AddWithValue("hubs", NpgsqlDbType.Array | NpgsqlDbType.Text, hubs);
        upsert.Parameters.AddWithValue("hellos", NpgsqlDbType.Array | NpgsqlDbType.Boolean, hellos);
        var registered = new Dictionary<string, RegisteredDevice>(count, StringComparer.Ordinal);
        await using var reader = await upsert.ExecuteReaderAsync(cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            registered[reader.GetString(0)] = new RegisteredDevice(reader.GetInt32(1), await reader.IsDBNullAsync(2, cancellationToken) ? null : reader.GetString(2));
        }

        return registered;
    }

    internal static string RegisterSql { get; } =
        $"""
         INSERT INTO {ReadingTables.DeviceTable} AS d (serial, kind, channels, firmware, hub, last_hello)
         SELECT r.serial, r.kind, r.channels, r.firmware, r.hub, CASE WHEN r.hello THEN now() END
         FROM unnest(@serials, @kinds, @channels, @firmwares, @hubs, @hellos) WITH ORDINALITY
              AS r (serial, kind, channels, firmware, hub, hello, position)
         ORDER BY r.position
         ON CONFLICT (serial) DO UPDATE SET
             kind = coalesce(excluded.kind, d.kind),
             channels = coalesce(excluded.channels, d.channels),
             firmware = coalesce(excluded.firmware, d.firmware),
             hub = CASE WHEN excluded.last_hello IS NULL THEN d.hub ELSE coalesce(excluded.hub, d.hub) END,
             last_hello = coalesce(excluded.last_hello, d.last_hello)
         RETURNING d.serial, d.id, d.hub
         """;

    /// <summary>COPY straight into the table, in primary-key order; null on unique_violation (the table already holds one of them).</summary>
    private protected override async Task<long?> CopyReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        var target = _targets[(int)kind];
        using var order = ReadingOrder.ByteOrdered(readings, KeyStrategy, StorageProvider.Postgres);
        try
        {
            return await CopyReadingsAsync((NpgsqlConnection)connection, target.CopySql, target, readings, order, cancellationToken);
        }
        catch (PostgresException e) when (e.SqlState == PostgresErrorCodes.UniqueViolation)
        {
            return null;
        }
    }

    /// <summary>
    /// The staging path: COPY into the session's temporary twin of the table, then insert what is new. The key order is
    /// worked out again here (the fast path's is gone with its rollback): a second sort, only on this rare path.
    /// </summary>
    private protected override async Task<long> StageReadingsAsync(
        DbConnection connection, DbTransaction transaction, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        var target = _targets[(int)kind];
        PostgresLog.DuplicatesStaged(_logger, target.Table, readings.Count);
        using var order = ReadingOrder.ByteOrdered(readings, KeyStrategy, StorageProvider.Postgres);
        await ExecuteAsync(connection, target.CreateStageSql, cancellationToken);
        await CopyReadingsAsync((NpgsqlConnection)connection, target.StageCopySql, target, readings, order, cancellationToken);
        return await ExecuteAsync(connection, target.InsertFromStageSql, cancellationToken);
    }

    private protected override string StoredRowsOfStageSql(ReadingKind kind)
    {
        string table = _targets[(int)kind].Table;
        return $"SELECT device_id, channel, ts, {string.Join(", ", ReadingTables.ValueColumns(kind))} FROM {table} " +
               $"WHERE (device_id, channel, ts) IN (SELECT device_id, channel, ts FROM {CopyTarget.StageName(table)})";
    }

    private protected override string UpdateValuesSql(ReadingKind kind) =>
        $"UPDATE {_targets[(int)kind].Table} SET {string.Join(", ", ReadingTables.ValueColumns(kind).Select((c, i) => $"{c} = @v{i}"))} " +
        "WHERE device_id = @d AND channel = @c AND ts = @ts";

    private protected override DbParameter TimeParameter(DbCommand command, string name, DateTime utc) =>
        new NpgsqlParameter<DateTime>(name, NpgsqlDbType.TimestampTz) { TypedValue = utc };

    private async Task<long> CopyReadingsAsync(
        NpgsqlConnection connection, string copySql, CopyTarget target, IReadOnlyList<Reading> readings, ReadingOrder order, CancellationToken cancellationToken)
    {
        await using var copy = await PgBinaryCopy.BeginAsync(connection, copySql, _copyTimeout, cancellationToken);
        bool hasId = target.HasId;
        int valueCount = target.ValueCount;
        bool valuesNullable = target.ValuesNullable;
        short fields = checked((short)((hasId ? 1 : 0) + 3 + valueCount + 1));
        var ids = order.Ids;
        for (int position = 0; position < order.Count; position++)
        {
            int index = order.IndexAt(position);
            Reading reading = readings[index];
            await copy.StartRowAsync(fields, cancellationToken);
            if (hasId)
            {
                copy.Uuid(ids[index]);
            }

            copy.Int32(reading.DeviceId);
            copy.Int32(reading.Channel);
            copy.TimestampTz(reading.Timestamp);
            for (int v = 0; v < valueCount; v++)
            {
                double? value = ReadingTables.Value(reading, v);
                if (value.HasValue)
                {
                    copy.Float8(value.GetValueOrDefault());
                }
                else if (valuesNullable)
                {
                    copy.Null();
                }
                else
                {
                    throw MissingValue(reading, v);
                }
            }

            copy.TimestampTz(reading.ReceivedAt);
        }

        await copy.CompleteAsync(cancellationToken);
        return order.Count;
    }

    private static ArgumentException MissingValue(in Reading reading, int index) => new(
        $"A {ReadingKinds.Name(reading.Kind)} reading needs {ReadingTables.ValueColumns(reading.Kind)[index]} " +
        $"(device {reading.DeviceId}, channel {reading.Channel}, {reading.Timestamp:O}); the batch is not written.",
        nameof(reading));

    private protected override async Task CopyDeadLettersAsync(
        DbConnection connection, DbTransaction transaction, List<DeadLetter> deadLetters, CancellationToken cancellationToken)
    {
        await using var importer = await ((NpgsqlConnection)connection).BeginBinaryImportAsync(_deadLetters.CopySql, cancellationToken);
        importer.Timeout = _copyTimeout;
        foreach (var letter in deadLetters)
        {
            await importer.StartRowAsync(cancellationToken);
            await importer.WriteAsync(letter.ReceivedAt, NpgsqlDbType.TimestampTz, cancellationToken);
            await importer.WriteAsync(letter.Topic, NpgsqlDbType.Text, cancellationToken);
            await WriteOrNullAsync(importer, letter.ClientId, NpgsqlDbType.Text, cancellationToken);
            await importer.WriteAsync(letter.Reason, NpgsqlDbType.Text, cancellationToken);
            await importer.WriteAsync(letter.Detail, NpgsqlDbType.Text, cancellationToken);
            await importer.WriteAsync(letter.Payload, NpgsqlDbType.Text, cancellationToken);
            await WriteOrNullAsync(importer, letter.PayloadBytes, NpgsqlDbType.Bytea, cancellationToken);
        }

        await importer.CompleteAsync(cancellationToken);
    }

    /// <summary>A nullable column of a COPY row: NULL, or the value as <paramref name="type"/>.</summary>
    private static Task WriteOrNullAsync<T>(NpgsqlBinaryImporter importer, T? value, NpgsqlDbType type, CancellationToken cancellationToken)
        where T : class =>
        value is null ? importer.WriteNullAsync(cancellationToken) : importer.WriteAsync(value, type, cancellationToken);

    /// <summary>A column a table made by an older Saito lacks (<see cref="PostgresSchema.AddedColumns"/>), added in the schema transaction.</summary>
    private async Task AddColumnIfMissingAsync(NpgsqlConnection connection, AddedColumn added, CancellationToken cancellationToken)
    {
        await using var command = new NpgsqlCommand(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = @table AND column_name = @column",
            connection);
        command.Parameters.AddWithValue("table", added.Table);
        command.Parameters.AddWithValue("column", added.Column);
        if ((long)(await command.ExecuteScalarAsync(cancellationToken))! > 0)
        {
            return;
        }

        await ExecuteAsync(connection, added.AddSql, cancellationToken);
        PostgresLog.ColumnAdded(_logger, added.Table, added.Column);
    }

    /// <inheritdoc cref="PostgresErrors.IsTransient(Exception?)"/>
    public override bool IsTransient(Exception exception) => PostgresErrors.IsTransient(exception);

    /// <inheritdoc cref="PostgresErrors.IsStorageOutageSqlState(string)"/>
    public override bool IsStorageOutage(Exception exception) => PostgresErrors.IsStorageOutage(exception);

    private protected override async ValueTask DisposeCoreAsync()
    {
        await _dataSource.DisposeAsync();
        await _queries.DisposeAsync();
    }

    /// <summary>The statements of one table's COPY and its staging path, built once.</summary>
    private sealed class CopyTarget
    {
        private CopyTarget(string table, IReadOnlyList<string> columns, bool hasId, int valueCount, bool valuesNullable)
        {
            Table = table;
            HasId = hasId;
            ValueCount = valueCount;
            ValuesNullable = valuesNullable;
            string list = string.Join(", ", columns);
            string stage = StageName(table);
            CopySql = $"COPY {table} ({list}) FROM STDIN (FORMAT BINARY)";
            CreateStageSql = $"CREATE TEMP TABLE IF NOT EXISTS {stage} (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DELETE ROWS";
            StageCopySql = $"COPY {stage} ({list}) FROM STDIN (FORMAT BINARY)";
            InsertFromStageSql = $"INSERT INTO {table} ({list}) SELECT {list} FROM {stage} ON CONFLICT DO NOTHING";
        }

        public string Table { get; }
        public bool HasId { get; }

        /// <summary>The session's temporary twin of <paramref name="table"/> (the staging path).</summary>
        public static string StageName(string table) => "saito_stage_" + table;
        public int ValueCount { get; }
        public bool ValuesNullable { get; }
        public string CopySql { get; }
        public string CreateStageSql { get; }
        public string StageCopySql { get; }
        public string InsertFromStageSql { get; }

        public static CopyTarget ForReadings(ReadingKind kind, KeyStrategy keys) => new(
            ReadingTables.TableName(kind, keys, StorageTier.Hot),
            ReadingTables.Columns(kind, keys),
            keys != KeyStrategy.Natural,
            ReadingTables.ValueColumns(kind).Count,
            kind == ReadingKind.Biosensor);

        public static CopyTarget ForDeadLetters() => new(
            ReadingTables.DeadLetterTable,
            ["received_at", "topic", "client_id", "reason", "detail", "payload", "payload_bytes"],
            hasId: false,
            valueCount: 0,
            valuesNullable: false);
    }
}

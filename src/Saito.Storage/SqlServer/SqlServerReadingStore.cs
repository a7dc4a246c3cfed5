using System.Data;
using System.Globalization;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Readings in SQL Server (<c>Storage:Provider=sqlserver</c>), through Microsoft.Data.SqlClient: each batch is one
/// transaction holding one <see cref="SqlBulkCopy"/> per kind, streamed from the batch's lists by
/// <see cref="ReadingRowSource"/>, and the dead letters. Duplicates are dropped by the tables' primary keys
/// (<c>IGNORE_DUP_KEY = ON</c>, see <see cref="SqlServerSchema"/>). Every call opens its own pooled connection,
/// so writers run in parallel. The process must not run in globalization-invariant mode (see
/// <see cref="InvariantGlobalizationMessage"/>).
/// </summary>
public sealed partial class SqlServerReadingStore : IReadingStore
{
    /// <summary>SQL Server's message for a row dropped by IGNORE_DUP_KEY: "Duplicate key was ignored." (severity 10).</summary>
    internal const int DuplicateKeyIgnored = 3604;

    private const string SchemaLock = "saito:schema";

    private const string Savepoint = "saito_kind";

    /// <summary>Databases Saito must not create tables in (a connection string without Database= lands in the login's default, often master).</summary>
    private static readonly HashSet<string> SystemDatabases = new(StringComparer.OrdinalIgnoreCase) { "master", "model", "msdb", "tempdb" };

    /// <summary>
    /// Microsoft.Data.SqlClient needs the OS's culture data (ICU on Linux) to map collations to encodings and refuses
    /// to open a connection in globalization-invariant mode ("Globalization Invariant Mode is not supported.", by design:
    /// https://github.com/dotnet/SqlClient/issues/220, /662, /3742). Directory.Build.props turns that mode on for every
    /// project, so the host that runs this store must turn it off. Said once, with the fix, instead of SqlClient's bare message.
    /// </summary>
    internal const string InvariantGlobalizationMessage =
        "SQL Server cannot be used while .NET runs in globalization-invariant mode: Microsoft.Data.SqlClient needs culture data " +
        "(ICU) to map collations to encodings and refuses to connect (https://github.com/dotnet/SqlClient/issues/220). " +
        "Set <InvariantGlobalization>false</InvariantGlobalization> in the project that starts Saito (or " +
        "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=false when the runtimeconfig does not set it) and install ICU (Debian: libicu72).";

    /// <summary>Whether this process runs in globalization-invariant mode, detected as SqlClient 6 does (en-US cannot be had).</summary>
    internal static readonly Lazy<bool> GlobalizationInvariant = new(() =>
    {
        try
        {
            return CultureInfo.GetCultureInfo("en-US").EnglishName.Contains("Invariant", StringComparison.Ordinal);
        }
        catch (CultureNotFoundException)
        {
            return true;
        }
    });

    private readonly ILogger<SqlServerReadingStore> _logger;
    private readonly string _connectionString;
    private readonly string _dataSource;
    private readonly string _database;
    private readonly SqlServerSchema _schema;
    private readonly KeyStrategy _keys;
    private readonly int _timeoutSeconds;

    public SqlServerReadingStore(StorageOptions options, ILogger<SqlServerReadingStore> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(logger);
        if (string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            throw new ArgumentException("Storage:ConnectionString is required for Storage:Provider=sqlserver.", nameof(options));
        }

        if (!Enum.IsDefined(options.KeyStrategy))
        {
            throw new ArgumentException("Storage:KeyStrategy must be natural, guid or sequential-guid.", nameof(options));
        }

        if (options.CommandTimeoutSeconds is < 1 or > 3600)
        {
            throw new ArgumentException($"Storage:CommandTimeoutSeconds must be between 1 and 3600 (was {options.CommandTimeoutSeconds}).", nameof(options));
        }

        _logger = logger;
        _keys = options.KeyStrategy;
        _timeoutSeconds = options.CommandTimeoutSeconds;
        _schema = new SqlServerSchema(options.SqlServer);

        // Parsing here turns a malformed connection string into an error at start, not at the first batch.
        var builder = new SqlConnectionStringBuilder(options.ConnectionString);
        if (!builder.ShouldSerialize("Application Name"))
        {
            builder.ApplicationName = "Saito";
        }

        _connectionString = builder.ConnectionString;
        _dataSource = builder.DataSource;
        _database = builder.InitialCatalog;
    }

    public StorageProvider Provider => StorageProvider.SqlServer;

    public KeyStrategy KeyStrategy => _keys;

    /// <summary><c>SQL Server database NAME on SERVER</c>: the connection string's database and server, never its credentials.</summary>
    public string Describe() =>
        $"SQL Server database {(_database.Length == 0 ? "(the login's default)" : _database)} on {(_dataSource.Length == 0 ? "(local)" : _dataSource)}";

    /// <summary>
    /// Creates what is missing, under an application lock so that two Saito instances starting together do not
    /// race: the configured filegroups and their files (when a folder is configured), then <c>device</c>,
    /// <c>dead_letter</c>, the hot and archive reading tables of every key strategy (<see cref="SqlServerSchema.TableSteps"/>)
    /// and the views (<see cref="SqlServerSchema.ViewSteps"/>); the report names each by its table or view. Each statement
    /// is the one in <c>sql/sqlserver/001_schema.sql</c>.
    /// Then checks that every reading table drops duplicates (IGNORE_DUP_KEY on its primary key), because a table
    /// created another way without it would fail every batch that holds a redelivered reading.
    /// </summary>
    public async Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken)
    {
        var created = new List<string>();
        var existing = new List<string>();
        await using var connection = await OpenAsync(cancellationToken);
        if (SystemDatabases.Contains(connection.Database))
        {
            throw new InvalidOperationException(
                $"{Describe()}: the connection is in system database '{connection.Database}'. Name Saito's database in Storage:ConnectionString (Database=...).");
        }

        await AcquireSchemaLockAsync(connection, cancellationToken);
        try
        {
            var tables = await ReadStringsAsync(connection, "SELECT [name] FROM sys.objects WHERE [schema_id] = SCHEMA_ID(N'dbo') AND [type] IN ('U', 'V');", cancellationToken);
            var filegroups = await ReadFilegroupsAsync(connection, cancellationToken);

            foreach (var step in _schema.FilegroupSteps(connection.Database))
            {
                bool present = step.Object == SqlServerSchemaObject.Filegroup
                    ? filegroups.ContainsKey(step.Target)
                    : filegroups.TryGetValue(step.Target, out var files) && files.Count > 0;
                await ExecuteAsync(connection, step.Sql, cancellationToken);
                if (present)
                {
                    existing.Add(step.Name);
                }
                else
                {
                    created.Add(step.Name);
                    LogAdded(step.Name, Describe());
                }
            }

            await CheckFilegroupsAsync(connection, cancellationToken);

            foreach (var step in _schema.TableSteps().Concat(SqlServerSchema.ViewSteps()))
            {
                bool present = tables.Contains(step.Target);
                await ExecuteAsync(connection, step.Sql, cancellationToken);
                (present ? existing : created).Add(step.Name);
            }

            await CheckDuplicatesAreIgnoredAsync(connection, cancellationToken);
        }
        finally
        {
            await ReleaseSchemaLockAsync(connection);
        }

        return new SchemaReport(created, existing);
    }

    public async Task<IReadOnlyDictionary<string, int>> LoadDevicesAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection, $"SELECT [serial], [id] FROM {SqlServerSql.Table(ReadingTables.DeviceTable)};");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var devices = new Dictionary<string, int>(StringComparer.Ordinal);
        while (await reader.ReadAsync(cancellationToken))
        {
            devices[reader.GetString(0)] = reader.GetInt32(1);
        }

        return devices;
    }

    /// <summary>
    /// One MERGE ... WITH (HOLDLOCK): the key-range lock on the serial makes a concurrent registration of the same
    /// serial wait and then find the row, so both callers get the same id. A unique violation (2627, 2601) can still
    /// surface if the table is written outside Saito without that lock; the statement is then run again and finds
    /// the row. An announcement overwrites what it states and keeps what it leaves out.
    /// </summary>
    public async Task<int> RegisterDeviceAsync(string serial, DeviceAnnouncement? announcement, CancellationToken cancellationToken)
    {
        ArgumentException.ThrowIfNullOrEmpty(serial);
        if (serial.Length > SqlServerSchema.SerialLength)
        {
            throw new ArgumentException($"A serial has at most {SqlServerSchema.SerialLength} characters (was {serial.Length}).", nameof(serial));
        }

        for (int attempt = 1; ; attempt++)
        {
            try
            {
                await using var connection = await OpenAsync(cancellationToken);
                await using var command = Command(connection, RegisterSql);
                command.Parameters.Add(new SqlParameter("@serial", SqlDbType.NVarChar, SqlServerSchema.SerialLength) { Value = serial });
                command.Parameters.Add(new SqlParameter("@hello", SqlDbType.Bit) { Value = announcement is not null });
                command.Parameters.Add(Text("@kind", announcement?.Kind, SqlServerSchema.DeviceKindLength));
                command.Parameters.Add(new SqlParameter("@channels", SqlDbType.Int) { Value = (object?)announcement?.Channels ?? DBNull.Value });
                command.Parameters.Add(Text("@firmware", announcement?.Firmware, SqlServerSchema.FirmwareLength));
                command.Parameters.Add(Text("@hub", announcement?.Hub, SqlServerSchema.HubLength));
                object? id = await command.ExecuteScalarAsync(cancellationToken);
                if (id is int value)
                {
                    return value;
                }

                // Only if the row vanished between the MERGE and the SELECT (deleted by hand): register again.
                if (attempt >= 3)
                {
                    throw new InvalidOperationException($"Device '{serial}' could not be registered: its row disappeared {attempt} times.");
                }
            }
            catch (SqlException ex) when (attempt < 3 && SqlServerErrors.IsUniqueViolation(ex))
            {
                LogRegisterRace(serial, attempt);
            }
        }
    }

    /// <summary>
    /// Bulk-copies each kind's readings into its hot table and the dead letters into dead_letter, in one transaction.
    /// <para>
    /// Counting: SQL Server drops a duplicate with the warning "Duplicate key was ignored." (3604), once per
    /// statement and without a count, and SqlBulkCopy counts the rows it sent, not the rows stored. So each kind is
    /// copied after a savepoint, and when its copy draws no 3604 every reading was new. When one does, the copy is
    /// rolled back to the savepoint and the readings go through a staging table instead (bulk copy into a
    /// <c>#temp</c> heap, then one INSERT ... SELECT into the same IGNORE_DUP_KEY table), whose @@ROWCOUNT is the
    /// number stored. <see cref="BatchWriteResult.Inserted"/> and <see cref="BatchWriteResult.Duplicates"/> are
    /// therefore exact, also with concurrent writers of the same readings; this store never answers -1
    /// ("cannot say"). Duplicates cost a second copy of that kind's rows; batches without any cost nothing extra
    /// but a SAVE TRANSACTION per kind.
    /// </para>
    /// <para>
    /// A location or pressure reading without all its values (the columns are NOT NULL), or any reading with a NaN or
    /// infinite value, is refused with an <see cref="ArgumentException"/> before anything is sent; a cancelled write
    /// throws <see cref="OperationCanceledException"/>.
    /// Either way nothing of the batch is stored.
    /// </para>
    /// </summary>
    public async Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        if (batch.IsEmpty)
        {
            return default;
        }

        foreach (var kind in ReadingKinds.All)
        {
            CheckValues(kind, batch.Of(kind));
        }

        try
        {
            return await OpenAndWriteAsync(batch, cancellationToken);
        }
        catch (Exception ex) when (cancellationToken.IsCancellationRequested && ex is not OperationCanceledException)
        {
            // SqlClient reports a command cancelled mid-flight as a SqlException ("Operation cancelled by user").
            throw new OperationCanceledException("The write was cancelled; its transaction was rolled back.", ex, cancellationToken);
        }
    }

    private async Task<BatchWriteResult> OpenAndWriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        try
        {
            return await WriteBatchAsync(connection, batch, cancellationToken);
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // A bulk copy cancelled part way may leave its connection inside the INSERT BULK (SqlClient 6 sends no
            // attention for a faulted asynchronous copy: https://github.com/dotnet/SqlClient/pull/4687); make sure
            // the pool does not hand it out again. Cancellation means shutdown, so the cost does not matter.
            SqlConnection.ClearPool(connection);
            throw;
        }
    }

    private async Task<BatchWriteResult> WriteBatchAsync(SqlConnection connection, ReadingBatch batch, CancellationToken cancellationToken)
    {
        var warnings = new DuplicateWarnings();
        connection.InfoMessage += warnings.OnInfoMessage;
        await using var transaction = (SqlTransaction)await connection.BeginTransactionAsync(cancellationToken);
        long sent = 0;
        long inserted = 0;
        foreach (var kind in ReadingKinds.All)
        {
            var readings = batch.Of(kind);
            if (readings.Count == 0)
            {
                continue;
            }

            string table = ReadingTables.TableName(kind, _keys, StorageTier.Hot);
            var columns = ReadingTables.Columns(kind, _keys);
            await transaction.SaveAsync(Savepoint, cancellationToken);
            int warningsBefore = warnings.Count;
            await CopyReadingsAsync(connection, transaction, table, kind, readings, cancellationToken);
            if (warnings.Count == warningsBefore)
            {
                inserted += readings.Count;
            }
            else
            {
                await transaction.RollbackAsync(Savepoint, cancellationToken);
                LogDuplicatesStaged(table, readings.Count);
                inserted += await StageReadingsAsync(connection, transaction, table, columns, kind, readings, cancellationToken);
            }

            sent += readings.Count;
        }

        if (batch.DeadLetters.Count > 0)
        {
            using var bulkCopy = CreateBulkCopy(connection, transaction, SqlServerSql.Table(ReadingTables.DeadLetterTable), SqlServerSchema.DeadLetterColumns, _timeoutSeconds);
            using var rows = new DeadLetterRowSource(batch.DeadLetters);
            await bulkCopy.WriteToServerAsync(rows, cancellationToken);
        }

        await transaction.CommitAsync(cancellationToken);
        return new BatchWriteResult(inserted, sent - inserted, batch.DeadLetters.Count);
    }

    private async Task CopyReadingsAsync(
        SqlConnection connection, SqlTransaction transaction, string destination, ReadingKind kind, IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        string target = destination.StartsWith('#') ? destination : SqlServerSql.Table(destination);
        using var bulkCopy = CreateBulkCopy(connection, transaction, target, ReadingTables.Columns(kind, _keys), _timeoutSeconds);
        using var rows = new ReadingRowSource(kind, _keys, readings);
        await bulkCopy.WriteToServerAsync(rows, cancellationToken);
    }

    /// <summary>The counting path: copy into the session's staging heap, then insert what is new; answers how many were.</summary>
    private async Task<long> StageReadingsAsync(
        SqlConnection connection, SqlTransaction transaction, string table, IReadOnlyList<string> columns, ReadingKind kind,
        IReadOnlyList<Reading> readings, CancellationToken cancellationToken)
    {
        await using (var create = Command(connection, SqlServerSchema.CreateStage(table, columns), transaction))
        {
            await create.ExecuteNonQueryAsync(cancellationToken);
        }

        await CopyReadingsAsync(connection, transaction, SqlServerSchema.StageTable, kind, readings, cancellationToken);
        await using var insert = Command(connection, SqlServerSchema.InsertFromStage(table, columns), transaction);
        return Convert.ToInt64(await insert.ExecuteScalarAsync(cancellationToken), CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// Location and pressure readings carry every value (the columns are NOT NULL), and no value is NaN or infinite
    /// (SQL Server's float holds neither, and would refuse the whole copy); say which reading and column, before any
    /// round trip.
    /// </summary>
    private static void CheckValues(ReadingKind kind, IReadOnlyList<Reading> readings)
    {
        bool nullable = SqlServerSchema.ValuesNullable(kind);
        var columns = ReadingTables.ValueColumns(kind);
        for (int i = 0; i < readings.Count; i++)
        {
            for (int v = 0; v < columns.Count; v++)
            {
                double? value = ReadingTables.Value(readings[i], v);
                if (value is null ? !nullable : !double.IsFinite(value.GetValueOrDefault()))
                {
                    var reading = readings[i];
                    string problem = value is null ? $"needs {columns[v]}" : $"has {columns[v]} = {value.GetValueOrDefault().ToString(CultureInfo.InvariantCulture)}, which SQL Server's float cannot hold";
                    throw new ArgumentException(
                        $"A {ReadingKinds.Name(kind)} reading {problem} " +
                        $"(device {reading.DeviceId}, channel {reading.Channel}, {reading.Timestamp:O}); the batch is not written.",
                        nameof(readings));
                }
            }
        }
    }

    public async Task<long> CountAsync(ReadingKind kind, StorageTier tier, CancellationToken cancellationToken)
    {
        string table = ReadingTables.TableName(kind, _keys, tier);
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection, $"SELECT COUNT_BIG(*) FROM {SqlServerSql.Table(table)};");
        return (long)(await command.ExecuteScalarAsync(cancellationToken))!;
    }

    public async Task<IReadOnlyList<Reading>> ReadAsync(ReadingKind kind, StorageTier tier, int deviceId, CancellationToken cancellationToken)
    {
        string table = ReadingTables.TableName(kind, _keys, tier);
        var values = ReadingTables.ValueColumns(kind);
        string columns = string.Join(", ", SqlServerSchema.NaturalKey.Concat(values).Append("received_at").Select(SqlServerSql.Quote));
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection, $"SELECT {columns} FROM {SqlServerSql.Table(table)} WHERE [device_id] = @device ORDER BY [ts], [channel];");
        command.Parameters.Add(new SqlParameter("@device", SqlDbType.Int) { Value = deviceId });
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var readings = new List<Reading>();
        var value = new double?[4];
        int receivedAt = 3 + values.Count;
        while (await reader.ReadAsync(cancellationToken))
        {
            for (int i = 0; i < values.Count; i++)
            {
                value[i] = await reader.IsDBNullAsync(3 + i, cancellationToken) ? null : reader.GetDouble(3 + i);
            }

            readings.Add(new Reading(kind, reader.GetInt32(0), reader.GetInt32(1), Utc(reader.GetDateTime(2)), Utc(reader.GetDateTime(receivedAt)),
                value[0], value[1], value[2], value[3]));
        }

        return readings;
    }

    public async Task<IReadOnlyList<DeadLetter>> ReadDeadLettersAsync(int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(limit);
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection,
            $"SELECT TOP (@limit) [received_at], [topic], [client_id], [reason], [detail], [payload], [payload_bytes] FROM {SqlServerSql.Table(ReadingTables.DeadLetterTable)} ORDER BY [id] DESC;");
        command.Parameters.Add(new SqlParameter("@limit", SqlDbType.Int) { Value = limit });
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var letters = new List<DeadLetter>();
        while (await reader.ReadAsync(cancellationToken))
        {
            letters.Add(new DeadLetter(Utc(reader.GetDateTime(0)), reader.GetString(1), await reader.IsDBNullAsync(2, cancellationToken) ? null : reader.GetString(2),
                reader.GetString(3), reader.GetString(4), reader.GetString(5),
                await reader.IsDBNullAsync(6, cancellationToken) ? null : await reader.GetFieldValueAsync<byte[]>(6, cancellationToken)));
        }

        return letters;
    }

    public async Task PingAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(cancellationToken);
        await using var command = Command(connection, "SELECT 1;");
        await command.ExecuteScalarAsync(cancellationToken);
    }

    /// <inheritdoc cref="SqlServerErrors.IsTransient(Exception?)"/>
    public bool IsTransient(Exception exception) => SqlServerErrors.IsTransient(exception);

    /// <summary>Nothing to release: connections go back to SqlClient's pool when each call ends.</summary>
    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <summary>
    /// The bulk copy into <paramref name="destination"/> (<c>[dbo].[table]</c> or the <c>#stage</c>): streaming from
    /// the row source (no buffering of the batch), one batch on the wire (BatchSize 0: all rows in one INSERT BULK,
    /// inside the caller's transaction), Storage:CommandTimeoutSeconds, and every column mapped by name, so the
    /// table's column order does not matter. Default options: no TABLOCK (writers run in parallel), no triggers, and
    /// no CHECK_CONSTRAINTS (there are none). No ORDER hint is given, so SQL Server sorts the rows by the clustered
    /// key before inserting them (BULK INSERT's ORDER option describes this); a deadlock between writers whose
    /// batches overlap is still possible, and is transient (1205).
    /// </summary>
    internal static SqlBulkCopy CreateBulkCopy(SqlConnection connection, SqlTransaction? transaction, string destination, IReadOnlyList<string> columns, int timeoutSeconds)
    {
        var bulkCopy = new SqlBulkCopy(connection, SqlBulkCopyOptions.Default, transaction)
        {
            DestinationTableName = destination,
            EnableStreaming = true,
            BatchSize = 0,
            BulkCopyTimeout = timeoutSeconds,
        };
        foreach (string column in columns)
        {
            bulkCopy.ColumnMappings.Add(column, column);
        }

        return bulkCopy;
    }

    /// <summary>The registration statement (see <see cref="RegisterDeviceAsync"/>).</summary>
    internal static string RegisterSql { get; } =
        $"""
        SET NOCOUNT ON;
        DECLARE @ids TABLE ([id] int NOT NULL);
        MERGE {SqlServerSql.Table(ReadingTables.DeviceTable)} WITH (HOLDLOCK) AS d
        USING (SELECT @serial AS [serial]) AS s
            ON d.[serial] = s.[serial]
        WHEN MATCHED AND @hello = 1 THEN
            UPDATE SET d.[kind] = COALESCE(@kind, d.[kind]),
                       d.[channels] = COALESCE(@channels, d.[channels]),
                       d.[firmware] = COALESCE(@firmware, d.[firmware]),
                       d.[hub] = COALESCE(@hub, d.[hub]),
                       d.[last_hello] = SYSUTCDATETIME()
        WHEN NOT MATCHED BY TARGET THEN
            INSERT ([serial], [kind], [channels], [firmware], [hub], [first_seen], [last_hello])
            VALUES (s.[serial], @kind, @channels, @firmware, @hub, SYSUTCDATETIME(), CASE WHEN @hello = 1 THEN SYSUTCDATETIME() END)
        OUTPUT inserted.[id] INTO @ids;
        IF EXISTS (SELECT 1 FROM @ids)
            SELECT TOP (1) [id] FROM @ids;
        ELSE
            SELECT [id] FROM {SqlServerSql.Table(ReadingTables.DeviceTable)} WHERE [serial] = @serial;
        """;

    private static DateTime Utc(DateTime value) => DateTime.SpecifyKind(value, DateTimeKind.Utc);

    private static SqlParameter Text(string name, string? value, int length) =>
        new(name, SqlDbType.NVarChar, length) { Value = value is null ? DBNull.Value : value.Length <= length ? value : value[..length] };

    private async Task<SqlConnection> OpenAsync(CancellationToken cancellationToken)
    {
        if (GlobalizationInvariant.Value)
        {
            throw new NotSupportedException(InvariantGlobalizationMessage);
        }

        return await OpenConnectionAsync(_connectionString, cancellationToken);
    }

    /// <summary>An open connection, or none left behind: the store's and the archive engine's way in.</summary>
    internal static async Task<SqlConnection> OpenConnectionAsync(string connectionString, CancellationToken cancellationToken)
    {
        var connection = new SqlConnection(connectionString);
        try
        {
            await connection.OpenAsync(cancellationToken);
            return connection;
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }

    private SqlCommand Command(SqlConnection connection, string sql, SqlTransaction? transaction = null) =>
        new(sql, connection, transaction) { CommandTimeout = _timeoutSeconds };

    private async Task ExecuteAsync(SqlConnection connection, string sql, CancellationToken cancellationToken)
    {
        await using var command = Command(connection, sql);
        await command.ExecuteNonQueryAsync(cancellationToken);
    }

    private async Task<HashSet<string>> ReadStringsAsync(SqlConnection connection, string sql, CancellationToken cancellationToken)
    {
        await using var command = Command(connection, sql);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        while (await reader.ReadAsync(cancellationToken))
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    /// <summary>Filegroup name to the physical names of its files.</summary>
    private async Task<Dictionary<string, List<string>>> ReadFilegroupsAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        await using var command = Command(connection,
            "SELECT g.[name], f.[physical_name] FROM sys.filegroups AS g LEFT JOIN sys.database_files AS f ON f.[data_space_id] = g.[data_space_id];");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var filegroups = new Dictionary<string, List<string>>(StringComparer.OrdinalIgnoreCase);
        while (await reader.ReadAsync(cancellationToken))
        {
            string name = reader.GetString(0);
            if (!filegroups.TryGetValue(name, out var files))
            {
                filegroups[name] = files = [];
            }

            if (!await reader.IsDBNullAsync(1, cancellationToken))
            {
                files.Add(reader.GetString(1));
            }
        }

        return filegroups;
    }

    /// <summary>A configured filegroup must exist and hold a file by now; say how to fix it when not, rather than fail on CREATE TABLE.</summary>
    private async Task CheckFilegroupsAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        if (_schema.ConfiguredFilegroups().Count == 0)
        {
            return;
        }

        var filegroups = await ReadFilegroupsAsync(connection, cancellationToken);
        foreach (string filegroup in _schema.ConfiguredFilegroups())
        {
            if (!filegroups.TryGetValue(filegroup, out var files))
            {
                throw new InvalidOperationException(
                    $"Filegroup {SqlServerSql.Quote(filegroup)} does not exist in {Describe()}. Create it (ALTER DATABASE ... ADD FILEGROUP, then ADD FILE), " +
                    "or set Storage:SqlServer:HotFilePath / ArchiveFilePath to a folder on the database server and Saito will.");
            }

            if (files.Count == 0)
            {
                throw new InvalidOperationException(
                    $"Filegroup {SqlServerSql.Quote(filegroup)} in {Describe()} has no data file, so no table can be created on it. " +
                    "Add one (ALTER DATABASE ... ADD FILE ... TO FILEGROUP), or set its Storage:SqlServer:*FilePath and Saito will.");
            }
        }
    }

    private async Task CheckDuplicatesAreIgnoredAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        var readingTables = SqlServerSchema.ReadingTableNames();
        await using var command = Command(connection,
            "SELECT t.[name] FROM sys.tables AS t " +
            "LEFT JOIN sys.indexes AS i ON i.[object_id] = t.[object_id] AND i.[is_primary_key] = 1 " +
            "WHERE t.[schema_id] = SCHEMA_ID(N'dbo') AND COALESCE(i.[ignore_dup_key], 0) = 0 " +
            $"AND t.[name] IN ({string.Join(", ", readingTables.Select((_, i) => "@t" + i))});");
        for (int i = 0; i < readingTables.Count; i++)
        {
            command.Parameters.Add(new SqlParameter("@t" + i, SqlDbType.NVarChar, 128) { Value = readingTables[i] });
        }

        var wrong = new List<string>();
        await using (var reader = await command.ExecuteReaderAsync(cancellationToken))
        {
            while (await reader.ReadAsync(cancellationToken))
            {
                wrong.Add(reader.GetString(0));
            }
        }

        if (wrong.Count > 0)
        {
            string fixes = string.Join(" ", wrong.Select(table =>
                $"ALTER INDEX {SqlServerSql.Quote(SqlServerSchema.PrimaryKeyName(table))} ON {SqlServerSql.Table(table)} REBUILD WITH (IGNORE_DUP_KEY = ON);"));
            throw new InvalidOperationException(
                $"Reading table(s) {string.Join(", ", wrong)} in {Describe()} have no primary key WITH (IGNORE_DUP_KEY = ON), so a redelivered reading " +
                $"would fail its whole batch. Create them as sql/sqlserver/001_schema.sql does, or (if the primary key has that name) run: {fixes}");
        }
    }

    private async Task AcquireSchemaLockAsync(SqlConnection connection, CancellationToken cancellationToken)
    {
        await using var command = Command(connection, "sp_getapplock");
        command.CommandType = CommandType.StoredProcedure;
        command.Parameters.Add(new SqlParameter("@Resource", SqlDbType.NVarChar, 255) { Value = SchemaLock });
        command.Parameters.Add(new SqlParameter("@LockMode", SqlDbType.VarChar, 32) { Value = "Exclusive" });
        command.Parameters.Add(new SqlParameter("@LockOwner", SqlDbType.VarChar, 32) { Value = "Session" });
        // A second less than the command's own timeout, so that a long wait ends as "lock not granted", not as a client timeout.
        command.Parameters.Add(new SqlParameter("@LockTimeout", SqlDbType.Int) { Value = Math.Max(0, _timeoutSeconds - 1) * 1000 });
        var result = command.Parameters.Add(new SqlParameter("@return", SqlDbType.Int) { Direction = ParameterDirection.ReturnValue });
        await command.ExecuteNonQueryAsync(cancellationToken);
        int code = (int)result.Value;
        if (code < 0)
        {
            // -1 timeout, -2 cancelled, -3 deadlock victim: another instance is creating the schema; try again later.
            throw new TimeoutException($"Could not take the schema lock '{SchemaLock}' in {Describe()} within {_timeoutSeconds} s (sp_getapplock returned {code}).");
        }
    }

    private async Task ReleaseSchemaLockAsync(SqlConnection connection)
    {
        try
        {
            await using var command = Command(connection, "sp_releaseapplock");
            command.CommandType = CommandType.StoredProcedure;
            command.Parameters.Add(new SqlParameter("@Resource", SqlDbType.NVarChar, 255) { Value = SchemaLock });
            command.Parameters.Add(new SqlParameter("@LockOwner", SqlDbType.VarChar, 32) { Value = "Session" });
            await command.ExecuteNonQueryAsync(CancellationToken.None);
        }
        catch (Exception ex) when (ex is SqlException or InvalidOperationException)
        {
            // The lock belongs to the session: make sure the session ends rather than go back to the pool holding it.
            LogSchemaLockNotReleased(ex);
            SqlConnection.ClearPool(connection);
        }
    }

    [LoggerMessage(3100, LogLevel.Information, "Added {What} to {Store}")]
    private partial void LogAdded(string what, string store);

    [LoggerMessage(3101, LogLevel.Debug, "{Table}: a copy of {Rows} readings held duplicates (3604); copying them again through a staging table to count them")]
    private partial void LogDuplicatesStaged(string table, int rows);

    [LoggerMessage(3102, LogLevel.Debug, "Device {Serial} registered concurrently (attempt {Attempt}); reading its id again")]
    private partial void LogRegisterRace(string serial, int attempt);

    [LoggerMessage(3103, LogLevel.Warning, "Could not release the schema lock; its connection is dropped from the pool instead")]
    private partial void LogSchemaLockNotReleased(Exception exception);

    /// <summary>Counts "Duplicate key was ignored." (3604) messages; SqlClient may raise them on any thread.</summary>
    private sealed class DuplicateWarnings
    {
        private int _count;

        public int Count => Volatile.Read(ref _count);

        public void OnInfoMessage(object sender, SqlInfoMessageEventArgs e)
        {
            foreach (SqlError error in e.Errors)
            {
                if (error.Number == DuplicateKeyIgnored)
                {
                    Interlocked.Increment(ref _count);
                }
            }
        }
    }
}

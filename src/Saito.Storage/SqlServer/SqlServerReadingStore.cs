using System.Data;
using System.Data.Common;
using System.Globalization;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;

namespace Saito.Storage.SqlServer;

/// <summary>
/// Readings in SQL Server (<c>Storage:Provider=sqlserver</c>), through Microsoft.Data.SqlClient: each batch is one
/// transaction holding one <see cref="SqlBulkCopy"/> per kind, streamed from the batch's lists by
/// <see cref="ReadingRowSource"/>, and the dead letters. Duplicates are dropped by the tables' primary keys
/// (<c>IGNORE_DUP_KEY = ON</c>, see <see cref="SqlServerSchema"/>). Every call opens its own pooled connection,
/// so writers run in parallel (writes and reads from two pools, each with its maximum: <see cref="ConnectionBudget"/>). The process must not run in globalization-invariant mode (see
/// <see cref="InvariantGlobalizationMessage"/>).
/// </summary>
public sealed partial class SqlServerReadingStore : BulkCopyReadingDatabase
{
    /// <summary>SQL Server's message for a row dropped by IGNORE_DUP_KEY: "Duplicate key was ignored." (severity 10).</summary>
    internal const int DuplicateKeyIgnored = 3604;

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
    private readonly SqlServerDataSource _source;
    private readonly SqlServerDataSource _queries;
    private readonly string _server;
    private readonly string _database;
    private readonly SqlServerSchema _schema;

    public SqlServerReadingStore(StorageOptions options, ILogger<SqlServerReadingStore> logger)
        : base(options, "SQL Server")
    {
        ArgumentNullException.ThrowIfNull(logger);
        if (!Enum.IsDefined(options.KeyStrategy))
        {
            throw new ArgumentException("Storage:KeyStrategy must be natural, guid or sequential-guid.", nameof(options));
        }

        if (options.CommandTimeoutSeconds is < 1 or > 3600)
        {
            throw new ArgumentException($"Storage:CommandTimeoutSeconds must be between 1 and 3600 (was {options.CommandTimeoutSeconds}).", nameof(options));
        }

        _logger = logger;
        _schema = new SqlServerSchema(options.SqlServer);

        // Parsing here turns a malformed connection string into an error at start, not at the first batch. Two pools,
        // each with its maximum (ConnectionBudget): the writers' (and registration's) and the queries'.
        var builder = ConnectionBudget.SqlServer(options, ConnectionPool.Writes);
        _source = new SqlServerDataSource(builder.ConnectionString);
        _queries = new SqlServerDataSource(ConnectionBudget.SqlServer(options, ConnectionPool.Queries).ConnectionString);
        _server = builder.DataSource;
        _database = builder.InitialCatalog;
    }

    public override StorageProvider Provider => StorageProvider.SqlServer;

    /// <summary><c>SQL Server database NAME on SERVER</c>: the connection string's database and server, never its credentials.</summary>
    public override string Describe() =>
        $"SQL Server database {(_database.Length == 0 ? "(the login's default)" : _database)} on {(_server.Length == 0 ? "(local)" : _server)}";

    /// <summary>
    /// One MERGE ... WITH (HOLDLOCK) for the whole batch, its rows read from one JSON parameter (OPENJSON: one statement
    /// whatever the batch size, well clear of SQL Server's 2,100 parameters), then the ids of every serial in it. The
    /// key-range locks make a concurrent registration of the same serial wait and then find the row, so both callers get
    /// the same id. A unique violation (2627, 2601) can still surface if the table is written outside Saito without that
    /// lock; the batch is then run again and finds the rows. An announcement overwrites what it states and keeps what it
    /// leaves out.
    /// </summary>
    private protected override async Task<IReadOnlyDictionary<string, RegisteredDevice>> RegisterDistinctAsync(
        IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken)
    {
        string json = RegistrationJson(devices);
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                await using var connection = await OpenWriterAsync(cancellationToken);
                await using var command = (SqlCommand)Command(connection, RegisterSql);
                command.Parameters.Add(new SqlParameter("@devices", SqlDbType.NVarChar, -1) { Value = json });
                var registered = new Dictionary<string, RegisteredDevice>(devices.Count, StringComparer.Ordinal);
                await using var reader = await command.ExecuteReaderAsync(cancellationToken);
                while (await reader.ReadAsync(cancellationToken))
                {
                    registered[reader.GetString(0)] = new RegisteredDevice(reader.GetInt32(1), await reader.IsDBNullAsync(2, cancellationToken) ? null : reader.GetString(2));
                }

                return registered;
            }
            catch (SqlException ex) when (attempt < 3 && SqlServerErrors.IsUniqueViolation(ex))
            {
                LogRegisterRace(devices.Count, attempt);
            }
        }
    }

    /// <summary>
    /// The batch as the JSON array <see cref="RegisterSql"/> reads: <c>{"s": serial, "x": 1 for a hello, "k", "c", "f", "h"}</c>
    /// (<c>h</c>: the hub a new row gets, <see cref="DeviceRegistration.NewHub"/>; only a hello's changes an existing row).
    /// A serial longer than its column is refused here, before any round trip; a hello's texts are cut to their columns.
    /// </summary>
    internal static string RegistrationJson(IReadOnlyList<DeviceRegistration> devices)
    {
        var buffer = new System.Buffers.ArrayBufferWriter<byte>();
        using (var json = new System.Text.Json.Utf8JsonWriter(buffer))
        {
            json.WriteStartArray();
            foreach (var device in devices)
            {
                var (serial, announcement, _) = device;
                ArgumentException.ThrowIfNullOrEmpty(serial);
                if (serial.Length > SqlServerSchema.SerialLength)
                {
                    throw new ArgumentException($"A serial has at most {SqlServerSchema.SerialLength} characters (was {serial.Length}).", nameof(devices));
                }

                json.WriteStartObject();
                json.WriteString("s", serial);
                if (announcement is not null)
                {
                    json.WriteNumber("x", 1);
                    WriteText(json, "k", announcement.Kind, SqlServerSchema.DeviceKindLength);
                    if (announcement.Channels is { } channels)
                    {
                        json.WriteNumber("c", channels);
                    }

                    WriteText(json, "f", announcement.Firmware, SqlServerSchema.FirmwareLength);
                }

                WriteText(json, "h", device.NewHub, SqlServerSchema.HubLength);

                json.WriteEndObject();
            }

            json.WriteEndArray();
        }

        return System.Text.Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    private static void WriteText(System.Text.Json.Utf8JsonWriter json, string name, string? value, int length)
    {
        if (value is not null)
        {
            json.WriteString(name, value.Length <= length ? value : value[..length]);
        }
    }

    /// <summary>
    /// The registration of a batch: MERGE from OPENJSON (SQL Server 2016 and later, database compatibility level 130), then
    /// the batch's ids. The serial from JSON takes the column's binary collation, so serials differing only in case stay
    /// different devices.
    /// </summary>
    internal static string RegisterSql { get; } =
        $"""
        SET NOCOUNT ON;
        MERGE {SqlServerSql.Table(ReadingTables.DeviceTable)} WITH (HOLDLOCK) AS d
        USING (
            SELECT j.[serial] COLLATE {SqlServerSchema.SerialCollation} AS [serial], j.[hello], j.[kind], j.[channels], j.[firmware], j.[hub]
            FROM OPENJSON(@devices) WITH (
                [serial] nvarchar({SqlServerSchema.SerialLength}) '$.s',
                [hello] bit '$.x',
                [kind] nvarchar({SqlServerSchema.DeviceKindLength}) '$.k',
                [channels] int '$.c',
                [firmware] nvarchar({SqlServerSchema.FirmwareLength}) '$.f',
                [hub] nvarchar({SqlServerSchema.HubLength}) '$.h') AS j
        ) AS s
            ON d.[serial] = s.[serial]
        WHEN MATCHED AND s.[hello] = 1 THEN
            UPDATE SET d.[kind] = COALESCE(s.[kind], d.[kind]),
                       d.[channels] = COALESCE(s.[channels], d.[channels]),
                       d.[firmware] = COALESCE(s.[firmware], d.[firmware]),
                       d.[hub] = COALESCE(s.[hub], d.[hub]),
                       d.[last_hello] = SYSUTCDATETIME()
        WHEN NOT MATCHED BY TARGET THEN
            INSERT ([serial], [kind], [channels], [firmware], [hub], [first_seen], [last_hello])
            VALUES (s.[serial], s.[kind], s.[channels], s.[firmware], s.[hub], SYSUTCDATETIME(), CASE WHEN s.[hello] = 1 THEN SYSUTCDATETIME() END);
        SELECT d.[serial], d.[id], d.[hub]
        FROM {SqlServerSql.Table(ReadingTables.DeviceTable)} AS d
        WHERE d.[serial] IN (
            SELECT j.[serial] COLLATE {SqlServerSchema.SerialCollation}
            FROM OPENJSON(@devices) WITH ([serial] nvarchar({SqlServerSchema.SerialLength}) '$.s') AS j);
        """;

    /// <inheritdoc cref="SqlServerErrors.IsTransient(Exception?)"/>
    public override bool IsTransient(Exception exception) => SqlServerErrors.IsTransient(exception);

    /// <inheritdoc cref="SqlServerErrors.StorageFullNumbers"/>
    public override bool IsStorageOutage(Exception exception) => SqlServerErrors.IsStorageOutage(exception);

    /// <summary>Closes idle connections of every SqlClient pool (writes, queries, registry: each pool is a connection string).</summary>
    public override void ConnectionsLost() => Microsoft.Data.SqlClient.SqlConnection.ClearAllPools();

    /// <summary>Little to release: connections go back to SqlClient's pools when each call ends.</summary>
    private protected override async ValueTask DisposeCoreAsync()
    {
        await _source.DisposeAsync();
        await _queries.DisposeAsync();
    }

    private protected override DbDataSource Source(StorageTier tier) => _queries;

    private protected override async ValueTask<DbConnection> OpenWriterAsync(CancellationToken cancellationToken) =>
        await _source.OpenConnectionAsync(cancellationToken);

    private protected override string Table(string name) => SqlServerSql.Table(name);

    private protected override string Column(string name) => SqlServerSql.Quote(name);

    private protected override string End => ";";

    /// <summary>COUNT_BIG: SQL Server's count(*) is an int.</summary>
    private protected override string CountAll => "COUNT_BIG(*)";

    private protected override string Top(string limit) => $"TOP ({limit}) ";

    private protected override string Limit(string limit) => string.Empty;

    /// <summary>datetime2 comes back unspecified; Saito stores UTC.</summary>
    private protected override DateTime ReadTime(DbDataReader reader, int ordinal) => DateTime.SpecifyKind(reader.GetDateTime(ordinal), DateTimeKind.Utc);

    /// <summary>An open connection, or none left behind: the store's and the archive engine's way in.</summary>
    internal static Task<SqlConnection> OpenConnectionAsync(string connectionString, CancellationToken cancellationToken) =>
        SqlServerDataSource.OpenConnectionAsync(connectionString, cancellationToken);

    [LoggerMessage(4302, LogLevel.Debug, "{Count} device(s) registered concurrently by another writer (attempt {Attempt}); registering them again")]
    private partial void LogRegisterRace(int count, int attempt);
}

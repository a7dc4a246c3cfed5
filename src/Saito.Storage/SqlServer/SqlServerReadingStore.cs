using System.Data;
using System.Data.Common;
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
    private readonly string _server;
    private readonly string _database;
    private readonly SqlServerSchema _schema;

    public SqlServerReadingStore(StorageOptions options, ILogger<SqlServerReadingStore> logger)
        : base(options)
    {
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
        _schema = new SqlServerSchema(options.SqlServer);

        // Parsing here turns a malformed connection string into an error at start, not at the first batch.
        var builder = new SqlConnectionStringBuilder(options.ConnectionString);
        if (!builder.ShouldSerialize("Application Name"))
        {
            builder.ApplicationName = "Saito";
        }

        _source = new SqlServerDataSource(builder.ConnectionString);
        _server = builder.DataSource;
        _database = builder.InitialCatalog;
    }

    public override StorageProvider Provider => StorageProvider.SqlServer;

    /// <summary><c>SQL Server database NAME on SERVER</c>: the connection string's database and server, never its credentials.</summary>
    public override string Describe() =>
        $"SQL Server database {(_database.Length == 0 ? "(the login's default)" : _database)} on {(_server.Length == 0 ? "(local)" : _server)}";

    /// <summary>
    /// One MERGE ... WITH (HOLDLOCK): the key-range lock on the serial makes a concurrent registration of the same
    /// serial wait and then find the row, so both callers get the same id. A unique violation (2627, 2601) can still
    /// surface if the table is written outside Saito without that lock; the statement is then run again and finds
    /// the row. An announcement overwrites what it states and keeps what it leaves out.
    /// </summary>
    public override async Task<int> RegisterDeviceAsync(string serial, DeviceAnnouncement? announcement, CancellationToken cancellationToken)
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
                await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
                await using var command = (SqlCommand)Command(connection, RegisterSql);
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

    private static SqlParameter Text(string name, string? value, int length) =>
        new(name, SqlDbType.NVarChar, length) { Value = value is null ? DBNull.Value : value.Length <= length ? value : value[..length] };

    /// <inheritdoc cref="SqlServerErrors.IsTransient(Exception?)"/>
    public override bool IsTransient(Exception exception) => SqlServerErrors.IsTransient(exception);

    /// <summary>Little to release: connections go back to SqlClient's pool when each call ends.</summary>
    public override ValueTask DisposeAsync() => _source.DisposeAsync();

    private protected override DbDataSource Source(StorageTier tier) => _source;

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

    [LoggerMessage(3102, LogLevel.Debug, "Device {Serial} registered concurrently (attempt {Attempt}); reading its id again")]
    private partial void LogRegisterRace(string serial, int attempt);
}

using Microsoft.Data.SqlClient;
using Saito.Archiver.Tests.Contract;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Readings;
using Saito.Storage.Keys;

namespace Saito.Archiver.Tests.SqlServer;

/// <summary>
/// The archiver's contract on SQL Server, when <c>SAITO_TEST_SQLSERVER</c> holds a connection string whose login may
/// CREATE DATABASE; otherwise every test is reported as skipped, with the reason.
/// </summary>
public sealed class SqlServerArchiverTests : ArchiverContractTests
{
    public const string SkipReason =
        "SAITO_TEST_SQLSERVER is not set: no SQL Server on this machine; set it to a connection string with CREATE DATABASE rights to run these";

    protected override bool DeleteCommitsWithDone => true;

    protected override async Task<ArchiveTestStorage> CreateStorageAsync(KeyStrategy keys)
    {
        string? server = Environment.GetEnvironmentVariable("SAITO_TEST_SQLSERVER");
        if (string.IsNullOrEmpty(server))
        {
            Assert.Skip(SkipReason);
        }

        return await SqlServerArchiveTestStorage.CreateAsync(server, keys);
    }

    /// <summary>As on PostgreSQL, sampling <c>sys.dm_exec_sessions</c> for the run's database.</summary>
    [Theory]
    [InlineData(1)]
    [InlineData(6)]
    public async Task A_run_never_holds_more_connections_than_its_workers_plus_three(int threads)
    {
        await using var storage = (SqlServerArchiveTestStorage)await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var sampler = new SqlConnection(new SqlConnectionStringBuilder(storage.ServerConnectionString) { InitialCatalog = "master", Pooling = false }.ConnectionString);
        await sampler.OpenAsync(Token);
        await using var count = new SqlCommand(
            "SELECT count(*) FROM sys.dm_exec_sessions WHERE database_id = DB_ID(@database) AND program_name = 'saito-archiver'", sampler);
        count.Parameters.AddWithValue("@database", storage.Database);
        await ShouldStayWithinItsConnectionsAsync(storage, threads, async () => (int)(await count.ExecuteScalarAsync(Token))!);
    }
}

/// <summary>A database of its own for one test on the SAITO_TEST_SQLSERVER server, dropped afterwards.</summary>
public sealed class SqlServerArchiveTestStorage : ArchiveTestStorage
{
    private readonly string _server;
    private readonly string _database;

    private SqlServerArchiveTestStorage(string server, KeyStrategy keys) : base(keys)
    {
        _server = server;
        _database = $"saito_archiver_test_{Guid.NewGuid():N}";
    }

    private string ConnectionString => new SqlConnectionStringBuilder(_server) { InitialCatalog = _database }.ConnectionString;

    /// <summary>The SAITO_TEST_SQLSERVER connection string this storage's database is on.</summary>
    public string ServerConnectionString => _server;

    /// <summary>This test's database.</summary>
    public string Database => _database;

    public static async Task<SqlServerArchiveTestStorage> CreateAsync(string server, KeyStrategy keys)
    {
        var storage = new SqlServerArchiveTestStorage(server, keys);
        await storage.ExecuteOnServerAsync($"CREATE DATABASE [{storage._database}]");
        await storage.InitializeAsync();
        return storage;
    }

    private async Task ExecuteOnServerAsync(string sql)
    {
        await using var connection = new SqlConnection(new SqlConnectionStringBuilder(_server) { InitialCatalog = "master" }.ConnectionString);
        await connection.OpenAsync();
        await using var command = new SqlCommand(sql, connection);
        await command.ExecuteNonQueryAsync();
    }

    public override async Task CreateTableLikeAsync(string name, string like)
    {
        await using var connection = new SqlConnection(ConnectionString);
        await connection.OpenAsync();
        await using var command = new SqlCommand($"SELECT TOP (0) * INTO [dbo].[{name}] FROM [dbo].[{like}]", connection);
        await command.ExecuteNonQueryAsync();
    }

    public override async Task LoseArchiveTierAsync()
    {
        await using var connection = new SqlConnection(ConnectionString);
        await connection.OpenAsync();
        var tables = Storage.Schema.SchemaScript.KeyStrategies
            .SelectMany(keys => ReadingKinds.All.Select(kind => ReadingTables.TableName(kind, keys, StorageTier.Archive)))
            .Append("archive_journal");
        await using var command = new SqlCommand($"DROP TABLE IF EXISTS {string.Join(", ", tables.Select(t => $"[dbo].[{t}]"))}", connection);
        await command.ExecuteNonQueryAsync();
    }

    public override StorageOptions Options() => new()
    {
        Provider = StorageProvider.SqlServer,
        ConnectionString = ConnectionString,
        KeyStrategy = Keys,
        ArchivePath = Path.Combine(Folder, "archive"),
    };

    public override IReadOnlyList<string> Settings() =>
    [
        "Storage:Provider=sqlserver",
        $"Storage:ConnectionString={ConnectionString}",
        $"Storage:KeyStrategy={SqliteArchiveTestStorage.SchemaName(Keys)}",
        $"Storage:ArchivePath={Path.Combine(Folder, "archive")}",
    ];

    public override async ValueTask DisposeAsync()
    {
        await base.DisposeAsync();
        SqlConnection.ClearAllPools();
        await ExecuteOnServerAsync($"ALTER DATABASE [{_database}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [{_database}]");
    }
}

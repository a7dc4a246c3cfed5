using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// Where the SQL Server tests find a server: <c>SAITO_TEST_SQLSERVER</c>, a connection string whose login may
/// CREATE DATABASE. No SQL Server can run on the development machines (no engine package, no Docker), so when
/// it is unset every test that needs a server is reported as skipped, with <see cref="SkipReason"/>.
/// </summary>
internal static class SqlServerTestServer
{
    public const string Variable = "SAITO_TEST_SQLSERVER";

    public const string SkipReason =
        "SAITO_TEST_SQLSERVER is not set: no SQL Server on this machine; set it to a connection string with CREATE DATABASE rights to run these";

    public static string? ConnectionString =>
        Environment.GetEnvironmentVariable(Variable) is { Length: > 0 } value ? value : null;

    /// <summary>The server's connection string, or skips the calling test (xUnit v3 reports it as skipped, with the reason).</summary>
    public static string Require()
    {
        string? connectionString = ConnectionString;
        if (connectionString is null)
        {
            Assert.Skip(SkipReason);
        }

        if (SqlServerReadingStore.GlobalizationInvariant.Value)
        {
            // A server is configured, so this is a failure, not a skip: SqlClient cannot connect from this process.
            throw new InvalidOperationException(
                $"{Variable} is set, but this test process runs in globalization-invariant mode (Directory.Build.props). " +
                SqlServerReadingStore.InvariantGlobalizationMessage + " For these tests that project is tests/Saito.Storage.Tests.");
        }

        return connectionString;
    }
}

/// <summary>
/// A database of its own for one test, created empty on the server and dropped afterwards, so no test sees
/// another's rows (state is fresh at the start of each test, whatever the last run left).
/// </summary>
internal sealed class SqlServerTestDatabase : IAsyncDisposable
{
    private readonly string _serverConnectionString;

    private SqlServerTestDatabase(string serverConnectionString, string name, string connectionString)
    {
        _serverConnectionString = serverConnectionString;
        Name = name;
        ConnectionString = connectionString;
    }

    public string Name { get; }

    public string ConnectionString { get; }

    /// <summary>Skips the test when no server is configured; otherwise creates <c>saito_test_&lt;guid&gt;</c>.</summary>
    public static async Task<SqlServerTestDatabase> CreateAsync()
    {
        string server = SqlServerTestServer.Require();
        string name = "saito_test_" + Guid.NewGuid().ToString("N");
        await using (var connection = new SqlConnection(server))
        {
            await connection.OpenAsync(TestContext.Current.CancellationToken);
            await using var command = new SqlCommand($"CREATE DATABASE [{name}];", connection) { CommandTimeout = 300 };
            await command.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        var builder = new SqlConnectionStringBuilder(server) { InitialCatalog = name };
        return new SqlServerTestDatabase(server, name, builder.ConnectionString);
    }

    public StorageOptions Options(KeyStrategy keys = KeyStrategy.Natural, Action<SqlServerStorageOptions>? sqlServer = null)
    {
        var options = new StorageOptions
        {
            Provider = StorageProvider.SqlServer,
            ConnectionString = ConnectionString,
            KeyStrategy = keys,
        };
        sqlServer?.Invoke(options.SqlServer);
        return options;
    }

    public SqlServerReadingStore Store(KeyStrategy keys = KeyStrategy.Natural, Action<SqlServerStorageOptions>? sqlServer = null) =>
        new(Options(keys, sqlServer), NullLogger<SqlServerReadingStore>.Instance);

    public async Task<object?> ScalarAsync(string sql)
    {
        await using var connection = new SqlConnection(ConnectionString);
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        await using var command = new SqlCommand(sql, connection);
        return await command.ExecuteScalarAsync(TestContext.Current.CancellationToken);
    }

    public async Task ExecuteAsync(string sql)
    {
        await using var connection = new SqlConnection(ConnectionString);
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        await using var command = new SqlCommand(sql, connection);
        await command.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        // Pooled connections to the database would keep it in use.
        SqlConnection.ClearAllPools();
        await using var connection = new SqlConnection(_serverConnectionString);
        await connection.OpenAsync(CancellationToken.None);
        await using var command = new SqlCommand(
            $"""
            IF DB_ID(N'{Name}') IS NOT NULL
            BEGIN
                -- Azure SQL Database (edition 5) has no SINGLE_USER; it drops a database in use anyway.
                IF CAST(SERVERPROPERTY('EngineEdition') AS int) <> 5
                    ALTER DATABASE [{Name}] SET SINGLE_USER WITH ROLLBACK IMMEDIATE;
                DROP DATABASE [{Name}];
            END;
            """,
            connection) { CommandTimeout = 300 };
        await command.ExecuteNonQueryAsync(CancellationToken.None);
    }
}

using Npgsql;

namespace Saito.Testing;

/// <summary>
/// The PostgreSQL server the tests use: <c>SAITO_TEST_POSTGRES</c> (default <c>Host=127.0.0.1;Port=5432;Username=postgres</c>),
/// a role that may create databases and tablespaces. Each test gets a database of its own, dropped afterwards.
/// When the server cannot be reached every test fails with a message saying how to get one: never a silent pass.
/// </summary>
public sealed class PostgresServer : IAsyncLifetime
{
    public const string DefaultConnectionString = "Host=127.0.0.1;Port=5432;Username=postgres";

    private string? _unreachable;

    /// <summary>The server's connection string: <c>SAITO_TEST_POSTGRES</c>, read here and nowhere else.</summary>
    public static string ServerConnectionString { get; } =
        Environment.GetEnvironmentVariable("SAITO_TEST_POSTGRES") is { Length: > 0 } configured ? configured : DefaultConnectionString;

    public string ConnectionString { get; } = ServerConnectionString;

    /// <summary>The two tablespaces scripts/test.sh creates (<c>SAITO_TEST_PG_TABLESPACES</c>): hot, then archive.</summary>
    public static (string Hot, string Archive) Tablespaces
    {
        get
        {
            string? configured = Environment.GetEnvironmentVariable("SAITO_TEST_PG_TABLESPACES");
            string[] names = (configured ?? string.Empty).Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
            if (names.Length != 2)
            {
                throw new InvalidOperationException(
                    $"SAITO_TEST_PG_TABLESPACES must name two tablespaces of the test server, hot then archive (is '{configured}'). " +
                    "Run scripts/test.sh, which creates saito_test_fast and saito_test_slow, or create two and set the variable.");
            }

            return (names[0], names[1]);
        }
    }

    public async ValueTask InitializeAsync()
    {
        try
        {
            await using var connection = new NpgsqlConnection(Admin(timeoutSeconds: 5));
            await connection.OpenAsync(TestContext.Current.CancellationToken);
        }
        catch (Exception e) when (e is NpgsqlException or TimeoutException or InvalidOperationException or ArgumentException)
        {
            _unreachable =
                $"No PostgreSQL at '{Redacted()}' ({e.GetType().Name}: {e.Message}). Run scripts/test.sh, which starts a " +
                "throwaway cluster, or set SAITO_TEST_POSTGRES to a connection string of a server where the role may create " +
                "databases (and SAITO_TEST_PG_TABLESPACES to two of its tablespaces).";
        }
    }

    public ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <summary>A new, empty database; its connection string.</summary>
    public async Task<(string Name, string ConnectionString)> CreateDatabaseAsync()
    {
        if (_unreachable is not null)
        {
            throw new InvalidOperationException(_unreachable);
        }

        string name = $"saito_test_{DateTime.UtcNow:MMddHHmmss}_{Guid.NewGuid().ToString("N")[..8]}";
        await PostgresDatabases.CreateAsync(Admin(timeoutSeconds: 15), name);
        return (name, new NpgsqlConnectionStringBuilder(ConnectionString) { Database = name }.ToString());
    }

    public Task DropDatabaseAsync(string name) => PostgresDatabases.DropAsync(Admin(timeoutSeconds: 15), name);

    /// <summary>Runs a statement in the maintenance database (postgres).</summary>
    public async Task ExecuteAsync(string sql)
    {
        await using var connection = new NpgsqlConnection(Admin(timeoutSeconds: 15));
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand(sql, connection);
        await command.ExecuteNonQueryAsync();
    }

    public async Task<object?> ScalarAsync(string sql)
    {
        await using var connection = new NpgsqlConnection(Admin(timeoutSeconds: 15));
        await connection.OpenAsync();
        await using var command = new NpgsqlCommand(sql, connection);
        return await command.ExecuteScalarAsync();
    }

    /// <summary>The host, when it is this machine (a tablespace directory can only be made for a local server).</summary>
    public bool IsLocal => new NpgsqlConnectionStringBuilder(ConnectionString).Host is "127.0.0.1" or "localhost" or "::1";

    private string Admin(int timeoutSeconds) =>
        new NpgsqlConnectionStringBuilder(ConnectionString) { Database = "postgres", Timeout = timeoutSeconds, Pooling = false }.ToString();

    private string Redacted()
    {
        var builder = new NpgsqlConnectionStringBuilder(ConnectionString);
        if (builder.Password is not null)
        {
            builder.Password = "***";
        }

        return builder.ToString();
    }
}

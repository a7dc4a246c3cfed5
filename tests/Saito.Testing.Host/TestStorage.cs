using Microsoft.Data.Sqlite;

namespace Saito.Testing;

/// <summary>A throwaway database for one test: its own SQLite folders, or its own PostgreSQL database.</summary>
public abstract class TestStorage : IAsyncDisposable
{
    /// <summary><c>Section:Key=value</c> settings that point Saito at this database.</summary>
    public abstract IReadOnlyList<string> Settings { get; }

    public abstract ValueTask DisposeAsync();
}

public sealed class SqliteTestStorage : TestStorage
{
    public SqliteTestStorage(string? keyStrategy = null)
    {
        Directory = System.IO.Directory.CreateTempSubdirectory("saito-test-").FullName;
        var settings = new List<string>
        {
            "Storage:Provider=sqlite",
            $"Storage:HotPath={HotPath}",
            $"Storage:ArchivePath={ArchivePath}",
        };
        if (keyStrategy is not null)
        {
            settings.Add($"Storage:KeyStrategy={keyStrategy}");
        }

        Settings = settings;
    }

    public string Directory { get; }
    public string HotPath => Path.Combine(Directory, "hot");
    public string ArchivePath => Path.Combine(Directory, "archive");
    public string HotFile => Path.Combine(HotPath, "saito-hot.db");

    public override IReadOnlyList<string> Settings { get; }

    public override ValueTask DisposeAsync()
    {
        SqliteConnection.ClearAllPools();
        try
        {
            System.IO.Directory.Delete(Directory, recursive: true);
        }
        catch (IOException)
        {
            // A server process killed by a test may still be releasing a file; the folder is in /tmp.
        }

        return ValueTask.CompletedTask;
    }
}

/// <summary>
/// A fresh database on the PostgreSQL server named by <c>SAITO_TEST_POSTGRES</c> (scripts/test.sh starts one),
/// dropped afterwards.
/// </summary>
public sealed class PostgresTestStorage : TestStorage
{
    private readonly Func<Task> _drop;

    private PostgresTestStorage(Func<Task> drop, string database, string connectionString)
    {
        _drop = drop;
        Database = database;
        ConnectionString = connectionString;
        Settings = ["Storage:Provider=postgres", $"Storage:ConnectionString={connectionString}"];
    }

    public string Database { get; }
    public string ConnectionString { get; }

    public override IReadOnlyList<string> Settings { get; }

    public static async Task<PostgresTestStorage> CreateAsync()
    {
        string admin = PostgresServer.ServerConnectionString;
        string database = "saito_it_" + Guid.NewGuid().ToString("N")[..12];
        string connectionString;
        try
        {
            connectionString = await PostgresDatabases.CreateAsync(admin, database);
        }
        catch (Exception ex) when (ex is Npgsql.NpgsqlException or System.Net.Sockets.SocketException)
        {
            throw new InvalidOperationException(
                $"No PostgreSQL at '{admin}' ({ex.Message}). Run scripts/test.sh (it installs and starts one) or set SAITO_TEST_POSTGRES.", ex);
        }

        return new PostgresTestStorage(() => PostgresDatabases.DropAsync(admin, database), database, connectionString);
    }

    /// <summary>A fresh database on <paramref name="server"/>, a test class's fixture that says plainly when it is unreachable.</summary>
    public static async Task<PostgresTestStorage> CreateAsync(PostgresServer server)
    {
        ArgumentNullException.ThrowIfNull(server);
        var (name, connectionString) = await server.CreateDatabaseAsync();
        return new PostgresTestStorage(() => server.DropDatabaseAsync(name), name, connectionString);
    }

    public override ValueTask DisposeAsync() => new(_drop());
}

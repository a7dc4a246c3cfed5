using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.Infrastructure;

/// <summary>
/// Empty storage for one test (a temporary folder for SQLite's two files and the exports, or a new PostgreSQL
/// database), with the schema made, a store that writes to it, and the same settings as command-line arguments
/// for the archiver process.
/// </summary>
public abstract class ArchiveTestStorage : IAsyncDisposable
{
    protected ArchiveTestStorage(KeyStrategy keys)
    {
        Keys = keys;
        Folder = Path.Combine(Path.GetTempPath(), $"saito-archiver-test-{Guid.NewGuid():N}");
        Directory.CreateDirectory(Folder);
    }

    public KeyStrategy Keys { get; }

    /// <summary>The test's own folder: exports go to <see cref="ExportDirectory"/> inside it.</summary>
    public string Folder { get; }

    public string ExportDirectory => Path.Combine(Folder, "exports");

    public IReadingStore Store { get; private set; } = null!;

    public abstract StorageOptions Options();

    /// <summary>The settings as <c>Section:Key=value</c>, for <c>--Section:Key=value</c> arguments.</summary>
    public abstract IReadOnlyList<string> Settings();

    protected async Task InitializeAsync()
    {
        Store = ReadingStores.Create(Options(), NullLoggerFactory.Instance);
        await Store.EnsureSchemaAsync(TestContext.Current.CancellationToken);
    }

    public Storage.Archive.Archiver CreateArchiver() => new(Options(), NullLoggerFactory.Instance);

    /// <summary>Creates a table with the columns and primary key of <paramref name="like"/> (in the archive tier's file or database).</summary>
    public abstract Task CreateTableLikeAsync(string name, string like);

    /// <summary>Registers devices 1..<paramref name="count"/> (serials test-00001..), as ingestion would on first sight: restore refuses ids the registry never gave out.</summary>
    public async Task RegisterDevicesAsync(int count)
    {
        var registered = await Store.RegisterDevicesAsync(
            Enumerable.Range(1, count).Select(i => new DeviceRegistration($"test-{i:D5}", null)).ToList(), TestContext.Current.CancellationToken);
        registered.Select(d => d.Id).ShouldBe(Enumerable.Range(1, count));
    }

    /// <summary>Makes the archive tier as if its storage were lost: SQLite deletes its file, PostgreSQL drops its tables and the journal.</summary>
    public abstract Task LoseArchiveTierAsync();

    public async Task WriteAsync(IEnumerable<Reading> readings)
    {
        foreach (var chunk in readings.Chunk(5000))
        {
            await Store.WriteAsync(TestReadings.Batch(chunk), TestContext.Current.CancellationToken);
        }
    }

    /// <summary>Every reading of a kind in one tier (devices <paramref name="devices"/>), in key order.</summary>
    public async Task<List<Reading>> ReadAllAsync(ReadingKind kind, StorageTier tier, IEnumerable<int> devices)
    {
        var all = new List<Reading>();
        foreach (int device in devices)
        {
            all.AddRange(await Store.ReadAsync(kind, tier, device, TestContext.Current.CancellationToken));
        }

        return all;
    }

    public virtual async ValueTask DisposeAsync()
    {
        await Store.DisposeAsync();
        try
        {
            Directory.Delete(Folder, recursive: true);
        }
        catch (IOException)
        {
            // A file still open by a process a test killed: left for the temp cleaner.
        }

        GC.SuppressFinalize(this);
    }
}

public sealed class SqliteArchiveTestStorage : ArchiveTestStorage
{
    private SqliteArchiveTestStorage(KeyStrategy keys) : base(keys)
    {
    }

    public static async Task<SqliteArchiveTestStorage> CreateAsync(KeyStrategy keys)
    {
        var storage = new SqliteArchiveTestStorage(keys);
        await storage.InitializeAsync();
        return storage;
    }

    public override StorageOptions Options() => new()
    {
        Provider = StorageProvider.Sqlite,
        HotPath = Path.Combine(Folder, "hot"),
        ArchivePath = Path.Combine(Folder, "archive"),
        KeyStrategy = Keys,
        Sqlite = { Synchronous = SqliteSynchronous.Normal },
    };

    public override IReadOnlyList<string> Settings() =>
    [
        "Storage:Provider=sqlite",
        $"Storage:HotPath={Path.Combine(Folder, "hot")}",
        $"Storage:ArchivePath={Path.Combine(Folder, "archive")}",
        $"Storage:KeyStrategy={SchemaName(Keys)}",
        "Storage:Sqlite:Synchronous=normal",
    ];

    public override async Task CreateTableLikeAsync(string name, string like)
    {
        await using var connection = new Microsoft.Data.Sqlite.SqliteConnection(
            $"Data Source={Path.Combine(Folder, "archive", Storage.Sqlite.SqliteSchema.ArchiveFileName)};Pooling=False");
        await connection.OpenAsync();
        await using var read = connection.CreateCommand();
        read.CommandText = "SELECT sql FROM sqlite_schema WHERE name = $like";
        read.Parameters.AddWithValue("$like", like);
        string ddl = (string)(await read.ExecuteScalarAsync())!;
        await using var create = connection.CreateCommand();
        create.CommandText = ddl.Replace($"CREATE TABLE {like}", $"CREATE TABLE {name}", StringComparison.Ordinal);
        await create.ExecuteNonQueryAsync();
    }

    public override Task LoseArchiveTierAsync()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        foreach (string suffix in new[] { string.Empty, "-wal", "-shm" })
        {
            File.Delete(Path.Combine(Folder, "archive", Storage.Sqlite.SqliteSchema.ArchiveFileName + suffix));
        }

        return Task.CompletedTask;
    }

    internal static string SchemaName(KeyStrategy keys) => Storage.Schema.SchemaScript.KeyStrategyName(keys);
}

public sealed class PostgresArchiveTestStorage : ArchiveTestStorage
{
    private readonly PostgresServer _server;
    private string _database = string.Empty;
    private string _connectionString = string.Empty;

    private PostgresArchiveTestStorage(PostgresServer server, KeyStrategy keys) : base(keys)
    {
        _server = server;
    }

    public static async Task<PostgresArchiveTestStorage> CreateAsync(PostgresServer server, KeyStrategy keys)
    {
        var storage = new PostgresArchiveTestStorage(server, keys);
        (storage._database, storage._connectionString) = await server.CreateDatabaseAsync();
        await storage.InitializeAsync();
        return storage;
    }

    /// <summary>The test's own database (its name in <c>pg_stat_activity</c>).</summary>
    public string Database => _database;

    /// <summary>A connection string to the test's own database.</summary>
    public string ConnectionString => _connectionString;

    public override StorageOptions Options() => new()
    {
        Provider = StorageProvider.Postgres,
        ConnectionString = _connectionString,
        KeyStrategy = Keys,
        ArchivePath = Path.Combine(Folder, "archive"),
    };

    public override IReadOnlyList<string> Settings() =>
    [
        "Storage:Provider=postgres",
        $"Storage:ConnectionString={_connectionString}",
        $"Storage:KeyStrategy={SqliteArchiveTestStorage.SchemaName(Keys)}",
        $"Storage:ArchivePath={Path.Combine(Folder, "archive")}",
    ];

    public override async Task CreateTableLikeAsync(string name, string like)
    {
        await using var connection = new Npgsql.NpgsqlConnection(_connectionString);
        await connection.OpenAsync();
        await using var command = new Npgsql.NpgsqlCommand($"CREATE TABLE {name} (LIKE {like} INCLUDING ALL)", connection);
        await command.ExecuteNonQueryAsync();
    }

    public override async Task LoseArchiveTierAsync()
    {
        await using var connection = new Npgsql.NpgsqlConnection(_connectionString);
        await connection.OpenAsync();
        var tables = Storage.Schema.SchemaScript.KeyStrategies
            .SelectMany(keys => ReadingKinds.All.Select(kind => ReadingTables.TableName(kind, keys, StorageTier.Archive)))
            .Append("archive_journal");
        await using var command = new Npgsql.NpgsqlCommand($"DROP TABLE IF EXISTS {string.Join(", ", tables)}", connection);
        await command.ExecuteNonQueryAsync();
    }

    public override async ValueTask DisposeAsync()
    {
        await base.DisposeAsync();
        await _server.DropDatabaseAsync(_database);
    }
}

using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Infrastructure;

/// <summary>
/// A fresh registry database for one test, on a real engine: a SQLite file in a temporary folder, or a new
/// PostgreSQL database on the test server. The storage schema is created first (the registry references its device
/// table), then the registry's migrations are applied, as Saito does on start.
/// </summary>
public sealed class TestRegistryDatabase : IAsyncDisposable
{
    private readonly Func<Task> _drop;

    private TestRegistryDatabase(StorageOptions storage, Func<Task> drop)
    {
        Storage = storage;
        Contexts = new RegistryContextFactory(Options.Create(storage));
        _drop = drop;
    }

    public StorageOptions Storage { get; }

    public RegistryContextFactory Contexts { get; }

    public RegistryDbContext Open() => Contexts.Create();

    /// <summary>An empty database of <paramref name="provider"/> with nothing created yet.</summary>
    public static async Task<TestRegistryDatabase> CreateEmptyAsync(StorageProvider provider, PostgresServer? postgres)
    {
        if (provider == StorageProvider.Postgres)
        {
            ArgumentNullException.ThrowIfNull(postgres);
            var (name, connectionString) = await postgres.CreateDatabaseAsync();
            return new TestRegistryDatabase(new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = connectionString }, () => postgres.DropDatabaseAsync(name));
        }

        string folder = Directory.CreateTempSubdirectory("saito-registry-").FullName;
        var storage = new StorageOptions { Provider = StorageProvider.Sqlite, HotPath = Path.Combine(folder, "hot"), ArchivePath = Path.Combine(folder, "archive") };
        return new TestRegistryDatabase(storage, () =>
        {
            Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
            Directory.Delete(folder, recursive: true);
            return Task.CompletedTask;
        });
    }

    /// <summary>A database as Saito leaves it after start: storage schema, then the registry's migrations.</summary>
    public static async Task<TestRegistryDatabase> CreateAsync(StorageProvider provider, PostgresServer? postgres)
    {
        var database = await CreateEmptyAsync(provider, postgres);
        await database.CreateStorageSchemaAsync();
        await RegistryMigrator.MigrateAsync(database.Contexts, TestContext.Current.CancellationToken);
        return database;
    }

    public async Task CreateStorageSchemaAsync()
    {
        await using var store = ReadingStores.Create(Storage, NullLoggerFactory.Instance);
        await store.EnsureSchemaAsync(TestContext.Current.CancellationToken);
    }

    /// <summary>Registers a device the way ingestion does on first sight; its id.</summary>
    public async Task<int> RegisterDeviceAsync(string serial)
    {
        await using var store = ReadingStores.Create(Storage, NullLoggerFactory.Instance);
        return await store.RegisterDeviceAsync(serial, null, TestContext.Current.CancellationToken);
    }

    public async ValueTask DisposeAsync() => await _drop();
}

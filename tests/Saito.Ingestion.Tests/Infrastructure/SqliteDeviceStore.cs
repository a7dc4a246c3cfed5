using System.Diagnostics.Metrics;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Ingestion.Pipeline;
using Saito.Storage;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// A real SQLite store with its schema, behind the retry ingestion puts around it: for the tests of what registers
/// devices and keeps their hubs, without a host.
/// </summary>
internal sealed class SqliteDeviceStore : IAsyncDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();

    private SqliteDeviceStore(StorageOptions options)
    {
        options.HotPath = Storage.HotPath;
        options.ArchivePath = Storage.ArchivePath;
        Store = ReadingStores.Create(options, NullLoggerFactory.Instance);
        Resilience = new StorageResilience(Store, new StorageHealth(), new IngestionMetrics(_services.GetRequiredService<IMeterFactory>()),
            TimeProvider.System, NullLogger<StorageResilience>.Instance);
    }

    public SqliteTestStorage Storage { get; } = new();

    public IReadingStore Store { get; }

    public StorageResilience Resilience { get; }

    /// <param name="options">settings beside the store's paths (a short busy timeout, say)</param>
    /// <param name="cancellationToken">the test's</param>
    public static async Task<SqliteDeviceStore> CreateAsync(StorageOptions options, CancellationToken cancellationToken)
    {
        var store = new SqliteDeviceStore(options);
        await store.Store.EnsureSchemaAsync(cancellationToken);
        return store;
    }

    /// <summary>The devices' hubs as one Saito keeps them, read again every <paramref name="recheckSeconds"/>.</summary>
    public DeviceHubs NewHubs(int recheckSeconds) =>
        new(Store, Resilience, options: Microsoft.Extensions.Options.Options.Create(new IngestionOptions { DeviceHubRecheckSeconds = recheckSeconds }));

    /// <summary>One statement on a connection of its own (as another Saito sharing the database, or a person): the rows it changed.</summary>
    public async Task<int> ExecuteAsync(string sql, CancellationToken cancellationToken)
    {
        await using var connection = new SqliteConnection($"Data Source={Storage.HotFile};Pooling=False");
        await connection.OpenAsync(cancellationToken);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        return await command.ExecuteNonQueryAsync(cancellationToken);
    }

    public async ValueTask DisposeAsync()
    {
        await Store.DisposeAsync();
        await _services.DisposeAsync();
        await Storage.DisposeAsync();
    }
}

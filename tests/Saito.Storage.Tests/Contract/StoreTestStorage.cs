using System.Data.Common;
using Saito.Storage.Keys;

namespace Saito.Storage.Tests.Contract;

/// <summary>
/// Empty storage made for one test (a temporary folder, a new database), and stores over it. A subclass of
/// <see cref="ReadingStoreContractTests"/> makes one per test; disposing it removes what it made.
/// </summary>
public abstract class StoreTestStorage : IAsyncDisposable
{
    /// <summary>Options for a store over this storage, keyed by <paramref name="keys"/> (a new object each call).</summary>
    public abstract StorageOptions Options(KeyStrategy keys);

    /// <summary>A new store over this storage; several may exist at once, as several Saito processes would.</summary>
    public IReadingStore CreateStore(KeyStrategy keys) => CreateStore(Options(keys));

    public abstract IReadingStore CreateStore(StorageOptions options);

    /// <summary>An open connection to where the tier's tables live, for checks the store's interface does not offer.</summary>
    public abstract Task<DbConnection> OpenConnectionAsync(StorageTier tier, CancellationToken cancellationToken);

    /// <summary>The tables (not views) that exist, across both tiers; none before the schema is made.</summary>
    public abstract Task<IReadOnlySet<string>> TableNamesAsync(CancellationToken cancellationToken);

    public abstract ValueTask DisposeAsync();
}

namespace Saito.Storage.Tests.Contract;

/// <summary>The stores and storages one test made, disposed at its end: every store first, then the storage under them.</summary>
public sealed class TrackedStores : IAsyncDisposable
{
    private readonly List<StoreTestStorage> _storages = [];
    private readonly List<IReadingStore> _stores = [];

    public StoreTestStorage Add(StoreTestStorage storage)
    {
        _storages.Add(storage);
        return storage;
    }

    public IReadingStore Add(IReadingStore store)
    {
        _stores.Add(store);
        return store;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var store in _stores)
        {
            await store.DisposeAsync();
        }

        foreach (var storage in _storages)
        {
            await storage.DisposeAsync();
        }
    }
}

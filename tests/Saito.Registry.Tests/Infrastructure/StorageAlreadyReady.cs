using Saito.Storage;

namespace Saito.Registry.Tests.Infrastructure;

/// <summary>The storage schema is already there (the test database made it), so the migrator need not wait.</summary>
internal sealed class StorageAlreadyReady : IStorageReady
{
    public Task WaitAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}

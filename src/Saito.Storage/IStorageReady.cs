namespace Saito.Storage;

/// <summary>
/// What waits for the database's start-up step (schema created, devices loaded) without depending on the pipeline
/// that runs it: the registry, whose tables reference the device table. Saito.Ingestion's <c>StorageStartup</c> is it.
/// </summary>
public interface IStorageReady
{
    /// <summary>Completes when the schema exists and the devices are loaded; throws what made that fail.</summary>
    Task WaitAsync(CancellationToken cancellationToken);
}

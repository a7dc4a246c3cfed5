using Microsoft.Extensions.Logging;

namespace Saito.Storage;

/// <summary>Makes the store <c>Storage:Provider</c> names (<see cref="StorageProviders"/>).</summary>
public static class ReadingStores
{
    public static IReadingStore Create(StorageOptions options, ILoggerFactory loggerFactory)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        return StorageProviders.TryGet(options.Provider, out var registration)
            ? registration.Store(options, loggerFactory)
            : throw new ArgumentOutOfRangeException(nameof(options), options.Provider, "Unknown Storage:Provider");
    }
}

using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;
using Saito.Storage.Sqlite;
using Saito.Storage.SqlServer;

namespace Saito.Storage;

/// <summary>Makes the store <c>Storage:Provider</c> names.</summary>
public static class ReadingStores
{
    public static IReadingStore Create(StorageOptions options, ILoggerFactory loggerFactory)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        return options.Provider switch
        {
            StorageProvider.Sqlite => new SqliteReadingStore(options, loggerFactory.CreateLogger<SqliteReadingStore>()),
            StorageProvider.Postgres => new PostgresReadingStore(options, loggerFactory.CreateLogger<PostgresReadingStore>()),
            StorageProvider.SqlServer => new SqlServerReadingStore(options, loggerFactory.CreateLogger<SqlServerReadingStore>()),
            _ => throw new ArgumentOutOfRangeException(nameof(options), options.Provider, "Unknown Storage:Provider"),
        };
    }
}

using Microsoft.Data.Sqlite;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Data;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;

namespace Saito.Registry.Hosting;

/// <summary>
/// The registry's database is the hot-tier database Saito.Storage writes readings to (<c>Storage:Provider</c> and its
/// connection): one database to back up, and assignments can reference the device table ingestion fills.
/// </summary>
public static class RegistryDatabase
{
    /// <summary>
    /// Options for the provider's context on the hot-tier database that <paramref name="storage"/> names; on PostgreSQL
    /// and SQL Server through a pool of its own with at most <c>Storage:QueryConnections</c> connections
    /// (<see cref="ConnectionBudget"/>, <see cref="ConnectionPool.Registry"/>).
    /// </summary>
    public static DbContextOptions Options(StorageOptions storage)
    {
        ArgumentNullException.ThrowIfNull(storage);
        return storage.Provider switch
        {
            StorageProvider.Sqlite => new DbContextOptionsBuilder<SqliteRegistryDbContext>()
                .UseSqlite(SqliteConnectionString(storage), o => o.CommandTimeout(storage.CommandTimeoutSeconds)).Options,
            StorageProvider.Postgres => new DbContextOptionsBuilder<PostgresRegistryDbContext>()
                .UseNpgsql(ConnectionBudget.ConnectionString(storage, ConnectionPool.Registry), o => o.CommandTimeout(storage.CommandTimeoutSeconds)).Options,
            StorageProvider.SqlServer => new DbContextOptionsBuilder<SqlServerRegistryDbContext>()
                .UseSqlServer(ConnectionBudget.ConnectionString(storage, ConnectionPool.Registry), o => o.CommandTimeout(storage.CommandTimeoutSeconds)).Options,
            _ => throw new ArgumentOutOfRangeException(nameof(storage), storage.Provider, "Storage:Provider"),
        };
    }

    /// <summary>
    /// The hot-tier file, as Saito.Storage opens it. SQLite waits for another writer's lock (the reading writer's
    /// commit) up to the command timeout rather than failing with SQLITE_BUSY.
    /// </summary>
    public static string SqliteConnectionString(StorageOptions storage)
    {
        ArgumentNullException.ThrowIfNull(storage);
        return new SqliteConnectionStringBuilder
        {
            DataSource = Path.GetFullPath(Path.Combine(storage.HotPath, SqliteSchema.HotFileName)),
            Mode = SqliteOpenMode.ReadWriteCreate,
            Pooling = true,
            DefaultTimeout = storage.CommandTimeoutSeconds,
        }.ToString();
    }
}

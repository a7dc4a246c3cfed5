using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.Data;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Registry.Hosting;

/// <summary>Makes registry contexts of the configured provider (options built once), for requests and background work.</summary>
public sealed class RegistryContextFactory
{
    private readonly StorageOptions _storage;
    private readonly DbContextOptions _options;

    public RegistryContextFactory(IOptions<StorageOptions> storage)
    {
        ArgumentNullException.ThrowIfNull(storage);
        _storage = storage.Value;
        _options = RegistryDatabase.Options(_storage);
    }

    public StorageProvider Provider => _storage.Provider;

    public RegistryDbContext Create() => _storage.Provider switch
    {
        StorageProvider.Sqlite => new SqliteRegistryDbContext((DbContextOptions<SqliteRegistryDbContext>)_options),
        StorageProvider.Postgres => new PostgresRegistryDbContext((DbContextOptions<PostgresRegistryDbContext>)_options),
        _ => new SqlServerRegistryDbContext((DbContextOptions<SqlServerRegistryDbContext>)_options),
    };
}

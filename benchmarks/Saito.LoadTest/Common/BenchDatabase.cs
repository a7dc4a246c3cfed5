using Microsoft.Data.Sqlite;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.LoadTest.Common;

/// <summary>
/// A storage tier as <c>--tier name=path</c> gives it: a folder for SQLite's database file, a tablespace for
/// PostgreSQL (created at that path, or an existing one named with <c>@name</c>), a filegroup for SQL Server (its
/// file in that folder).
/// </summary>
internal sealed record BenchTier(string Name, string Location)
{
    public static BenchTier Parse(string text)
    {
        int eq = text.IndexOf('=', StringComparison.Ordinal);
        if (eq <= 0 || eq == text.Length - 1)
        {
            throw new FormatException($"--tier '{text}': expected name=path, e.g. fast=/dev/shm/saito (or name=@tablespace on PostgreSQL).");
        }

        string name = text[..eq].Trim();
        if (!StorageOptionsValidator.IsPlainIdentifier(name))
        {
            throw new FormatException($"--tier '{text}': the name must be letters, digits and underscores.");
        }

        return new BenchTier(name, text[(eq + 1)..].Trim());
    }

    /// <summary>The default tier: the work folder (SQLite), the database's default tablespace or filegroup.</summary>
    public static BenchTier Default(string workDirectory) => new("default", workDirectory);

    public bool IsExistingTablespace => Location.StartsWith('@');
}

/// <summary>The database under test: which server, where its hot and archive tables go, and with which keys.</summary>
internal sealed record BenchTarget(StorageProvider Database, string? Server, BenchTier Hot, BenchTier Archive, KeyStrategy Keys, SqliteSynchronous Synchronous, string WorkDirectory)
{
    public string DbName => Database switch
    {
        StorageProvider.Postgres => "postgres",
        StorageProvider.SqlServer => "sqlserver",
        _ => "sqlite",
    };

    public string KeyName => Saito.Storage.Schema.SchemaScript.KeyStrategyName(Keys);
}

/// <summary>
/// A fresh, empty database for one measured run, with Saito's schema, dropped (or its files deleted) afterwards.
/// SQLite: files under the tier's folder; PostgreSQL: a new database with the tiers as tablespaces; SQL Server: a
/// new database with the tiers as filegroups.
/// </summary>
internal sealed class BenchDatabase : IAsyncDisposable
{
    private readonly Func<ValueTask> _drop;

    private BenchDatabase(StorageOptions options, Func<ValueTask> drop)
    {
        Options = options;
        _drop = drop;
    }

    public StorageOptions Options { get; }

    public ValueTask DisposeAsync() => _drop();

    public static async Task<BenchDatabase> CreateAsync(BenchTarget target, string purpose, int writers, int batch, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(target);
        var options = new StorageOptions { Provider = target.Database, KeyStrategy = target.Keys, Writers = writers, BatchSize = batch };
        switch (target.Database)
        {
            case StorageProvider.Postgres:
            {
                string name = PostgresTools.Name(purpose);
                options.ConnectionString = await PostgresDatabases.CreateAsync(target.Server!, name, token);
                (options.Postgres.HotTablespace, options.Postgres.HotTablespaceLocation) = Tablespace(target.Hot);
                (options.Postgres.ArchiveTablespace, options.Postgres.ArchiveTablespaceLocation) = Tablespace(target.Archive);
                return new BenchDatabase(options, async () => await PostgresDatabases.DropAsync(target.Server!, name, CancellationToken.None));
            }

            case StorageProvider.SqlServer:
            {
                string name = PostgresTools.Name(purpose);
                options.ConnectionString = await SqlServerDatabases.CreateAsync(target.Server!, name, token);
                if (target.Hot.Name != "default")
                {
                    options.SqlServer.HotFilegroup = "saito_" + target.Hot.Name;
                    options.SqlServer.HotFilePath = target.Hot.Location;
                }

                if (target.Archive.Name != "default")
                {
                    options.SqlServer.ArchiveFilegroup = "saito_" + target.Archive.Name;
                    options.SqlServer.ArchiveFilePath = target.Archive.Location;
                }

                return new BenchDatabase(options, async () => await SqlServerDatabases.DropAsync(target.Server!, name, CancellationToken.None));
            }

            default:
            {
                string run = $"saito-{purpose}-{Environment.ProcessId}";
                string hot = Path.Combine(target.Hot.Location, run, "hot");
                string archive = Path.Combine(target.Archive.Location, run, "archive");
                foreach (string dir in new[] { hot, archive }.Where(Directory.Exists))
                {
                    Directory.Delete(dir, recursive: true);
                }

                options.HotPath = hot;
                options.ArchivePath = archive;
                options.Sqlite.Synchronous = target.Synchronous;
                return new BenchDatabase(options, () =>
                {
                    SqliteConnection.ClearAllPools();
                    foreach (string dir in new[] { Path.GetDirectoryName(hot)!, Path.GetDirectoryName(archive)! }.Distinct().Where(Directory.Exists))
                    {
                        Directory.Delete(dir, recursive: true);
                    }

                    return ValueTask.CompletedTask;
                });
            }
        }
    }

    private static (string? Name, string? Location) Tablespace(BenchTier tier) =>
        tier.Name == "default" ? (null, null)
        : tier.IsExistingTablespace ? (tier.Location[1..], null)
        : ("saito_" + tier.Name, tier.Location);
}

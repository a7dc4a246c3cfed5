using Microsoft.Extensions.Logging;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;
using Saito.Storage.Sqlite;
using Saito.Storage.SqlServer;

namespace Saito.Storage;

/// <summary>
/// The one place a <see cref="StorageProvider"/> becomes a database: its store (<see cref="ReadingStores"/>) and its
/// archive engine (<see cref="Archiver"/>). A new database is its folder and one line here.
/// </summary>
internal static class StorageProviders
{
    private static readonly Dictionary<StorageProvider, Registration> s_registrations = new()
    {
        [StorageProvider.Sqlite] = new((o, l) => new SqliteReadingStore(o, l.CreateLogger<SqliteReadingStore>()), (o, p) => new SqliteArchiveEngine(o, p)),
        [StorageProvider.Postgres] = new((o, l) => new PostgresReadingStore(o, l.CreateLogger<PostgresReadingStore>()), (o, p) => new PostgresArchiveEngine(o, p)),
        [StorageProvider.SqlServer] = new((o, l) => new SqlServerReadingStore(o, l.CreateLogger<SqlServerReadingStore>()), (o, p) => new SqlServerArchiveEngine(o, p)),
    };

    public static bool TryGet(StorageProvider provider, out Registration registration) => s_registrations.TryGetValue(provider, out registration!);

    /// <summary>How to make a provider's store and its archive engine.</summary>
    internal sealed record Registration(
        Func<StorageOptions, ILoggerFactory, ReadingDatabase> Store,
        Func<StorageOptions, IArchivePauses, IArchiveEngine> ArchiveEngine);
}

using Microsoft.Extensions.Options;
using Saito.Storage.Keys;
using Saito.Readings.Configuration;

namespace Saito.Storage;

/// <summary>The <c>Storage</c> section: which database, where its tiers are, how tables are keyed, how writes are batched.</summary>
public sealed class StorageOptions
{
    public const string SectionName = "Storage";

    /// <summary><c>sqlite</c> (default, no setup), <c>postgres</c> or <c>sqlserver</c>.</summary>
    public StorageProvider Provider { get; set; } = StorageProvider.Sqlite;

    /// <summary>For PostgreSQL and SQL Server. SQLite needs none: it uses <see cref="HotPath"/> and <see cref="ArchivePath"/>.</summary>
    public string? ConnectionString { get; set; }

    /// <summary>
    /// Folder for Saito's files when no setting names a path of its own (<see cref="DataPaths"/>): unset, systemd's
    /// <c>$STATE_DIRECTORY</c> or <c>~/.local/share/saito</c>. Read by the configuration, before binding.
    /// </summary>
    public string? DataPath { get; set; }

    /// <summary>SQLite: folder of the hot-tier database file (<c>saito-hot.db</c>), on fast storage; default <c>hot</c> in <see cref="DataPath"/>.</summary>
    public string HotPath { get; set; } = "data/hot";

    /// <summary>SQLite: folder of the archive-tier database file (<c>saito-archive.db</c>), on slow storage; default <c>archive</c> in <see cref="DataPath"/>.</summary>
    public string ArchivePath { get; set; } = "data/archive";

    /// <summary><c>natural</c> (default), <c>guid</c> or <c>sequential-guid</c>.</summary>
    public KeyStrategy KeyStrategy { get; set; } = KeyStrategy.Natural;

    /// <summary>Writer threads; unset means the database's default (<see cref="EffectiveWriters"/>).</summary>
    public int? Writers { get; set; }

    /// <summary>A batch is committed when it holds this many readings...</summary>
    public int BatchSize { get; set; } = 5000;

    /// <summary>... or when its oldest reading has waited this long, whichever comes first.</summary>
    public int BatchAgeMilliseconds { get; set; } = 20;

    /// <summary>Readings waiting for a writer, at most; past it publishers wait (their acknowledgements are held).</summary>
    public int QueueCapacity { get; set; } = 200_000;

    /// <summary>Seconds a database command may run.</summary>
    public int CommandTimeoutSeconds { get; set; } = 60;

    /// <summary>
    /// Seconds a commit may go on (retries included) before /health calls the database stalled (unhealthy: the
    /// acknowledgements of the batch are held). A database whose processes are frozen or whose disk hangs raises no
    /// error, so without this /health would say healthy until the command timeout. A batch takes milliseconds.
    /// </summary>
    public int WriteStallSeconds { get; set; } = 5;

    /// <summary>
    /// PostgreSQL and SQL Server: connections for reading queries, and as many again for the registry, at most
    /// (<see cref="ConnectionBudget"/>: the server holds at most <c>Writers + 1 + 2 x QueryConnections</c>).
    /// </summary>
    public int QueryConnections { get; set; } = 2;

    public SqliteStorageOptions Sqlite { get; set; } = new();

    public PostgresStorageOptions Postgres { get; set; } = new();

    public SqlServerStorageOptions SqlServer { get; set; } = new();

    /// <summary>
    /// 4 unless set; 1 for SQLite with <c>synchronous = normal</c>. SQLite admits one writer at a time, but with
    /// <c>full</c> a commit's flush to disk runs beside the writer (SqliteWalSync), so the other writers insert their
    /// batches while the disk works; with <c>normal</c> there is no flush to wait for.
    /// </summary>
    public int EffectiveWriters => Writers ?? (Provider == StorageProvider.Sqlite && Sqlite.Synchronous == SqliteSynchronous.Normal ? 1 : 4);
}

[System.ComponentModel.TypeConverter(typeof(KebabCaseEnumConverter<SqliteSynchronous>))]
public enum SqliteSynchronous
{
    /// <summary>
    /// Every commit is on disk before it is acknowledged: durable across a power loss (the default). In WAL mode on Linux
    /// the writer's log is flushed beside it (SqliteWalSync) rather than inside each commit.
    /// </summary>
    Full,

    /// <summary>WAL with synchronous=NORMAL: durable across a crash or kill of Saito, not a power loss.</summary>
    Normal,
}

public sealed class SqliteStorageOptions
{
    /// <summary>SQLite's synchronous setting (see docs/durability.md).</summary>
    public SqliteSynchronous Synchronous { get; set; } = SqliteSynchronous.Full;

    /// <summary>
    /// SQLite's <c>wal_autocheckpoint</c>, in pages (4 KiB): how large the write-ahead log grows before the commit that
    /// passes it copies the log back into the database file. SQLite's default (1,000 pages, 4 MiB) made the writer
    /// checkpoint every few commits when readings come from hundreds of devices (each commit writes a page per device),
    /// writing the same pages back again and again. A checkpoint copies each page once, however often it changed since
    /// the last one, so the larger the log the less is copied per reading: 100,000 pages (the log's file grows to about
    /// 400 MiB and stays that size; after a crash SQLite reads it back on open, 0.75 s for a full one from a cold cache
    /// here) committed 8–12 % more readings a second than 20,000 with 320 sensors (issue 15, benchmarks/results/HISTORY.md).
    /// </summary>
    public int WalAutoCheckpointPages { get; set; } = DefaultWalAutoCheckpointPages;

    public const int DefaultWalAutoCheckpointPages = 100_000;
}

public sealed class PostgresStorageOptions
{
    /// <summary>Tablespace for hot tables (fast storage); unset means the database default.</summary>
    public string? HotTablespace { get; set; }

    /// <summary>Directory for <see cref="HotTablespace"/>: when set, Saito creates the tablespace there if it is missing (needs a superuser).</summary>
    public string? HotTablespaceLocation { get; set; }

    /// <summary>Tablespace for archive tables (slow storage); unset means the database default.</summary>
    public string? ArchiveTablespace { get; set; }

    public string? ArchiveTablespaceLocation { get; set; }
}

public sealed class SqlServerStorageOptions
{
    /// <summary>Filegroup for hot tables (fast storage); unset means PRIMARY.</summary>
    public string? HotFilegroup { get; set; }

    /// <summary>Folder for the hot filegroup's data file: when set, Saito adds the filegroup and file if missing.</summary>
    public string? HotFilePath { get; set; }

    /// <summary>Filegroup for archive tables (slow storage); unset means PRIMARY.</summary>
    public string? ArchiveFilegroup { get; set; }

    public string? ArchiveFilePath { get; set; }
}

public sealed class StorageOptionsValidator : IValidateOptions<StorageOptions>
{
    public ValidateOptionsResult Validate(string? name, StorageOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (!Enum.IsDefined(options.Provider))
        {
            failures.Add("Storage:Provider must be sqlite, postgres or sqlserver.");
        }

        if (!Enum.IsDefined(options.KeyStrategy))
        {
            failures.Add("Storage:KeyStrategy must be natural, guid or sequential-guid.");
        }

        if (options.Provider != StorageProvider.Sqlite && string.IsNullOrWhiteSpace(options.ConnectionString))
        {
            failures.Add($"Storage:ConnectionString is required for Storage:Provider={options.Provider.ToString().ToLowerInvariant()}.");
        }

        if (options.Provider == StorageProvider.Sqlite)
        {
            if (string.IsNullOrWhiteSpace(options.HotPath))
            {
                failures.Add("Storage:HotPath must name a folder for the hot-tier SQLite file.");
            }

            if (string.IsNullOrWhiteSpace(options.ArchivePath))
            {
                failures.Add("Storage:ArchivePath must name a folder for the archive-tier SQLite file.");
            }
        }

        OptionFailures.Range(failures, "Storage:Sqlite:WalAutoCheckpointPages", options.Sqlite.WalAutoCheckpointPages, 100, 1_000_000, unit: "pages");

        OptionFailures.Range(failures, "Storage:Writers", options.Writers, 1, 256);

        OptionFailures.Range(failures, "Storage:BatchSize", options.BatchSize, 1, 1_000_000, unit: "readings");

        OptionFailures.Range(failures, "Storage:BatchAgeMilliseconds", options.BatchAgeMilliseconds, 0, 60_000);

        if (options.QueueCapacity < options.BatchSize)
        {
            failures.Add($"Storage:QueueCapacity ({options.QueueCapacity}) must be at least Storage:BatchSize ({options.BatchSize}).");
        }

        OptionFailures.Range(failures, "Storage:CommandTimeoutSeconds", options.CommandTimeoutSeconds, 1, 3600);

        OptionFailures.Range(failures, "Storage:WriteStallSeconds", options.WriteStallSeconds, 1, 3600);

        OptionFailures.Range(failures, "Storage:QueryConnections", options.QueryConnections, 1, 64);

        if (!string.IsNullOrEmpty(options.Postgres.HotTablespaceLocation) && string.IsNullOrEmpty(options.Postgres.HotTablespace))
        {
            failures.Add("Storage:Postgres:HotTablespaceLocation needs Storage:Postgres:HotTablespace (the name to create).");
        }

        if (!string.IsNullOrEmpty(options.Postgres.ArchiveTablespaceLocation) && string.IsNullOrEmpty(options.Postgres.ArchiveTablespace))
        {
            failures.Add("Storage:Postgres:ArchiveTablespaceLocation needs Storage:Postgres:ArchiveTablespace (the name to create).");
        }

        if (!string.IsNullOrEmpty(options.SqlServer.HotFilePath) && string.IsNullOrEmpty(options.SqlServer.HotFilegroup))
        {
            failures.Add("Storage:SqlServer:HotFilePath needs Storage:SqlServer:HotFilegroup (the filegroup to add the file to).");
        }

        if (!string.IsNullOrEmpty(options.SqlServer.ArchiveFilePath) && string.IsNullOrEmpty(options.SqlServer.ArchiveFilegroup))
        {
            failures.Add("Storage:SqlServer:ArchiveFilePath needs Storage:SqlServer:ArchiveFilegroup (the filegroup to add the file to).");
        }

        foreach (var (key, value) in new[]
                 {
                     ("Storage:Postgres:HotTablespace", options.Postgres.HotTablespace),
                     ("Storage:Postgres:ArchiveTablespace", options.Postgres.ArchiveTablespace),
                     ("Storage:SqlServer:HotFilegroup", options.SqlServer.HotFilegroup),
                     ("Storage:SqlServer:ArchiveFilegroup", options.SqlServer.ArchiveFilegroup),
                 })
        {
            if (!string.IsNullOrEmpty(value) && !IsPlainIdentifier(value))
            {
                failures.Add($"{key} must be a plain identifier (letters, digits, underscore; starting with a letter), was '{value}'.");
            }
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <summary>Names that go into DDL unquoted: letters, digits and underscore, a letter first, at most 63 characters.</summary>
    public static bool IsPlainIdentifier(string value) =>
        value.Length is > 0 and <= 63 && char.IsAsciiLetter(value[0]) && value.All(c => char.IsAsciiLetterOrDigit(c) || c == '_');
}

using System.Data.Common;
using Microsoft.Data.Sqlite;

namespace Saito.Storage.Sqlite;

/// <summary>
/// Opens connections to one SQLite file with Saito's settings: the <see cref="DbDataSource"/> of one tier. Every open
/// (also through <see cref="DbDataSource.OpenConnectionAsync"/>) sets the connection's pragmas.
/// </summary>
internal sealed class SqliteConnections : DbDataSource
{
    private readonly string _pragmas;

    public SqliteConnections(string file, StorageOptions options)
    {
        File = file;
        ConnectionString = new SqliteConnectionStringBuilder
        {
            DataSource = file,
            Mode = SqliteOpenMode.ReadWriteCreate,
            Cache = SqliteCacheMode.Private,
            Pooling = true,
            DefaultTimeout = options.CommandTimeoutSeconds,
        }.ToString();
        // cache_size -65536: a 64 MiB page cache per connection (SQLite's default is 2 MiB), filled only as pages are
        // read. A writer's batch from hundreds of devices touches a leaf page of each key index per device; with 2 MiB
        // those pages were read back from the OS on every batch (a tenth of Saito's time with 320 sensors, issue 15).
        // busy_timeout: SQLite itself waits (with short sleeps) for another connection's lock, e.g. the archiver's
        // or a person's sqlite3, instead of failing with SQLITE_BUSY. synchronous is per connection, not per file.
        // wal_autocheckpoint is per connection too: the commit that takes the log past it checkpoints
        // (Storage:Sqlite:WalAutoCheckpointPages).
        _pragmas = $"PRAGMA busy_timeout = {checked(options.CommandTimeoutSeconds * 1000)}; PRAGMA synchronous = {Synchronous(options)}; " +
            $"PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = {options.Sqlite.WalAutoCheckpointPages};";
    }

    public string File { get; }

    public override string ConnectionString { get; }

    public static string Synchronous(StorageOptions options) => options.Sqlite.Synchronous == SqliteSynchronous.Normal ? "NORMAL" : "FULL";

    /// <summary>Synchronous open: SQLite's "async" methods run synchronously anyway.</summary>
    public SqliteConnection Open()
    {
        var connection = new SqliteConnection(ConnectionString);
        try
        {
            connection.Open();
            using var command = connection.CreateCommand();
            command.CommandText = _pragmas;
            command.ExecuteNonQuery();
            return connection;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    protected override DbConnection CreateDbConnection() => new SqliteConnection(ConnectionString);

    protected override DbConnection OpenDbConnection() => Open();

    /// <summary>Synchronous, as every Microsoft.Data.Sqlite open is.</summary>
    protected override ValueTask<DbConnection> OpenDbConnectionAsync(CancellationToken cancellationToken = default)
    {
        cancellationToken.ThrowIfCancellationRequested();
        return ValueTask.FromResult<DbConnection>(Open());
    }

    /// <summary>Sets WAL journaling (a property of the file, kept once set) and returns the journal mode in force.</summary>
    public static string UseWal(SqliteConnection connection)
    {
        using var command = connection.CreateCommand();
        command.CommandText = "PRAGMA journal_mode = WAL";
        return Convert.ToString(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture) ?? string.Empty;
    }

    /// <summary>Closes the pooled connections to this file (so the file can be moved or deleted).</summary>
    public void ClearPool()
    {
        using var connection = new SqliteConnection(ConnectionString);
        SqliteConnection.ClearPool(connection);
    }
}

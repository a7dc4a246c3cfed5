using System.Data.Common;
using Microsoft.Data.Sqlite;
using SQLitePCL;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Sqlite;

/// <summary>
/// Readings in two SQLite files: <c>saito-hot.db</c> in <see cref="StorageOptions.HotPath"/> and
/// <c>saito-archive.db</c> in <see cref="StorageOptions.ArchivePath"/> (<see cref="SqliteSchema"/>), WAL journaling.
/// <para>
/// SQLite admits one writer at a time, so this store writes through one connection with prepared statements
/// (<see cref="SqliteWriter"/>) and lets one caller at a time use it: concurrent <see cref="WriteAsync"/> and
/// <see cref="ReadingDatabase.RegisterDevicesAsync"/> calls queue here rather than spin on SQLITE_BUSY. Another process holding
/// the file (the archiver, a person's <c>sqlite3</c>) is waited for by the busy timeout. Reads open their own
/// pooled connections; WAL lets them run beside the writer. With synchronous FULL a call waits for its commit's log to
/// be flushed to disk after it lets go of the writer connection (<see cref="SqliteWalSync"/>), so the next caller
/// inserts while the disk works.
/// </para>
/// SQLite's API is synchronous: the async methods do their work on the calling thread.
/// </summary>
/// <para>
/// The reads are <see cref="ReadingDatabase"/>'s; the write path is SQLite's own (one writer, prepared statements,
/// <c>INSERT OR IGNORE</c>), not the savepoint and bulk-copy loop of the servers: SQLite has no bulk path to fall back
/// from, and one prepared insert per row on the one writer connection is its fast path.
/// </para>
public sealed partial class SqliteReadingStore : ReadingDatabase
{
    private readonly ILogger<SqliteReadingStore> _logger;
    private readonly SqliteConnections _hot;
    private readonly SqliteConnections _archive;
    private readonly string _synchronous;
    private readonly SemaphoreSlim _writeLock = new(1, 1);
    private readonly bool _flushBesideWriter;
    private SqliteWriter? _writer;
    private SqliteWalSync? _walSync; // made with the first writer whose file is in WAL mode, when synchronous is FULL
    private SqliteWalSync? _writerSync; // the current writer's: null when its commits flush themselves
    private bool _disposed;

    public SqliteReadingStore(StorageOptions options, ILogger<SqliteReadingStore> logger)
        : base(options)
    {
        ArgumentNullException.ThrowIfNull(logger);
        _logger = logger;
        _hot = new SqliteConnections(Path.GetFullPath(Path.Combine(options.HotPath, SqliteSchema.HotFileName)), options);
        _archive = new SqliteConnections(Path.GetFullPath(Path.Combine(options.ArchivePath, SqliteSchema.ArchiveFileName)), options);
        _synchronous = SqliteConnections.Synchronous(options);
        // Linux: the flush is fdatasync. Elsewhere SQLite's own FULL flushes inside each commit.
        _flushBesideWriter = options.Sqlite.Synchronous == SqliteSynchronous.Full && OperatingSystem.IsLinux();
    }

    public override StorageProvider Provider => StorageProvider.Sqlite;

    /// <summary>The hot-tier database file.</summary>
    public string HotFile => _hot.File;

    /// <summary>Flushes of the writer's log beside it (<see cref="SqliteWalSync"/>); 0 when commits flush themselves.</summary>
    internal long LogFlushes => _walSync?.Rounds ?? 0;

    /// <summary>For tests: runs in each flush round before the flush (to hold a round open, or to fail it).</summary>
    internal Action? BeforeLogFlush { get; init; }

    /// <summary>The archive-tier database file.</summary>
    public string ArchiveFile => _archive.File;

    public override string Describe() =>
        $"SQLite hot {_hot.File}, archive {_archive.File} (keys {SchemaScript.KeyStrategyName(KeyStrategy)}, " +
        $"synchronous {_synchronous})";

    public override Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken) => Task.FromResult(EnsureSchema(cancellationToken));

    private SchemaReport EnsureSchema(CancellationToken cancellationToken)
    {
        var created = new List<string>();
        var existing = new List<string>();
        foreach (var (tier, connections) in new[] { (StorageTier.Hot, _hot), (StorageTier.Archive, _archive) })
        {
            cancellationToken.ThrowIfCancellationRequested();
            string fileEntry = "file " + connections.File;
            if (File.Exists(connections.File))
            {
                existing.Add(fileEntry);
            }
            else
            {
                Directory.CreateDirectory(Path.GetDirectoryName(connections.File)!);
                created.Add(fileEntry);
            }

            using var connection = connections.Open();
            string journalMode = SqliteConnections.UseWal(connection);
            if (!string.Equals(journalMode, "wal", StringComparison.OrdinalIgnoreCase))
            {
                SqliteLog.NotWal(_logger, connections.File, journalMode);
            }

            var createdHere = new List<string>();
            using (var transaction = connection.BeginTransaction(deferred: false))
            {
                // Read under the write lock, so that of two processes starting at once only one creates (and says so).
                var names = ExistingNames(connection, transaction);
                foreach (var schemaObject in SqliteSchema.Objects(tier))
                {
                    if (names.Contains(schemaObject.Name))
                    {
                        existing.Add(schemaObject.Name);
                        continue;
                    }

                    using var command = connection.CreateCommand();
                    command.Transaction = transaction;
                    command.CommandText = schemaObject.CreateSql;
                    command.ExecuteNonQuery();
                    createdHere.Add(schemaObject.Name);
                }

                foreach (var added in SqliteSchema.AddedColumns.Where(a => tier == StorageTier.Hot && names.Contains(a.Table)))
                {
                    AddColumnIfMissing(connection, transaction, added, connections.File);
                }

                transaction.Commit();
            }

            if (createdHere.Count > 0)
            {
                string createdNames = string.Join(", ", createdHere);
                SqliteLog.SchemaCreated(_logger, createdNames, connections.File);
            }

            created.AddRange(createdHere);
        }

        return new SchemaReport(created, existing);
    }

    /// <summary>A column a table made by an older Saito lacks (<see cref="SqliteSchema.AddedColumns"/>), added in the schema transaction.</summary>
    private void AddColumnIfMissing(SqliteConnection connection, SqliteTransaction transaction, AddedColumn added, string file)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = "SELECT count(*) FROM pragma_table_info($table) WHERE name = $column";
        command.Parameters.AddWithValue("$table", added.Table);
        command.Parameters.AddWithValue("$column", added.Column);
        if ((long)command.ExecuteScalar()! > 0)
        {
            return;
        }

        command.Parameters.Clear();
        command.CommandText = added.AddSql;
        command.ExecuteNonQuery();
        SqliteLog.ColumnAdded(_logger, added.Table, added.Column, file);
    }

    private static HashSet<string> ExistingNames(SqliteConnection connection, SqliteTransaction transaction)
    {
        using var command = connection.CreateCommand();
        command.Transaction = transaction;
        command.CommandText = "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'index')";
        using var reader = command.ExecuteReader();
        var names = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        while (reader.Read())
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    /// <summary>On the writer connection, between two batches of readings: one transaction for the whole batch of devices.</summary>
    private protected override async Task<IReadOnlyDictionary<string, RegisteredDevice>> RegisterDistinctAsync(
        IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken) =>
        await UseWriterAsync(writer => writer.RegisterDevices(devices, DateTime.UtcNow), cancellationToken);

    public override Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        return batch.IsEmpty ? Task.FromResult(default(BatchWriteResult)) : UseWriterAsync(writer => writer.Write(batch, cancellationToken), cancellationToken);
    }

    /// <summary>
    /// One commit on the writer connection, one caller at a time. With the log flushed beside the writer, the wait for the
    /// flush comes after the write lock is let go: the next caller inserts while the disk works. A cancelled wait
    /// (shutdown given up on) leaves the commit unacknowledged; hubs send it again and the key skips what is stored.
    /// </summary>
    private async Task<T> UseWriterAsync<T>(Func<SqliteWriter, T> commit, CancellationToken cancellationToken)
    {
        T result;
        Task durable;
        await _writeLock.WaitAsync(cancellationToken);
        try
        {
            _walSync?.ThrowIfFailed(); // after a failed flush, retries commit nothing more
            var writer = Writer();
            try
            {
                result = commit(writer);
                durable = AfterCommit();
            }
            catch (Exception exception)
            {
                DiscardWriter(writer, exception);
                throw;
            }
        }
        finally
        {
            _writeLock.Release();
        }

        await durable.WaitAsync(cancellationToken);
        return result;
    }

    /// <summary>Under the write lock, right after a commit: when it is on disk (<see cref="SqliteWalSync"/>).</summary>
    private Task AfterCommit() => _writerSync?.AfterCommit() ?? Task.CompletedTask;

    /// <summary>The writer connection, opened on first use (under <see cref="_writeLock"/>).</summary>
    private SqliteWriter Writer()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_writer is null)
        {
            var connection = _hot.Open();
            SqliteWalSync? sync = null;
            try
            {
                bool wal = string.Equals(SqliteConnections.UseWal(connection), "wal", StringComparison.OrdinalIgnoreCase);
                if (wal && _flushBesideWriter)
                {
                    // FULL, with the log's flush taken out of the commit and done beside the writer (SqliteWalSync). The
                    // log's name is SQLite's (it resolves symbolic links in the database file's path). NORMAL is set
                    // last: a connection that goes back to the pool gets FULL again from Open's pragmas.
                    sync = _walSync ??= new SqliteWalSync(_logger, BeforeLogFlush);
                    sync.UseLog(raw.sqlite3_db_filename(connection.Handle, "main").utf8_to_string() + "-wal");
                    using var command = connection.CreateCommand();
                    command.CommandText = "PRAGMA synchronous = NORMAL";
                    command.ExecuteNonQuery();
                }

                _writer = new SqliteWriter(connection, KeyStrategy);
                _writerSync = sync;
            }
            catch
            {
                connection.Dispose();
                throw;
            }

            SqliteLog.WriterOpened(_logger, _hot.File, sync is null ? _synchronous : _synchronous + ", the log flushed beside the writer");
        }

        return _writer;
    }

    // After a failure the transaction has rolled back; a fresh connection next time is the simple way to be
    // sure no statement is left mid-step. Failures are rare, so the cost of preparing again does not matter.
    private void DiscardWriter(SqliteWriter writer, Exception exception)
    {
        if (exception is not OperationCanceledException)
        {
            SqliteLog.WriterDiscarded(_logger, exception);
        }

        _writer = null;
        _writerSync = null;
        writer.Dispose();
    }

    /// <summary>
    /// Busy or locked (another connection held the file past the busy timeout), an I/O hiccup, or a storage outage
    /// (<see cref="IsStorageOutage"/>).
    /// </summary>
    public override bool IsTransient(Exception exception) => exception switch
    {
        SqliteException sqlite => IsTransientCode(sqlite.SqliteErrorCode),
        TimeoutException or IOException => true,
        _ => false,
    };

    /// <summary>SQLITE_FULL (the disk, or a quota, is full) and SQLITE_IOERR (a read or write of the file failed).</summary>
    public override bool IsStorageOutage(Exception exception) => exception is SqliteException sqlite && IsStorageOutageCode(sqlite.SqliteErrorCode);

    /// <summary>
    /// A result code worth retrying: busy, locked, or a storage outage. Compared by its primary code (the low byte), so an
    /// extended code such as SQLITE_IOERR_WRITE or SQLITE_BUSY_SNAPSHOT counts as its family.
    /// </summary>
    internal static bool IsTransientCode(int code) => (code & 0xFF) is raw.SQLITE_BUSY or raw.SQLITE_LOCKED || IsStorageOutageCode(code);

    internal static bool IsStorageOutageCode(int code) => (code & 0xFF) is raw.SQLITE_FULL or raw.SQLITE_IOERR;

    private protected override string Parameter(string name) => "$" + name;

    /// <summary>Microseconds since 1970, in an integer column.</summary>
    private protected override DateTime ReadTime(DbDataReader reader, int ordinal) => ReadingTime.FromUnixMicroseconds(reader.GetInt64(ordinal));

    private protected override DbDataSource Source(StorageTier tier) => tier switch
    {
        StorageTier.Hot => _hot,
        StorageTier.Archive => _archive,
        _ => throw new ArgumentOutOfRangeException(nameof(tier), tier, null),
    };

    private protected override async ValueTask DisposeCoreAsync()
    {
        // ReadingDatabase.DisposeAsync runs this once.
        await _writeLock.WaitAsync();
        try
        {
            _disposed = true;
            _writer?.Dispose();
            _writer = null;
            _writerSync = null;
            _walSync?.Dispose(); // after the writer: the rounds asked for still run
            _hot.ClearPool();
            _archive.ClearPool();
        }
        finally
        {
            _writeLock.Release();
        }

        _writeLock.Dispose();
    }
}

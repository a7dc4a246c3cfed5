using System.Data.Common;
using System.Diagnostics;
using Microsoft.Data.SqlClient;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging;
using Npgsql;
using NpgsqlTypes;
using Saito.LoadTest.Common;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;

namespace Saito.LoadTest.Tiers;

/// <summary>
/// The timed steps of <c>tiers</c>, each on a database made for it: Saito's bulk insert, the study's row-by-row
/// insert, a full read back, and the archive move. Rows are <see cref="BulkReadings"/>'s biosensor rows.
/// </summary>
internal sealed class TierRunners(BenchTarget target, ILoggerFactory loggers)
{
    public const int BulkBatch = 5000;

    /// <summary>Saito's bulk path: <paramref name="threads"/> concurrent <see cref="IReadingWriter.WriteAsync"/> calls of 5,000 rows each.</summary>
    public static async Task<double> BulkInsertAsync(IReadingStore store, long rows, int threads, Action<long> progress, CancellationToken token)
    {
        var clock = Stopwatch.StartNew();
        await BenchSeeder.WriteAsync(store, 0, rows, threads, BulkBatch, progress, token);
        return clock.Elapsed.TotalSeconds;
    }

    /// <summary>
    /// The study's method, reproduced: <paramref name="threads"/> threads, each with its own connection, one
    /// parameterized INSERT per reading in autocommit (one transaction, one commit per row). Thread t inserts the
    /// seconds t, t + threads, ... of the class (256 rows each), so the threads interleave in time as hubs would.
    /// </summary>
    public async Task<double> RowByRowInsertAsync(StorageOptions options, long rows, int threads, Action<long> progress, CancellationToken token)
    {
        long seconds = (rows + BulkReadings.Series - 1) / BulkReadings.Series;
        long done = 0;
        var ready = new Barrier(threads + 1);
        var workers = Enumerable.Range(0, threads).Select(t => Task.Factory.StartNew(() =>
        {
            RowInserter inserter;
            try
            {
                inserter = RowInserter.Open(options);
            }
            catch
            {
                // Not at the barrier: leave it, so that the others (and the clock) do not wait for this thread forever.
                ready.RemoveParticipant();
                throw;
            }

            using var owned = inserter;
            var ids = Enumerable.Range(1, BulkReadings.Devices).ToArray();
            var block = new Reading[BulkReadings.Series];
            ready.SignalAndWait(token);
            for (long second = t; second < seconds; second += threads)
            {
                token.ThrowIfCancellationRequested();
                long first = second * BulkReadings.Series;
                int n = (int)Math.Min(BulkReadings.Series, rows - first);
                BulkReadings.Fill(block.AsSpan(0, n), first, ids);
                for (int i = 0; i < n; i++)
                {
                    inserter.Insert(block[i]);
                }

                progress(Interlocked.Add(ref done, n));
            }
        }, token, TaskCreationOptions.LongRunning, TaskScheduler.Default)).ToArray();
        // The clock starts when every thread has its connection open and its statement prepared.
        await Task.Run(() => ready.SignalAndWait(token), token);
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(workers);
        return clock.Elapsed.TotalSeconds;
    }

    /// <summary>Reads every row back, every value of it: thread t reads its range of devices in key order with a plain data reader; returns (rows read, seconds).</summary>
    public async Task<(long Rows, double Seconds)> SelectAsync(StorageOptions options, int threads, Action<long> progress, CancellationToken token)
    {
        string table = ReadingTables.TableName(ReadingKind.Biosensor, target.Keys, StorageTier.Hot);
        string columns = string.Join(", ", ReadingTables.Columns(ReadingKind.Biosensor, target.Keys));
        string order = target.Keys == KeyStrategy.Natural ? "device_id, channel, ts" : "id";
        long read = 0;
        var clock = Stopwatch.StartNew();
        await Task.WhenAll(Enumerable.Range(0, threads).Select(t => Task.Run(async () =>
        {
            // Threads beyond the 64 devices get an empty range, as the study's extra threads would find nothing more to read.
            int firstDevice = 1 + (t * BulkReadings.Devices / threads);
            int lastDevice = (t + 1) * BulkReadings.Devices / threads;
            await using var connection = Connection(options, readOnly: true);
            await connection.OpenAsync(token);
            await using var command = connection.CreateCommand();
            command.CommandText = $"SELECT {columns} FROM {table} WHERE device_id BETWEEN {firstDevice} AND {lastDevice} ORDER BY {order}";
            command.CommandTimeout = 0;
            await using var reader = await command.ExecuteReaderAsync(token);
            long mine = 0;
            var values = new object[reader.FieldCount];
            while (await reader.ReadAsync(token))
            {
                // Every value of every row is read, as a client that uses the rows would.
                reader.GetValues(values);
                mine++;
                if ((mine & 0xFFFF) == 0)
                {
                    progress(Interlocked.Add(ref read, 0x10000));
                }
            }

            progress(Interlocked.Add(ref read, mine & 0xFFFF));
        }, token)));
        return (Interlocked.Read(ref read), clock.Elapsed.TotalSeconds);
    }

    /// <summary>Saito's archiver with <paramref name="threads"/> workers moves every row older than the cutoff; returns (rows moved, seconds).</summary>
    public async Task<(long Rows, double Seconds)> ArchiveAsync(StorageOptions options, DateTime cutoff, int threads, Action<long> progress, CancellationToken token)
    {
        var clock = Stopwatch.StartNew();
        long moved = await RunArchiverAsync(options, loggers, cutoff, Math.Min(threads, ArchiverOptionsValidator.MaxThreads), new ArchiverOptions().BatchRows,
            Path.Combine(target.WorkDirectory, $"tier-exports-{Environment.ProcessId}"), progress, token);
        return (moved, clock.Elapsed.TotalSeconds);
    }

    /// <summary>
    /// One archiver run over the biosensor table, as <c>saito-archiver run</c> makes it, reporting progress every
    /// 250 ms; deletes its export folder afterwards and throws if the archiver reported a failure. Returns the rows moved.
    /// </summary>
    public static async Task<long> RunArchiverAsync(StorageOptions options, ILoggerFactory loggers, DateTime cutoff, int threads, int batchRows, string exports,
        Action<long> progress, CancellationToken token)
    {
        await using var archiver = new Archiver(options, loggers);
        var run = archiver.RunAsync(
            new ArchiveRunRequest { Kinds = [ReadingKind.Biosensor], Cutoff = cutoff, Threads = threads, BatchRows = batchRows, ExportDirectory = exports },
            token);
        while (!run.IsCompleted)
        {
            await Task.WhenAny(run, Task.Delay(250, token));
            progress(archiver.Progress);
        }

        var summary = await run;
        Directory.Delete(exports, recursive: true);
        if (summary.Failures.Count > 0)
        {
            throw new InvalidOperationException("The archiver reported failures: " + string.Join("; ", summary.Failures));
        }

        return summary.RowsMoved;
    }

    /// <summary>A connection (not yet open) to the hot tier: SQLite's hot file read-only or writable, the server's database otherwise.</summary>
    private static DbConnection Connection(StorageOptions options, bool readOnly) => options.Provider switch
    {
        StorageProvider.Postgres => new NpgsqlConnection(options.ConnectionString),
        StorageProvider.SqlServer => new SqlConnection(options.ConnectionString),
        _ => new SqliteConnection(new SqliteConnectionStringBuilder
        {
            DataSource = Path.GetFullPath(Path.Combine(options.HotPath, SqliteSchema.HotFileName)),
            Mode = readOnly ? SqliteOpenMode.ReadOnly : SqliteOpenMode.ReadWriteCreate,
            Pooling = false,
            DefaultTimeout = 600,
        }.ToString()),
    };

    /// <summary>One connection and one prepared INSERT into the hot biosensor table of the target's key strategy, in autocommit.</summary>
    private sealed class RowInserter : IDisposable
    {
        private readonly DbConnection _connection;
        private readonly DbCommand _insert;
        private readonly StorageProvider _provider;
        private readonly KeyStrategy _keys;
        private readonly DbParameter[] _p;

        private RowInserter(DbConnection connection, DbCommand insert, StorageProvider provider, KeyStrategy keys, DbParameter[] parameters)
        {
            _connection = connection;
            _insert = insert;
            _provider = provider;
            _keys = keys;
            _p = parameters;
        }

        public static RowInserter Open(StorageOptions options)
        {
            var keys = options.KeyStrategy;
            var columns = ReadingTables.Columns(ReadingKind.Biosensor, keys);
            string table = ReadingTables.TableName(ReadingKind.Biosensor, keys, StorageTier.Hot);
            var connection = Connection(options, readOnly: false);
            connection.Open();
            if (options.Provider == StorageProvider.Sqlite)
            {
                using var pragmas = connection.CreateCommand();
                pragmas.CommandText = $"PRAGMA busy_timeout = 600000; PRAGMA synchronous = {options.Sqlite.Synchronous.ToString().ToUpperInvariant()};";
                pragmas.ExecuteNonQuery();
            }

            var insert = connection.CreateCommand();
            // Named parameters: @name for SQL Server and PostgreSQL (Npgsql rewrites them to $1...), $name for SQLite.
            string marker = options.Provider == StorageProvider.Sqlite ? "$" : "@";
            insert.CommandText = $"INSERT INTO {table} ({string.Join(", ", columns)}) VALUES ({string.Join(", ", columns.Select((_, i) => $"{marker}p{i}"))})";
            var parameters = new DbParameter[columns.Count];
            for (int i = 0; i < columns.Count; i++)
            {
                parameters[i] = Parameter(options.Provider, $"{marker}p{i}", columns[i], keys);
                insert.Parameters.Add(parameters[i]);
            }

            if (options.Provider != StorageProvider.SqlServer)
            {
                // SqlClient cannot prepare without sizes it has no use for here; PostgreSQL and SQLite reuse the plan.
                insert.Prepare();
            }

            return new RowInserter(connection, insert, options.Provider, keys, parameters);
        }

        private static DbParameter Parameter(StorageProvider provider, string name, string column, KeyStrategy keys)
        {
            bool time = column is "ts" or "received_at";
            bool number = column is "device_id" or "channel";
            return provider switch
            {
                StorageProvider.Postgres => new NpgsqlParameter(name, column == "id" ? NpgsqlDbType.Uuid : time ? NpgsqlDbType.TimestampTz : number ? NpgsqlDbType.Integer : NpgsqlDbType.Double),
                StorageProvider.SqlServer => new SqlParameter(name, column == "id" ? System.Data.SqlDbType.UniqueIdentifier : time ? System.Data.SqlDbType.DateTime2 : number ? System.Data.SqlDbType.Int : System.Data.SqlDbType.Float),
                _ => new SqliteParameter(name, column == "id" ? SqliteType.Blob : time || number ? SqliteType.Integer : SqliteType.Real),
            };
        }

        public void Insert(in Reading reading)
        {
            int i = 0;
            if (_keys != KeyStrategy.Natural)
            {
                var id = ReadingKeys.For(reading, _keys, _provider)!.Value;
                _p[i++].Value = _provider == StorageProvider.Sqlite ? id.ToByteArray(bigEndian: true) : id;
            }

            _p[i++].Value = reading.DeviceId;
            _p[i++].Value = reading.Channel;
            _p[i++].Value = Time(reading.Timestamp);
            for (int v = 0; v < ReadingTables.ValueColumns(ReadingKind.Biosensor).Count; v++)
            {
                _p[i++].Value = ReadingTables.Value(reading, v) is { } value ? value : DBNull.Value;
            }

            _p[i].Value = Time(reading.ReceivedAt);
            _insert.ExecuteNonQuery();
        }

        private object Time(DateTime utc) => _provider == StorageProvider.Sqlite ? ReadingTime.ToUnixMicroseconds(utc) : utc;

        public void Dispose()
        {
            _insert.Dispose();
            _connection.Dispose();
        }
    }
}

using System.Diagnostics;
using System.Globalization;
using System.Text;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging;
using Npgsql;
using Saito.LoadTest.Common;
using Saito.LoadTest.Tiers;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;

namespace Saito.LoadTest.Archive;

/// <summary>One archive run: rows moved, its wall time, and how long the concurrent inserts waited meanwhile.</summary>
internal sealed record ArchiveMeasure(string Method, int Threads, long Rows, double Seconds, long HotLeft, long Archived, InsertWaits Waits, CpuUse Cores)
{
    public double RowsPerSecond => Seconds > 0 ? Rows / Seconds : 0;

    /// <summary>Every old row moved, none lost or doubled, and the probe's rows still in hot.</summary>
    public bool Exact(long expectedRows, long expectedHot) => Rows == expectedRows && Archived == expectedRows && HotLeft == expectedHot;
}

/// <summary>Insert calls made while an archive run went on: how many, and how long they took (ms).</summary>
internal sealed record InsertWaits(int Calls, long Rows, double P50Ms, double P99Ms, double MaxMs);

/// <summary>
/// The archive benchmark: <see cref="Rows"/> old biosensor rows in the hot table, moved to the archive table by
/// Saito's archiver (select, export to CSV with a manifest and checksum, reinsert, delete, journaled) or by a
/// hand-written set-based move on the same rows (PostgreSQL: <c>COPY (SELECT ...) TO STDOUT</c> into a file, then
/// <c>WITH moved AS (DELETE ... RETURNING ...) INSERT INTO archive SELECT ... FROM moved</c>; SQLite: a SELECT written to
/// a CSV file, then <c>INSERT INTO archive SELECT ...</c> and <c>DELETE</c> in one transaction over the attached archive
/// file), each thread taking a range of devices. Meanwhile an insert probe writes a class's second of readings
/// (256 rows, newer than the cutoff) every 10 ms through Saito's store and times each write: the longest is "the
/// longest time an insert waited while the archiver ran". Every run starts from a fresh database, seeded and settled
/// (<see cref="BenchSeeder.SettleAsync"/>) before the clock starts.
/// </summary>
internal sealed class ArchiveBench(BenchTarget target, long rows, int batchRows, ILoggerFactory loggers)
{
    public const string SaitoMethod = "saito";
    public const string SetBasedMethod = "set-based";
    private const int ProbeRows = BulkReadings.Series;
    private const int SeedBatch = 50_000;

    /// <summary>Rows to move: whole seconds of the class, so that the cutoff takes exactly them.</summary>
    public long Rows { get; } = (rows + BulkReadings.Series - 1) / BulkReadings.Series * BulkReadings.Series;

    /// <summary>Newer rows seeded after the old ones (one minute of the class): they must stay in hot.</summary>
    public static long Recent => BulkReadings.Series * 60L;

    public DateTime Cutoff => BulkReadings.EndOf(Rows);

    public async Task<ArchiveMeasure> RunAsync(string method, int threads, Action<string, long, long> progress, CancellationToken token)
    {
        await using var database = await BenchDatabase.CreateAsync(target, $"archive_{method.Replace('-', '_')}_{threads}", 4, SeedBatch, token);
        await using var store = ReadingStores.Create(database.Options, loggers);
        await BenchSeeder.PrepareAsync(store, token);
        long total = Rows + Recent;
        await BenchSeeder.WriteAsync(store, 0, total, target.Database == StorageProvider.Sqlite ? 1 : 4, SeedBatch, done => progress("seeding (not timed)", done, total), token);
        progress("settling: VACUUM ANALYZE / WAL checkpoint (not timed)", 0, 1);
        await BenchSeeder.SettleAsync(database.Options, token);

        using var stopProbe = CancellationTokenSource.CreateLinkedTokenSource(token);
        var probeWriting = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var probe = Task.Run(() => ProbeAsync(store, total, probeWriting, stopProbe.Token), token);
        // The move starts once the probe is writing, so even a move shorter than one probe interval is timed
        // against at least one insert (on a busy machine the probe's task could otherwise start after the move).
        // A probe that failed before writing ends the wait too; its error surfaces where it is awaited below.
        await Task.WhenAny(probeWriting.Task, probe).WaitAsync(token);
        var cpu = new CpuMeter();
        var clock = Stopwatch.StartNew();
        long moved = method == SaitoMethod
            ? await SaitoAsync(database.Options, threads, done => progress($"{method}, {threads} thread(s)", done, Rows), token)
            : await SetBasedAsync(database.Options, threads, done => progress($"{method}, {threads} thread(s)", done, Rows), token);
        double seconds = clock.Elapsed.TotalSeconds;
        var cores = cpu.Cores();
        await stopProbe.CancelAsync();
        var (waits, probeRows) = await probe;

        long hot = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
        long archived = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Archive, token);
        return new ArchiveMeasure(method, threads, moved, seconds, hot - Recent - probeRows, archived, waits, cores);
    }

    private Task<long> SaitoAsync(StorageOptions options, int threads, Action<long> progress, CancellationToken token) =>
        TierRunners.RunArchiverAsync(options, loggers, Cutoff, threads, batchRows, Path.Combine(target.WorkDirectory, $"exports-{Environment.ProcessId}-{threads}"),
            progress, token);

    private string Columns => (target.Keys == KeyStrategy.Natural ? string.Empty : "id, ") + BulkReadings.CopyColumns;

    private static (int First, int Last) DeviceRange(int slice, int threads) =>
        (1 + (slice * BulkReadings.Devices / threads), (slice + 1) * BulkReadings.Devices / threads);

    private async Task<long> SetBasedAsync(StorageOptions options, int threads, Action<long> progress, CancellationToken token)
    {
        string exports = Path.Combine(target.WorkDirectory, $"set-based-{Environment.ProcessId}-{threads}");
        Directory.CreateDirectory(exports);
        long moved = 0;
        try
        {
            await Task.WhenAll(Enumerable.Range(0, threads).Select(slice => Task.Run(async () =>
            {
                var (first, last) = DeviceRange(slice, threads);
                string file = Path.Combine(exports, $"biosensor-{slice:D2}.csv");
                long n = target.Database == StorageProvider.Postgres
                    ? await PostgresMoveAsync(options, first, last, file, token)
                    : SqliteMove(options, first, last, file);
                progress(Interlocked.Add(ref moved, n));
            }, token)));
        }
        finally
        {
            Directory.Delete(exports, recursive: true);
        }

        return moved;
    }

    private async Task<long> PostgresMoveAsync(StorageOptions options, int first, int last, string file, CancellationToken token)
    {
        string hot = ReadingTables.TableName(ReadingKind.Biosensor, target.Keys, StorageTier.Hot);
        string archive = ReadingTables.TableName(ReadingKind.Biosensor, target.Keys, StorageTier.Archive);
        string where = string.Create(CultureInfo.InvariantCulture, $"device_id BETWEEN {first} AND {last} AND ts < '{Cutoff:yyyy-MM-dd HH:mm:ss.ffffff}+00'");
        await using var connection = new NpgsqlConnection(options.ConnectionString);
        await connection.OpenAsync(token);
        // Export, as psql's \copy does it: COPY ... TO STDOUT streamed into a local file.
        using (var export = await connection.BeginTextExportAsync($"COPY (SELECT {Columns} FROM {hot} WHERE {where}) TO STDOUT (FORMAT csv, HEADER)", token))
        await using (var output = new StreamWriter(file, append: false, new UTF8Encoding(false), 1 << 20))
        {
            var buffer = new char[1 << 16];
            int read;
            while ((read = await export.ReadAsync(buffer, token)) > 0)
            {
                await output.WriteAsync(buffer.AsMemory(0, read), token);
            }
        }

        await using var move = new NpgsqlCommand(
            $"WITH moved AS (DELETE FROM {hot} WHERE {where} RETURNING {Columns}) INSERT INTO {archive} ({Columns}) SELECT {Columns} FROM moved", connection)
        {
            CommandTimeout = 0,
        };
        return await move.ExecuteNonQueryAsync(token);
    }

    private long SqliteMove(StorageOptions options, int first, int last, string file)
    {
        string hotFile = Path.GetFullPath(Path.Combine(options.HotPath, SqliteSchema.HotFileName));
        string archiveFile = Path.GetFullPath(Path.Combine(options.ArchivePath, SqliteSchema.ArchiveFileName));
        string hot = ReadingTables.TableName(ReadingKind.Biosensor, target.Keys, StorageTier.Hot);
        string archive = ReadingTables.TableName(ReadingKind.Biosensor, target.Keys, StorageTier.Archive);
        long cutoff = ReadingTime.ToUnixMicroseconds(Cutoff);
        string where = string.Create(CultureInfo.InvariantCulture, $"device_id BETWEEN {first} AND {last} AND ts < {cutoff}");
        using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = hotFile, Pooling = false, DefaultTimeout = 600 }.ToString());
        connection.Open();
        using (var setup = connection.CreateCommand())
        {
            setup.CommandText = $"PRAGMA busy_timeout = 600000; PRAGMA synchronous = {target.Synchronous.ToString().ToUpperInvariant()}; " +
                $"ATTACH DATABASE '{archiveFile.Replace("'", "''", StringComparison.Ordinal)}' AS arch; PRAGMA arch.synchronous = {target.Synchronous.ToString().ToUpperInvariant()};";
            setup.ExecuteNonQuery();
        }

        // Export: a plain SELECT written to CSV (SQLite has no COPY; this is what the sqlite3 shell's .mode csv does).
        using (var select = connection.CreateCommand())
        using (var output = new StreamWriter(file, append: false, new UTF8Encoding(false), 1 << 20))
        {
            select.CommandText = $"SELECT {Columns} FROM {hot} WHERE {where}";
            using var reader = select.ExecuteReader();
            output.WriteLine(Columns.Replace(" ", string.Empty, StringComparison.Ordinal));
            var line = new StringBuilder(160);
            while (reader.Read())
            {
                line.Clear();
                for (int i = 0; i < reader.FieldCount; i++)
                {
                    if (i > 0)
                    {
                        line.Append(',');
                    }

                    if (!reader.IsDBNull(i))
                    {
                        object value = reader.GetValue(i);
                        line.Append(value is byte[] bytes ? Convert.ToHexString(bytes) : Convert.ToString(value, CultureInfo.InvariantCulture));
                    }
                }

                output.WriteLine(line);
            }
        }

        using var transaction = connection.BeginTransaction(deferred: false);
        using var move = connection.CreateCommand();
        move.Transaction = transaction;
        move.CommandText = $"INSERT INTO arch.{archive} ({Columns}) SELECT {Columns} FROM main.{hot} WHERE {where}";
        long inserted = move.ExecuteNonQuery();
        move.CommandText = $"DELETE FROM main.{hot} WHERE {where}";
        long deleted = move.ExecuteNonQuery();
        transaction.Commit();
        if (inserted != deleted)
        {
            throw new InvalidOperationException($"set-based move of devices {first}..{last}: inserted {inserted} rows but deleted {deleted}.");
        }

        return deleted;
    }

    /// <summary>
    /// Writes 256 new readings (one second of the class, after every seeded row) every 10 ms until stopped, timing
    /// each write; returns the waits and the rows it wrote. <paramref name="writing"/> is set as the first write starts,
    /// and that write is made even if <paramref name="stop"/> is already cancelled.
    /// </summary>
    private static async Task<(InsertWaits Waits, long Rows)> ProbeAsync(IReadingStore store, long firstRow, TaskCompletionSource writing, CancellationToken stop)
    {
        var ids = Enumerable.Range(1, BulkReadings.Devices).ToArray();
        var rows = new Reading[ProbeRows];
        var batch = new ReadingBatch();
        var waits = new List<double>();
        long next = firstRow;
        do
        {
            BulkReadings.Fill(rows, next, ids);
            batch.Clear();
            foreach (var row in rows)
            {
                batch.Add(row);
            }

            long start = Stopwatch.GetTimestamp();
            writing.TrySetResult();
            // Not cancelled mid-write: a write that has started is finished and counted.
            await store.WriteAsync(batch, CancellationToken.None);
            waits.Add(Stopwatch.GetElapsedTime(start).TotalMilliseconds);
            next += ProbeRows;
            try
            {
                await Task.Delay(10, stop);
            }
            catch (OperationCanceledException)
            {
                break;
            }
        }
        while (!stop.IsCancellationRequested);

        waits.Sort();
        double At(double q) => waits.Count == 0 ? 0 : waits[Math.Min(waits.Count - 1, (int)Math.Ceiling(q * waits.Count) - 1)];
        return (new InsertWaits(waits.Count, next - firstRow, At(0.50), At(0.99), waits.Count == 0 ? 0 : waits[^1]), next - firstRow);
    }
}

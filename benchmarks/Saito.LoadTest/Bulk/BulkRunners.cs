using System.Diagnostics;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;

namespace Saito.LoadTest.Bulk;

internal sealed record BulkSettings(
    StorageProvider Database, string? PostgresServer, int Rows, int Batch, int Writers, int Rounds, SqliteSynchronous Synchronous,
    string WorkDirectory, string Psql, bool Warmup, bool SortedReference);

/// <summary>One timed load: <paramref name="Writer"/> is <c>saito</c> or the reference (<c>psql \copy</c>, <c>sqlite loop</c>).</summary>
internal sealed record BulkRun(string Writer, int Round, long Rows, long Stored, double Seconds, CpuUse Cores)
{
    public double RowsPerSecond => Rows / Seconds;
}

/// <summary>
/// The loads <c>bulk</c> compares. Every run gets a fresh database whose schema Saito's store creates, so the
/// reference writes into exactly the table Saito writes into; only the timed part differs.
/// </summary>
internal sealed class BulkRunners(BulkSettings settings, Reading[] rows, string? csvPath, ILoggerFactory loggers)
{
    public const string Saito = "saito";
    public string Reference => settings.Database == StorageProvider.Postgres ? "psql \\copy" : settings.SortedReference ? "sqlite loop (sorted)" : "sqlite loop";

    /// <summary>Saito: <see cref="IReadingWriter.WriteAsync"/> of batches of <see cref="BulkSettings.Batch"/> rows from <see cref="BulkSettings.Writers"/> tasks.</summary>
    public async Task<BulkRun> SaitoAsync(int round, Action<long> progress, CancellationToken token)
    {
        await using var fresh = await FreshAsync($"r{round}_saito", token);
        await using var store = ReadingStores.Create(fresh.Options, loggers);
        await BenchSeeder.PrepareAsync(store, token);

        long written = 0;
        int nextBatch = -1;
        int batches = (rows.Length + settings.Batch - 1) / settings.Batch;
        var cpu = new CpuMeter();
        var clock = Stopwatch.StartNew();
        var writers = Enumerable.Range(0, settings.Writers).Select(_ => Task.Run(async () =>
        {
            var batch = new ReadingBatch();
            int index;
            while ((index = Interlocked.Increment(ref nextBatch)) < batches)
            {
                batch.Clear();
                int from = index * settings.Batch;
                int to = Math.Min(rows.Length, from + settings.Batch);
                for (int i = from; i < to; i++)
                {
                    batch.Add(rows[i]);
                }

                await store.WriteAsync(batch, token);
                progress(Interlocked.Add(ref written, to - from));
            }
        }, token)).ToArray();
        await Task.WhenAll(writers);
        double seconds = clock.Elapsed.TotalSeconds;
        var cores = cpu.Cores();

        long stored = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
        return new BulkRun(Saito, round, rows.Length, stored, seconds, cores);
    }

    /// <summary>The reference on this database: psql's <c>\copy</c> for PostgreSQL, a prepared-statement loop for SQLite.</summary>
    public Task<BulkRun> ReferenceAsync(int round, Action<long> progress, CancellationToken token) =>
        settings.Database == StorageProvider.Postgres ? PsqlCopyAsync(round, token) : SqliteLoopAsync(round, progress, token);

    /// <summary>
    /// psql <c>\copy reading_biosensor (...) FROM 'rows.csv' WITH (FORMAT csv)</c> into the same fresh table: one COPY
    /// of every row in one transaction, timed from starting psql to its exit.
    /// </summary>
    private async Task<BulkRun> PsqlCopyAsync(int round, CancellationToken token)
    {
        await using var fresh = await FreshAsync($"r{round}_copy", token);
        await using (var store = ReadingStores.Create(fresh.Options, loggers))
        {
            await BenchSeeder.PrepareAsync(store, token);
        }

        string table = ReadingTables.TableName(ReadingKind.Biosensor, fresh.Options.KeyStrategy, StorageTier.Hot);
        string copy = $"\\copy {table} ({BulkReadings.CopyColumns}) FROM '{csvPath}' WITH (FORMAT csv)";
        var cpu = new CpuMeter();
        var elapsed = await PostgresTools.RunPsqlAsync(settings.Psql, fresh.Options.ConnectionString!, copy, token);
        var cores = cpu.Cores();

        await using var counter = ReadingStores.Create(fresh.Options, loggers);
        long stored = await counter.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
        return new BulkRun(Reference, round, rows.Length, stored, elapsed.TotalSeconds, cores);
    }

    /// <summary>
    /// A plain loop over Microsoft.Data.Sqlite into the same fresh file and table: one prepared <c>INSERT</c>,
    /// one transaction per <see cref="BulkSettings.Batch"/> rows, WAL and the same <c>synchronous</c> as the store.
    /// Rows go in the order they arrive (the store sorts each batch by key; this loop does not).
    /// </summary>
    private async Task<BulkRun> SqliteLoopAsync(int round, Action<long> progress, CancellationToken token)
    {
        await using var fresh = await FreshAsync($"r{round}_loop", token);
        await using (var store = ReadingStores.Create(fresh.Options, loggers))
        {
            await BenchSeeder.PrepareAsync(store, token);
        }

        string file = Path.GetFullPath(Path.Combine(fresh.Options.HotPath, SqliteSchema.HotFileName));
        string table = ReadingTables.TableName(ReadingKind.Biosensor, fresh.Options.KeyStrategy, StorageTier.Hot);
        // Microsoft.Data.Sqlite's async methods only wrap the synchronous ones; the plain loop calls those directly.
        var run = await Task.Run(() => SqliteLoop(round, file, table, progress, token), token);

        await using var counter = ReadingStores.Create(fresh.Options, loggers);
        long stored = await counter.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
        return run with { Stored = stored };
    }

    private BulkRun SqliteLoop(int round, string file, string table, Action<long> progress, CancellationToken token)
    {
        using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = file, Pooling = false }.ToString());
        connection.Open();
        using (var pragmas = connection.CreateCommand())
        {
            pragmas.CommandText = $"PRAGMA journal_mode = WAL; PRAGMA synchronous = {(settings.Synchronous == SqliteSynchronous.Normal ? "NORMAL" : "FULL")};";
            pragmas.ExecuteNonQuery();
        }

        using var insert = connection.CreateCommand();
        insert.CommandText = $"INSERT INTO {table} ({BulkReadings.CopyColumns}) VALUES ($d, $c, $t, $hr, $sys, $dia, $temp, $r)";
        var d = insert.Parameters.Add("$d", SqliteType.Integer);
        var c = insert.Parameters.Add("$c", SqliteType.Integer);
        var t = insert.Parameters.Add("$t", SqliteType.Integer);
        var hr = insert.Parameters.Add("$hr", SqliteType.Real);
        var sys = insert.Parameters.Add("$sys", SqliteType.Real);
        var dia = insert.Parameters.Add("$dia", SqliteType.Real);
        var temp = insert.Parameters.Add("$temp", SqliteType.Real);
        var r = insert.Parameters.Add("$r", SqliteType.Integer);
        insert.Prepare();

        var keys = new UInt128[settings.Batch];
        var order = new int[settings.Batch];
        var cpu = new CpuMeter();
        var clock = Stopwatch.StartNew();
        for (int from = 0; from < rows.Length; from += settings.Batch)
        {
            token.ThrowIfCancellationRequested();
            int to = Math.Min(rows.Length, from + settings.Batch);
            int count = to - from;
            for (int i = 0; i < count; i++)
            {
                order[i] = from + i;
                if (settings.SortedReference)
                {
                    ref readonly var row = ref rows[from + i];
                    keys[i] = new UInt128(((ulong)(uint)row.DeviceId << 32) | (uint)row.Channel, (ulong)row.Timestamp.Ticks);
                }
            }

            if (settings.SortedReference)
            {
                // --sorted-reference: the loop too writes each batch in primary-key order, as Saito's store does.
                keys.AsSpan(0, count).Sort(order.AsSpan(0, count));
            }

            using (var transaction = connection.BeginTransaction())
            {
                insert.Transaction = transaction;
                for (int i = 0; i < count; i++)
                {
                    ref readonly var row = ref rows[order[i]];
                    d.Value = row.DeviceId;
                    c.Value = row.Channel;
                    t.Value = ReadingTime.ToUnixMicroseconds(row.Timestamp);
                    hr.Value = row.V0!.Value;
                    sys.Value = row.V1!.Value;
                    dia.Value = row.V2!.Value;
                    temp.Value = row.V3!.Value;
                    r.Value = ReadingTime.ToUnixMicroseconds(row.ReceivedAt);
                    insert.ExecuteNonQuery();
                }

                transaction.Commit();
            }

            progress(to);
        }

        double seconds = clock.Elapsed.TotalSeconds;
        var cores = cpu.Cores();
        return new BulkRun(Reference, round, rows.Length, 0, seconds, cores);
    }

    private async Task<FreshDatabase> FreshAsync(string purpose, CancellationToken token)
    {
        if (settings.Database == StorageProvider.Postgres)
        {
            string name = PostgresTools.Name("bulk_" + purpose);
            string cs = await PostgresDatabases.CreateAsync(settings.PostgresServer!, name, token);
            return new FreshDatabase(
                new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = cs, Writers = settings.Writers, BatchSize = settings.Batch },
                async () => await PostgresDatabases.DropAsync(settings.PostgresServer!, name, CancellationToken.None));
        }

        string dir = Path.Combine(settings.WorkDirectory, purpose);
        if (Directory.Exists(dir))
        {
            Directory.Delete(dir, recursive: true);
        }

        var options = new StorageOptions
        {
            Provider = StorageProvider.Sqlite,
            HotPath = Path.Combine(dir, "hot"),
            ArchivePath = Path.Combine(dir, "archive"),
            Writers = settings.Writers,
            BatchSize = settings.Batch,
        };
        options.Sqlite.Synchronous = settings.Synchronous;
        return new FreshDatabase(options, () =>
        {
            SqliteConnection.ClearAllPools();
            Directory.Delete(dir, recursive: true);
            return ValueTask.CompletedTask;
        });
    }

    private sealed class FreshDatabase(StorageOptions options, Func<ValueTask> drop) : IAsyncDisposable
    {
        public StorageOptions Options { get; } = options;

        public ValueTask DisposeAsync() => drop();
    }
}

using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Filters;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Benchmarks;

/// <summary>
/// <see cref="IReadingWriter.WriteAsync"/>, one writer, committing <see cref="BulkWriterWorkload.BatchSize"/> new
/// biosensor readings per invocation in one transaction (natural key). <c>OperationsPerInvoke</c> makes Mean and
/// Allocated per reading: <c>1e9 / Mean</c> is readings per second for one writer, commit (and its fsync) included.
/// <para>
/// Each run starts on a fresh database; every invocation writes readings no earlier invocation wrote (no duplicate
/// conflicts), stamped after them, so the table grows at its end by 5,000 rows per invocation, to a few million
/// rows by the end of a default run. That growth is deliberate (production tables grow too) and costs little in
/// time-ordered B-trees; compare runs of the same job only. Filling the batch (5,000 <see cref="Reading"/>
/// structs into a reused <see cref="ReadingBatch"/>) is inside the measurement and is about 1% of it.
/// </para>
/// </summary>
[MemoryDiagnoser]
public abstract class BulkWriterBenchmarks
{
    private protected BulkWriterWorkload? Workload { get; set; }

    [Benchmark(OperationsPerInvoke = BulkWriterWorkload.BatchSize)]
    public Task<BatchWriteResult> WriteBatch() => Workload!.WriteNextAsync();

    [GlobalCleanup]
    public async Task CleanupAsync()
    {
        if (Workload is not null)
        {
            await Workload.DisposeAsync();
            Workload = null;
        }
    }
}

/// <summary>The SQLite store: prepared <c>INSERT OR IGNORE</c>s in one <c>BEGIN IMMEDIATE</c> transaction, WAL.</summary>
public class SqliteBulkWriterBenchmarks : BulkWriterBenchmarks
{
    /// <summary><c>full</c> syncs the WAL at every commit (the default); <c>normal</c> only at checkpoints.</summary>
    [Params(SqliteSynchronous.Full, SqliteSynchronous.Normal)]
    public SqliteSynchronous Synchronous { get; set; }

    [GlobalSetup]
    public async Task SetupAsync() => Workload = await BulkWriterWorkload.SqliteAsync(Synchronous);
}

/// <summary>
/// The PostgreSQL store on the server named by <c>SAITO_BENCH_POSTGRES</c> (a connection string whose user may
/// create databases); each run gets its own database, dropped afterwards. Without the variable it is skipped,
/// and says so.
/// </summary>
[Config(typeof(PostgresBenchmarkConfig))]
public class PostgresBulkWriterBenchmarks : BulkWriterBenchmarks
{
    public const string Variable = "SAITO_BENCH_POSTGRES";

    [GlobalSetup]
    public async Task SetupAsync() =>
        Workload = await BulkWriterWorkload.PostgresAsync(Environment.GetEnvironmentVariable(Variable)
            ?? throw new InvalidOperationException($"{Variable} is not set"));
}

/// <summary>Leaves the PostgreSQL benchmark out, with a message, when <c>SAITO_BENCH_POSTGRES</c> is unset.</summary>
public sealed class PostgresBenchmarkConfig : ManualConfig
{
    private static int s_told;

    public PostgresBenchmarkConfig()
    {
        AddFilter(new SimpleFilter(_ =>
        {
            if (!string.IsNullOrWhiteSpace(Environment.GetEnvironmentVariable(PostgresBulkWriterBenchmarks.Variable)))
            {
                return true;
            }

            if (Interlocked.Exchange(ref s_told, 1) == 0)
            {
                Console.WriteLine($"// {nameof(PostgresBulkWriterBenchmarks)} skipped: set {PostgresBulkWriterBenchmarks.Variable} to a PostgreSQL " +
                    "connection string whose user may create databases, e.g. \"Host=127.0.0.1;Port=55600;Username=postgres\".");
            }

            return false;
        }));
    }
}

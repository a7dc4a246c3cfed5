using BenchmarkDotNet.Attributes;
using Saito.Ingestion.Pipeline;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Benchmarks;

/// <summary>
/// From parsed readings to a batch ready for a store, <see cref="ReadingWorkload.BatchSize"/> readings per
/// invocation, arriving as messages of <see cref="ReadingsPerMessage"/> readings (<see cref="ReadingWorkload.Messages"/>).
/// <c>OperationsPerInvoke</c> makes <b>Mean and Allocated per reading</b>; a batch costs 5,000 times that.
/// <list type="bullet">
/// <item><see cref="Gather"/>: what <see cref="ReadingWriterPool"/>'s writer loop does with each
/// <see cref="PendingMessage"/> it takes from the queue: add its readings and dead letters to its reused
/// <see cref="ReadingBatch"/>. The loop is private to the pool, so these are its three lines, over the real types.</item>
/// <item><see cref="GatherAndOrder"/>: that, then what the SQLite and PostgreSQL stores do before their first row
/// leaves (<see cref="OrderingStore.Order"/>: the <c>ReadingOrder</c> of every kind, keys derived and sorted).</item>
/// <item><see cref="ThroughWriterPool"/>: the real path end to end: each message submitted to a running
/// <see cref="ReadingWriterPool"/> (bounded-queue gate, channel, one writer gathering the batch), written by an
/// <see cref="OrderingStore"/>, and every message's completion awaited: the cost of the pipeline around a commit
/// that takes no time.</item>
/// </list>
/// The natural key sorts on (device, channel, ts); the GUID keys on their bytes as PostgreSQL and SQLite compare
/// them. SQL Server's store sorts nothing (its per-row key is <see cref="KeyDerivationBenchmarks"/>).
/// </summary>
[MemoryDiagnoser]
public class BatchAssemblyBenchmarks
{
    private const string Topic = "saito/hub-1/wrist-17/biosensor";
    private const string ClientId = "hub-1";

    private readonly ReadingBatch _batch = new();
    private readonly List<DeadLetter> _noDeadLetters = [];
    private List<Reading>[] _parsed = [];
    private PendingMessage[] _queued = [];
    private Task[] _completions = [];
    private WriterPoolRig? _rig;

    /// <summary>1: a sensor that publishes each reading; 100: a hub's batched message (as <see cref="ParsingBenchmarks"/>).</summary>
    [Params(1, 100)]
    public int ReadingsPerMessage { get; set; }

    /// <summary>The key the tables use (named so that a <c>*Key*</c> filter selects <see cref="KeyDerivationBenchmarks"/> only).</summary>
    [Params(KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid)]
    public KeyStrategy Strategy { get; set; }

    [GlobalSetup(Targets = [nameof(Gather), nameof(GatherAndOrder)])]
    public void Setup()
    {
        _parsed = ReadingWorkload.Messages(ReadingsPerMessage);
        _queued = [.. _parsed.Select(readings => new PendingMessage(Topic, ClientId, ReadOnlyMemory<byte>.Empty, readings, _noDeadLetters))];
        if (Gather() != ReadingWorkload.BatchSize)
        {
            throw new InvalidOperationException($"the batch holds {_batch.ReadingCount} readings, not {ReadingWorkload.BatchSize}");
        }
    }

    [GlobalSetup(Target = nameof(ThroughWriterPool))]
    public async Task SetupPoolAsync()
    {
        _parsed = ReadingWorkload.Messages(ReadingsPerMessage);
        _completions = new Task[_parsed.Length];
        _rig = await WriterPoolRig.StartAsync(Strategy);

        // Fail fast unless one invocation is exactly one full batch: smaller batches measure another thing.
        await ThroughWriterPool();
        if (_rig.Store.Batches != 1 || _rig.Store.ReadingsWritten != ReadingWorkload.BatchSize)
        {
            throw new InvalidOperationException($"one invocation wrote {_rig.Store.Batches} batches, {_rig.Store.ReadingsWritten} readings");
        }
    }

    [GlobalCleanup(Target = nameof(ThroughWriterPool))]
    public async Task CleanupPoolAsync()
    {
        if (_rig is not null)
        {
            // Each invocation should have been one batch; say so if the writer ever committed a part early.
            Console.WriteLine($"// {nameof(ThroughWriterPool)}: {_rig.Store.Batches} batches, " +
                $"{_rig.Store.ReadingsWritten / Math.Max(1, _rig.Store.Batches)} readings each on average");
            await _rig.DisposeAsync();
            _rig = null;
        }
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = ReadingWorkload.BatchSize)]
    public int Gather()
    {
        var batch = _batch;
        batch.Clear();
        foreach (var message in _queued)
        {
            batch.AddRange(message.Readings);
            batch.DeadLetters.AddRange(message.DeadLetters);
        }

        return batch.ReadingCount;
    }

    [Benchmark(OperationsPerInvoke = ReadingWorkload.BatchSize)]
    public long GatherAndOrder()
    {
        Gather();
        return OrderingStore.Order(_batch, Strategy);
    }

    /// <summary>A new <see cref="PendingMessage"/> per message, as <c>MessageIngestor</c> makes one; the reading lists are the parser's.</summary>
    [Benchmark(OperationsPerInvoke = ReadingWorkload.BatchSize)]
    public async Task<int> ThroughWriterPool()
    {
        var pool = _rig!.Pool;
        var completions = _completions;
        for (int m = 0; m < _parsed.Length; m++)
        {
            completions[m] = pool.SubmitAsync(new PendingMessage(Topic, ClientId, ReadOnlyMemory<byte>.Empty, _parsed[m], _noDeadLetters), CancellationToken.None);
        }

        await Task.WhenAll(completions);
        return completions.Length;
    }
}

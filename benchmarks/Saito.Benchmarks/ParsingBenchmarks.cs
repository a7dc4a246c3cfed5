using BenchmarkDotNet.Attributes;
using Saito.Ingestion;
using Saito.Payloads;
using Saito.Readings;
using Saito.Testing;

namespace Saito.Benchmarks;

/// <summary>
/// <see cref="ReadingParser.Parse"/> on typical hub messages (<see cref="ParsingWorkload"/>), into reused lists as
/// the pipeline holds them. <c>OperationsPerInvoke</c> is the number of readings each message gives, so
/// <b>Mean and Allocated are per reading</b> and <c>1e9 / Mean</c> is readings per second on one core. The target
/// is well under 1 µs per reading (150,000 readings/s end to end on 2 cores) and zero allocation.
/// </summary>
[MemoryDiagnoser]
public class ParsingBenchmarks
{
    private readonly ReadingParser _parser = new(new IngestionOptions(), TimeProvider.System);
    private readonly List<Reading> _readings = new(ParsingWorkload.Batch);
    private readonly List<DeadLetter> _deadLetters = [];
    private byte[] _saitoJsonOne = [];
    private byte[] _saitoJsonBatch = [];
    private byte[] _senMLBatch = [];
    private byte[] _senMLLocationBatch = [];

    [GlobalSetup]
    public void Setup()
    {
        _saitoJsonOne = ParsingWorkload.SaitoJsonOne();
        _saitoJsonBatch = ParsingWorkload.SaitoJsonBatch(ParsingWorkload.Batch);
        _senMLBatch = ParsingWorkload.SenMLBatch(ParsingWorkload.Batch);
        _senMLLocationBatch = ParsingWorkload.SenMLLocationBatch(ParsingWorkload.Batch);

        // Fail fast if a workload stopped being all good: a benchmark of dead letters measures the wrong thing.
        Check(SaitoJsonOne(), 1);
        Check(SaitoJsonArrayOf100(), ParsingWorkload.Batch);
        Check(SenMLOf100Records(), ParsingWorkload.Batch);
        Check(SenMLLocationOf300Records(), ParsingWorkload.Batch);
    }

    [Benchmark(OperationsPerInvoke = 1)]
    public int SaitoJsonOne() => Parse(ReadingKind.Biosensor, _saitoJsonOne);

    [Benchmark(OperationsPerInvoke = ParsingWorkload.Batch)]
    public int SaitoJsonArrayOf100() => Parse(ReadingKind.Biosensor, _saitoJsonBatch);

    [Benchmark(OperationsPerInvoke = ParsingWorkload.Batch)]
    public int SenMLOf100Records() => Parse(ReadingKind.Biosensor, _senMLBatch);

    /// <summary>300 records (x, y, z) merged into 100 location readings.</summary>
    [Benchmark(OperationsPerInvoke = ParsingWorkload.Batch)]
    public int SenMLLocationOf300Records() => Parse(ReadingKind.Location, _senMLLocationBatch);

    private int Parse(ReadingKind kind, byte[] payload)
    {
        _readings.Clear();
        var context = new ReadingParseContext(kind, 42, "saito/hub-1/dev-1/x", "hub-1", ParsingWorkload.ReceivedAt, null);
        return _parser.Parse(context, payload, _readings, _deadLetters).Accepted;
    }

    private void Check(int accepted, int expected)
    {
        if (accepted != expected || _deadLetters.Count != 0)
        {
            throw new InvalidOperationException(
                $"workload gave {accepted} readings (expected {expected}) and {_deadLetters.Count} dead letters: {_deadLetters.FirstOrDefault()?.Detail}");
        }
    }
}

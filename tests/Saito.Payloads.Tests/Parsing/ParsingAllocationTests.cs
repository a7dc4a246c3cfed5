using Saito.Readings;

namespace Saito.Payloads.Tests.Parsing;

/// <summary>
/// The good path allocates nothing per message once warm: no strings, no boxes, no per-call lists. A regression
/// fails here without a benchmark run (the same workloads as benchmarks/Saito.Benchmarks/ParsingBenchmarks.cs).
/// </summary>
public sealed class ParsingAllocationTests
{
    public static TheoryData<string, ReadingKind, byte[]> Workloads => new()
    {
        { "saito-json-1", ReadingKind.Biosensor, ParsingWorkload.SaitoJsonOne() },
        { "saito-json-100", ReadingKind.Biosensor, ParsingWorkload.SaitoJsonBatch(100) },
        { "senml-100", ReadingKind.Biosensor, ParsingWorkload.SenMLBatch(100) },
        { "senml-location-100", ReadingKind.Location, ParsingWorkload.SenMLLocationBatch(100) },
    };

    [Theory]
    [MemberData(nameof(Workloads))]
    public void A_good_message_allocates_nothing_once_warm(string name, ReadingKind kind, byte[] bytes)
    {
        var parser = new ReadingParser(new PayloadLimits(), TimeProvider.System);
        var context = new ReadingParseContext(kind, 42, "saito/hub-1/dev-1/x", "c", ParsingWorkload.ReceivedAt, null);
        var readings = new List<Reading>(1_000);
        var deadLetters = new List<DeadLetter>();

        long least = long.MaxValue;
        for (int pass = 0; pass < 5; pass++)
        {
            readings.Clear();
            long before = GC.GetAllocatedBytesForCurrentThread();
            var result = parser.Parse(context, bytes, readings, deadLetters);
            least = Math.Min(least, GC.GetAllocatedBytesForCurrentThread() - before);
            result.Rejected.ShouldBe(0, name);
            result.Accepted.ShouldBeGreaterThan(0);
        }

        least.ShouldBe(0, $"{name} allocated {least} bytes per message");
    }
}

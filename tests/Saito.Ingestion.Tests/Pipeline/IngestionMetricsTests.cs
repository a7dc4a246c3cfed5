using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Readings;

namespace Saito.Ingestion.Tests.Pipeline;

/// <summary>
/// The ingestion instruments record what the pipeline did with the attributes docs/metrics.md names, and recording
/// allocates nothing while a listener (OpenTelemetry in the server) is attached: the hot path runs at hundreds of
/// thousands of readings a second.
/// </summary>
public sealed class IngestionMetricsTests : IDisposable
{
    private readonly ServiceProvider _services = new ServiceCollection().AddMetrics().BuildServiceProvider();
    private readonly MeterListener _listener = new();
    private readonly Dictionary<string, long> _sums = new(StringComparer.Ordinal);
    private readonly IngestionMetrics _metrics;

    /// <summary>When set, the listener only counts measurements (its own bookkeeping would allocate).</summary>
    private bool _countOnly;
    private long _measurements;

    public IngestionMetricsTests()
    {
        var factory = _services.GetRequiredService<IMeterFactory>();
        _metrics = new IngestionMetrics(factory);
        // Only this test's meter: other tests in the process start Saitos with meters of the same name.
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (ReferenceEquals(instrument.Meter.Scope, factory))
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.SetMeasurementEventCallback<int>((instrument, value, tags, _) => Add(instrument, value, tags));
        _listener.SetMeasurementEventCallback<double>((instrument, _, tags, _) => Add(instrument, 1, tags));
        _listener.Start();
    }

    public void Dispose()
    {
        _listener.Dispose();
        _services.Dispose();
    }

    [Fact]
    public void Readings_are_counted_by_kind_and_dead_letters_by_reason_and_kind()
    {
        var batch = TestReadings.Batch([.. TestReadings.Of(ReadingKind.Biosensor, 7), .. TestReadings.Of(ReadingKind.Pressure, 3)]);

        _metrics.Received(ReadingKind.Biosensor, 7);
        _metrics.Received(ReadingKind.Pressure, 3);
        _metrics.DeadLettered(DeadLetterReasons.OutOfRange, (int)ReadingKind.Pressure, 2);
        _metrics.DeadLettered(DeadLetterReasons.BadTopic, IngestionMetrics.UnknownKindIndex);
        _metrics.Committed(batch, inserted: 9, duplicates: 1, seconds: 0.004);

        _listener.RecordObservableInstruments();
        Sum("saito.ingestion.readings.received", "kind=biosensor").ShouldBe(7);
        Sum("saito.ingestion.readings.received", "kind=pressure").ShouldBe(3);
        Sum("saito.ingestion.readings.stored", "kind=biosensor").ShouldBe(7);
        Sum("saito.ingestion.readings.stored", "kind=pressure").ShouldBe(3);
        Sum("saito.ingestion.readings.duplicate", "").ShouldBe(1);
        Sum("saito.ingestion.dead_letters", "reason=out-of-range,kind=pressure").ShouldBe(2);
        Sum("saito.ingestion.dead_letters", "reason=bad-topic,kind=unknown").ShouldBe(1);
        Sum("saito.ingestion.batch.size", "").ShouldBe(10);
        Sum("saito.ingestion.commit.duration", "").ShouldBe(1, "one commit recorded");
        _metrics.ReadingsStoredTotal.ShouldBe(9);
        _metrics.RejectedTotal.ShouldBe(3);
    }

    [Fact]
    public void Recording_a_message_and_a_batch_allocates_nothing()
    {
        var batch = TestReadings.Batch([.. TestReadings.Of(ReadingKind.Location, 50), .. TestReadings.Of(ReadingKind.Biosensor, 50)]);
        void Record()
        {
            _metrics.Message();
            _metrics.Received(ReadingKind.Location, 50);
            _metrics.DeadLettered(DeadLetterReasons.WrongType, (int)ReadingKind.Biosensor);
            _metrics.Committed(batch, inserted: 100, duplicates: 0, seconds: 0.002);
            _metrics.QueueToCommit(0.003);
        }

        Record();
        _countOnly = true;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int i = 0; i < 1000; i++)
        {
            Record();
        }

        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        allocated.ShouldBe(0, "bytes allocated by 1,000 messages' and batches' recordings");
        // Per round: dead_letters, stored (two kinds), batches, batch.size, commit.duration, queue_to_commit.duration. Messages
        // and readings received are counted in place and read when the collector asks.
        _measurements.ShouldBe(1000 * 7);
        _countOnly = false;
        _listener.RecordObservableInstruments();
        Sum("saito.ingestion.messages", "").ShouldBe(1001);
        Sum("saito.ingestion.readings.received", "kind=location").ShouldBe(1001 * 50);
    }

    private long Sum(string instrument, string tags) => _sums.GetValueOrDefault(instrument + "|" + tags);

    private void Add(Instrument instrument, long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (_countOnly)
        {
            _measurements++;
            return;
        }

        string key = instrument.Name + "|" + Tags(tags);
        _sums[key] = _sums.GetValueOrDefault(key) + value;
    }

    private static string Tags(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var parts = new string[tags.Length];
        for (int i = 0; i < tags.Length; i++)
        {
            parts[i] = tags[i].Key + "=" + tags[i].Value;
        }

        return string.Join(",", parts);
    }
}

using System.Collections.Frozen;
using System.Diagnostics.Metrics;
using Saito.Payloads;
using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Saito's ingestion instruments (meter <c>Saito.Ingestion</c>); docs/metrics.md lists them with what to alert on.
/// <para>
/// The hot path runs at hundreds of thousands of readings a second, so what moves once per message (messages,
/// readings received) is a plain interlocked count that the metrics reader collects (observable counters), and what
/// moves per batch (stored) or rarely (dead letters) is recorded then, never once per reading; every attribute set is
/// built once here (a <see cref="KeyValuePair{TKey,TValue}"/> array per kind, per reason and kind) so recording
/// allocates nothing. With no listener (<c>Metrics:Enabled=false</c>) an instrument's Add is a flag check.
/// </para>
/// </summary>
public sealed class IngestionMetrics
{
    public const string MeterName = "Saito.Ingestion";

    /// <summary>The <c>kind</c> of a dead letter whose topic could not be read.</summary>
    public const string UnknownKind = "unknown";

    /// <summary>The <c>reason</c> of a message the database refused outright (see <see cref="ReadingWriterPool"/>).</summary>
    public const string DatabaseRejected = "database-rejected";

    /// <summary>Bucket boundaries for durations in seconds: 0.5 ms to 30 s (commits, queue waits, acknowledgements).</summary>
    public static IReadOnlyList<double> SecondsBuckets { get; } =
        [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

    /// <summary>Bucket boundaries for readings per batch (Storage:BatchSize is 5,000 by default).</summary>
    private static readonly IReadOnlyList<int> s_batchBuckets = [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000];

    private static readonly ReadingKind[] s_readingKinds = [.. ReadingKinds.All];

    /// <summary>Every <c>kind</c> value: the reading kinds (by <see cref="ReadingKind"/>), then hello, checkin, unknown.</summary>
    private static readonly string[] s_kinds = [.. ReadingKinds.All.Select(ReadingKinds.Name), "hello", "checkin", UnknownKind];

    private static readonly KeyValuePair<string, object?>[][] s_kindTags = [.. s_kinds.Select(k => new[] { Tag("kind", k) })];

    /// <summary>Per reason, one tag array per kind (in <see cref="s_kinds"/> order).</summary>
    private static readonly FrozenDictionary<string, KeyValuePair<string, object?>[][]> s_reasonTags =
        DeadLetterReasons.All.Append(DatabaseRejected).ToFrozenDictionary(
            reason => reason,
            reason => s_kinds.Select(kind => new[] { Tag("reason", reason), Tag("kind", kind) }).ToArray(),
            StringComparer.Ordinal);

    private readonly long[] _receivedByKind = new long[s_readingKinds.Length];
    private readonly Counter<long> _readingsStored;
    private readonly Counter<long> _readingsDuplicate;
    private readonly Counter<long> _deadLettered;
    private readonly Counter<long> _batches;
    private readonly Counter<long> _writeRetries;
    private readonly Counter<long> _queueWaits;
    private readonly Histogram<double> _commitSeconds;
    private readonly Histogram<double> _queueToCommitSeconds;
    private readonly Histogram<int> _batchReadings;
    private Func<long>? _queueDepth;
    private long _queueCapacity;
    private long _readingsStoredTotal;
    private long _duplicatesTotal;
    private long _rejectedTotal;
    private long _messagesTotal;
    private long _queueWaitsTotal;
    private long _writeRetriesTotal;

    public IngestionMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);
        var meter = meterFactory.Create(MeterName);
        var seconds = new InstrumentAdvice<double> { HistogramBucketBoundaries = SecondsBuckets };
        // Once per message: an interlocked add here, read by the collector (OpenTelemetry's per-measurement aggregation
        // was 2% of Saito's CPU at 320 sensors sending one reading per message).
        meter.CreateObservableCounter("saito.ingestion.messages", () => Interlocked.Read(ref _messagesTotal), "{message}",
            "MQTT messages taken in on reading, hello and check-in topics");
        meter.CreateObservableCounter("saito.ingestion.readings.received", ReceivedByKind, "{reading}",
            "Readings that parsed and passed validation, queued for the database, by kind");
        _readingsStored = meter.CreateCounter<long>("saito.ingestion.readings.stored", "{reading}",
            "Readings committed to the database (new, or already there from an earlier delivery), by kind");
        _readingsDuplicate = meter.CreateCounter<long>("saito.ingestion.readings.duplicate", "{reading}",
            "Of the readings stored, those already there (redeliveries), skipped; not counted on SQL Server, which cannot say");
        _deadLettered = meter.CreateCounter<long>("saito.ingestion.dead_letters", "{dead_letter}",
            "Dead letters made (a rejected reading, or a whole message that could not be used), by reason and kind; each is committed with its message");
        _batches = meter.CreateCounter<long>("saito.ingestion.batches", "{batch}", "Batches committed");
        _writeRetries = meter.CreateCounter<long>("saito.ingestion.write.retries", "{retry}", "Batch writes retried after a transient database error");
        _commitSeconds = meter.CreateHistogram("saito.ingestion.commit.duration", "s", "Time to commit one batch (retries included)", advice: seconds);
        _queueToCommitSeconds = meter.CreateHistogram("saito.ingestion.queue_to_commit.duration", "s",
            "Time from a message entering the queue to its commit", advice: seconds);
        _batchReadings = meter.CreateHistogram("saito.ingestion.batch.size", "{reading}", "Readings per committed batch",
            advice: new InstrumentAdvice<int> { HistogramBucketBoundaries = s_batchBuckets });
        meter.CreateObservableGauge("saito.ingestion.queue.depth", () => _queueDepth?.Invoke() ?? 0, "{reading}",
            "Readings and dead letters waiting for a writer; publishers wait when it reaches the capacity");
        meter.CreateObservableGauge("saito.ingestion.queue.capacity", () => Interlocked.Read(ref _queueCapacity), "{reading}",
            "Storage:QueueCapacity: the queue depth at which publishers wait");
        _queueWaits = meter.CreateCounter<long>("saito.ingestion.queue.waits", "{message}",
            "Messages whose publisher waited because the queue was full (Storage:QueueCapacity); their acknowledgements were held meanwhile");
    }

    public long ReadingsStoredTotal => Interlocked.Read(ref _readingsStoredTotal);
    public long DuplicatesTotal => Interlocked.Read(ref _duplicatesTotal);
    public long RejectedTotal => Interlocked.Read(ref _rejectedTotal);

    /// <summary>Messages that waited for room in the full queue since start (<c>saito.ingestion.queue.waits</c>).</summary>
    public long QueueWaitsTotal => Interlocked.Read(ref _queueWaitsTotal);

    /// <summary>Database calls retried since start (<c>saito.ingestion.write.retries</c>).</summary>
    public long WriteRetriesTotal => Interlocked.Read(ref _writeRetriesTotal);

    /// <summary>The queue the depth gauge reads (on each collection, not on each message).</summary>
    internal void ObserveQueue(Func<long> depth, long capacity)
    {
        _queueDepth = depth;
        Interlocked.Exchange(ref _queueCapacity, capacity);
    }

    public void Message() => Interlocked.Increment(ref _messagesTotal);

    /// <summary>One message's readings (all of one kind: the topic's).</summary>
    public void Received(ReadingKind kind, int readings)
    {
        if (readings > 0)
        {
            Interlocked.Add(ref _receivedByKind[(int)kind], readings);
        }
    }

    private IEnumerable<Measurement<long>> ReceivedByKind()
    {
        foreach (var kind in s_readingKinds)
        {
            yield return new Measurement<long>(Interlocked.Read(ref _receivedByKind[(int)kind]), s_kindTags[(int)kind]);
        }
    }

    /// <summary>The <c>kind</c> attribute's value for a message on a topic of this kind.</summary>
    internal static int KindIndex(TopicKind kind) => kind switch
    {
        TopicKind.Biosensor => (int)ReadingKind.Biosensor,
        TopicKind.Location => (int)ReadingKind.Location,
        TopicKind.Pressure => (int)ReadingKind.Pressure,
        TopicKind.Hello => 3,
        TopicKind.CheckIn => 4,
        _ => UnknownKindIndex,
    };

    internal const int UnknownKindIndex = 5;

    /// <summary><paramref name="count"/> dead letters with this reason, from a message whose kind is <paramref name="kindIndex"/> (<see cref="KindIndex"/>).</summary>
    public void DeadLettered(string reason, int kindIndex, int count = 1)
    {
        Interlocked.Add(ref _rejectedTotal, count);
        if (!_deadLettered.Enabled)
        {
            return;
        }

        if (s_reasonTags.TryGetValue(reason, out var byKind))
        {
            _deadLettered.Add(count, byKind[kindIndex]);
        }
        else
        {
            _deadLettered.Add(count, Tag("reason", reason), Tag("kind", s_kinds[kindIndex]));
        }
    }

    /// <summary>A committed batch: its readings by kind, what of them was already stored, its size and commit time.</summary>
    public void Committed(ReadingBatch batch, long inserted, long duplicates, double seconds)
    {
        ArgumentNullException.ThrowIfNull(batch);
        Interlocked.Add(ref _readingsStoredTotal, inserted);
        // An array, not ReadingKinds.All: an interface's enumerator is boxed (32 bytes a batch).
        foreach (var kind in s_readingKinds)
        {
            int count = batch.Of(kind).Count;
            if (count > 0)
            {
                _readingsStored.Add(count, s_kindTags[(int)kind]);
            }
        }

        if (duplicates > 0)
        {
            Interlocked.Add(ref _duplicatesTotal, duplicates);
            _readingsDuplicate.Add(duplicates);
        }

        _batches.Add(1);
        _batchReadings.Record(batch.ReadingCount);
        if (seconds > 0)
        {
            _commitSeconds.Record(seconds);
        }
    }

    public void QueueToCommit(double seconds) => _queueToCommitSeconds.Record(seconds);

    /// <summary>Counts a database call retried (<c>saito.ingestion.write.retries</c>); the running total.</summary>
    public long WriteRetried()
    {
        _writeRetries.Add(1);
        return Interlocked.Increment(ref _writeRetriesTotal);
    }

    /// <summary>A message waits for room in the full queue (rare: only while the database falls behind); returns the count since start.</summary>
    internal long QueueWaited()
    {
        _queueWaits.Add(1);
        return Interlocked.Increment(ref _queueWaitsTotal);
    }

    private static KeyValuePair<string, object?> Tag(string key, string value) => new(key, value);
}

using System.Diagnostics.Metrics;

namespace Saito.Ingestion.Pipeline;

/// <summary>Saito's ingestion instruments (meter <c>Saito.Ingestion</c>).</summary>
public sealed class IngestionMetrics
{
    public const string MeterName = "Saito.Ingestion";

    private readonly Counter<long> _messages;
    private readonly Counter<long> _readingsAccepted;
    private readonly Counter<long> _readingsStored;
    private readonly Counter<long> _readingsDuplicate;
    private readonly Counter<long> _rejected;
    private readonly Counter<long> _batches;
    private readonly Counter<long> _writeRetries;
    private readonly Histogram<double> _commitSeconds;
    private readonly Histogram<double> _queueToCommitSeconds;
    private readonly Histogram<int> _batchReadings;
    private long _readingsStoredTotal;
    private long _duplicatesTotal;
    private long _rejectedTotal;

    public IngestionMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);
        var meter = meterFactory.Create(MeterName);
        _messages = meter.CreateCounter<long>("saito.ingestion.messages", "{message}", "MQTT messages taken in on reading topics");
        _readingsAccepted = meter.CreateCounter<long>("saito.ingestion.readings.accepted", "{reading}", "readings that parsed and passed validation");
        _readingsStored = meter.CreateCounter<long>("saito.ingestion.readings.stored", "{reading}", "readings committed that were not stored before");
        _readingsDuplicate = meter.CreateCounter<long>("saito.ingestion.readings.duplicate", "{reading}", "readings already stored (redeliveries), skipped");
        _rejected = meter.CreateCounter<long>("saito.ingestion.rejected", "{reading}", "readings or messages dead-lettered, by reason");
        _batches = meter.CreateCounter<long>("saito.ingestion.batches", "{batch}", "batches committed");
        _writeRetries = meter.CreateCounter<long>("saito.ingestion.write.retries", "{retry}", "batch writes retried after a transient database error");
        _commitSeconds = meter.CreateHistogram<double>("saito.ingestion.commit.duration", "s", "time to commit one batch");
        _queueToCommitSeconds = meter.CreateHistogram<double>("saito.ingestion.queue_to_commit.duration", "s", "time from a message entering the queue to its commit");
        _batchReadings = meter.CreateHistogram<int>("saito.ingestion.batch.readings", "{reading}", "readings per committed batch");
    }

    public long ReadingsStoredTotal => Interlocked.Read(ref _readingsStoredTotal);
    public long DuplicatesTotal => Interlocked.Read(ref _duplicatesTotal);
    public long RejectedTotal => Interlocked.Read(ref _rejectedTotal);

    public void Message() => _messages.Add(1);

    public void Accepted(int readings) => _readingsAccepted.Add(readings);

    public void Rejected(string reason, int count = 1)
    {
        Interlocked.Add(ref _rejectedTotal, count);
        _rejected.Add(count, new KeyValuePair<string, object?>("reason", reason));
    }

    public void Committed(long inserted, long duplicates, int readings, double seconds)
    {
        Interlocked.Add(ref _readingsStoredTotal, inserted);
        _readingsStored.Add(inserted);
        if (duplicates > 0)
        {
            Interlocked.Add(ref _duplicatesTotal, duplicates);
            _readingsDuplicate.Add(duplicates);
        }

        _batches.Add(1);
        _batchReadings.Record(readings);
        _commitSeconds.Record(seconds);
    }

    public void QueueToCommit(double seconds) => _queueToCommitSeconds.Record(seconds);

    public void WriteRetried() => _writeRetries.Add(1);
}

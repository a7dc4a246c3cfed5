using System.Diagnostics;
using System.Threading.Channels;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Polly;
using Saito.Mqtt;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The queue between MQTT and the database, and the writers that drain it. Messages wait in a queue bounded
/// by readings (<see cref="StorageOptions.QueueCapacity"/>); <see cref="StorageOptions.EffectiveWriters"/>
/// writer loops each gather a batch (up to <see cref="StorageOptions.BatchSize"/> readings, or what arrived
/// within <see cref="StorageOptions.BatchAgeMilliseconds"/>), commit it in one transaction through the
/// database's bulk path, and only then complete the messages in it, which releases their acknowledgements.
/// One writer gathers at a time; while another writer is free, a batch closes once it holds its share (BatchSize /
/// writers), so that under load the writers commit side by side instead of one after the other (see GatherAsync).
/// <para>
/// Transient database errors are retried (<see cref="StorageResilience"/>) for as long as it takes; meanwhile
/// the queue fills and publishers wait. A batch the database refuses outright is split into its messages, and
/// a message still refused alone is stored as dead letters (reason <c>database-rejected</c>), so one bad
/// message never holds back the good ones beside it. On shutdown the queue is closed and drained.
/// </para>
/// <para>
/// The schema and the devices are <see cref="StorageStartup"/>'s: nothing is queued before it is done, because the
/// ingestor waits for it before it submits.
/// </para>
/// </summary>
public sealed partial class ReadingWriterPool : BackgroundService
{
    private readonly IReadingWriter _store;
    private readonly StorageOptions _options;
    private readonly StorageHealth _health;
    private readonly IngestionMetrics _metrics;
    private readonly ResiliencePipeline _retry;
    private readonly TimeProvider _time;
    private readonly ILogger<ReadingWriterPool> _logger;
    private readonly Channel<PendingMessage> _queue;
    private readonly CapacityGate _gate;
    private readonly DiskSpaceGuard _diskSpace;
    private readonly ICommittedReadingsObserver[] _observers;
    private readonly CancellationTokenSource _abandon = new();
    private long _queuedMessages;
    private readonly int _share; // readings after which a batch closes while another writer is free
    private int _committingWriters;
    private readonly SemaphoreSlim _gather = new(1, 1);
    private readonly ReportThrottle _queueFullReports = new(QueueFullLogInterval);
    private readonly long[] _writeStartedAt; // per writer: Stopwatch timestamp of the commit in hand, 0 while it has none

    public ReadingWriterPool(IReadingWriter store, IOptions<StorageOptions> options, StorageHealth health,
        IngestionMetrics metrics, StorageResilience resilience, DiskSpaceGuard diskSpace, TimeProvider timeProvider, ILogger<ReadingWriterPool> logger,
        IEnumerable<ICommittedReadingsObserver>? observers = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _options = options.Value;
        _health = health;
        _metrics = metrics;
        _retry = resilience.Pipeline;
        _diskSpace = diskSpace;
        _observers = observers?.ToArray() ?? [];
        _time = timeProvider;
        _logger = logger;
        _queue = Channel.CreateUnbounded<PendingMessage>(new UnboundedChannelOptions { SingleReader = false, SingleWriter = false });
        _gate = new CapacityGate(_options.QueueCapacity);
        _share = Math.Max(1, _options.BatchSize / _options.EffectiveWriters);
        _writeStartedAt = new long[_options.EffectiveWriters];
        metrics.ObserveQueue(() => _gate.Used, _gate.Capacity);
    }

    /// <summary>Readings (and dead letters) waiting for a writer.</summary>
    public long QueuedReadings => _gate.Used;

    public long QueueCapacity => _gate.Capacity;

    public long QueuedMessages => Interlocked.Read(ref _queuedMessages);

    /// <summary>
    /// How long the oldest commit in hand has been going (retries included), zero when no writer has one: a write that
    /// never returns (a database whose processes are frozen, a hung disk) raises no error to report, only this.
    /// Read by /health from the writers' own state, without asking the database.
    /// </summary>
    public TimeSpan LongestWriteInProgress
    {
        get
        {
            long oldest = long.MaxValue;
            for (int i = 0; i < _writeStartedAt.Length; i++)
            {
                long started = Volatile.Read(ref _writeStartedAt[i]);
                if (started != 0 && started < oldest)
                {
                    oldest = started;
                }
            }

            return oldest == long.MaxValue ? TimeSpan.Zero : Stopwatch.GetElapsedTime(oldest);
        }
    }

    /// <summary>How often, at most, a full queue is logged while publishers keep waiting on it.</summary>
    public static TimeSpan QueueFullLogInterval { get; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Queues a message and completes when it is committed. Waits first while the queue is full;
    /// <paramref name="cancellationToken"/> ends only that wait. Once queued, the message ends one of three ways,
    /// each of which completes this: committed (or dead-lettered), refused, or abandoned when shutdown times out
    /// with the database unreachable (<see cref="IngestionStoppedException"/>). So the wait for the commit takes no
    /// token: registering one per message on the broker's shared stopping token, and the extra continuation it brings,
    /// cost 14–18 % of Saito's CPU per reading on PostgreSQL at one reading per message (benchmarks/results/HISTORY.md). The
    /// broker waits up to 5 s for publishes in flight when it stops, and the writers, which stop after it, end them.
    /// </summary>
    internal async Task<WriteOutcome> SubmitAsync(PendingMessage message, CancellationToken cancellationToken)
    {
        var room = _gate.AcquireAsync(message.Weight, cancellationToken);
        if (!room.IsCompleted)
        {
            // The queue is full (the database falls behind): this publisher waits, its acknowledgement held.
            QueueFull();
            await room;
        }

        Interlocked.Increment(ref _queuedMessages);
        if (!_queue.Writer.TryWrite(message))
        {
            Interlocked.Decrement(ref _queuedMessages);
            _gate.Release(message.Weight);
            throw new IngestionStoppedException();
        }

        return await message.Completion;
    }

    /// <summary>
    /// Counts a publisher that waits on the full queue (<c>saito.ingestion.queue.waits</c>) and logs it: the first time,
    /// then at most once per <see cref="QueueFullLogInterval"/>, with the waits since the last line.
    /// </summary>
    private void QueueFull()
    {
        long total = _metrics.QueueWaited();
        if (_queueFullReports.Due(total) is > 0 and var since)
        {
            LogQueueFull(_gate.Capacity, since, total);
        }
    }

    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        // No new messages; the writers drain what is queued. If the host's shutdown timeout fires first (the
        // database is down), the writers give up: those messages were never acknowledged, so hubs send them again.
        _queue.Writer.TryComplete();
        using var registration = cancellationToken.Register(() => _abandon.Cancel());
        await base.StopAsync(cancellationToken);
    }

    public override void Dispose()
    {
        _abandon.Dispose();
        _gather.Dispose();
        base.Dispose();
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var abandon = _abandon.Token;
        int writers = _options.EffectiveWriters;
        LogWriting(_store.KeyStrategy, writers, _options.BatchSize, _options.BatchAgeMilliseconds);
        var loops = new Task[writers];
        for (int i = 0; i < writers; i++)
        {
            int writer = i;
            loops[i] = Task.Run(() => WriterLoopAsync(writer, abandon), CancellationToken.None);
        }

        await Task.WhenAll(loops);
        LogDrained(_metrics.ReadingsStoredTotal);
    }

    private async Task WriterLoopAsync(int writer, CancellationToken abandon)
    {
        var reader = _queue.Reader;
        var batch = new ReadingBatch();
        var messages = new List<PendingMessage>();
        var ageTimer = new AgeTimer();
        try
        {
            while (await GatherAsync(reader, messages, batch, ageTimer, abandon))
            {
                if (messages.Count == 0)
                {
                    continue;
                }

                Volatile.Write(ref _writeStartedAt[writer], Stopwatch.GetTimestamp());
                try
                {
                    await CommitAsync(messages, batch, abandon);
                }
                finally
                {
                    Volatile.Write(ref _writeStartedAt[writer], 0);
                    Interlocked.Decrement(ref _committingWriters);
                }
            }
        }
        catch (OperationCanceledException) when (abandon.IsCancellationRequested)
        {
            // Shutdown timed out with the database unreachable: the batch in hand and what is still queued were never
            // acknowledged. Their publishers' waits end here (a committed message's outcome stands: TrySet is a no-op).
            foreach (var message in messages)
            {
                message.Fail(new IngestionStoppedException());
            }

            int left = 0;
            while (reader.TryRead(out var message))
            {
                message.Fail(new IngestionStoppedException());
                _gate.Release(message.Weight);
                left++;
            }

            if (left > 0)
            {
                LogAbandoned(left);
            }
        }
        finally
        {
            ageTimer.Dispose();
        }
    }

    /// <summary>
    /// Fills <paramref name="messages"/> and <paramref name="batch"/> with the next batch; false once the queue is
    /// closed and empty. One writer gathers at a time (the others wait for <see cref="_gather"/>), so light load is not
    /// split into several batches that each wait for their age. A batch closes at BatchSize readings, when its oldest
    /// message is BatchAgeMilliseconds old, or, while another writer is free, once it holds its share (BatchSize /
    /// writers): the free writer gathers what follows, and the two commit side by side instead of one after the other.
    /// </summary>
    private async ValueTask<bool> GatherAsync(ChannelReader<PendingMessage> reader, List<PendingMessage> messages, ReadingBatch batch,
        AgeTimer ageTimer, CancellationToken abandon)
    {
        messages.Clear();
        batch.Clear();
        await _gather.WaitAsync(abandon);
        try
        {
            if (!await reader.WaitToReadAsync(abandon))
            {
                return false;
            }

            int readings = 0;
            long oldest = 0;
            while (readings < _options.BatchSize)
            {
                if (readings >= _share && Volatile.Read(ref _committingWriters) + 1 < _options.EffectiveWriters)
                {
                    break;
                }

                if (reader.TryRead(out var message))
                {
                    if (messages.Count == 0)
                    {
                        oldest = message.EnqueuedAt;
                    }

                    messages.Add(message);
                    batch.AddRange(message.Readings);
                    batch.DeadLetters.AddRange(message.DeadLetters);
                    readings += message.Weight;
                    continue;
                }

                if (messages.Count == 0)
                {
                    break; // shutdown drained it
                }

                var left = TimeSpan.FromMilliseconds(_options.BatchAgeMilliseconds) - Stopwatch.GetElapsedTime(oldest);
                if (left <= TimeSpan.Zero || !await WaitForMoreAsync(reader, left, ageTimer, abandon))
                {
                    break;
                }
            }

            if (messages.Count > 0)
            {
                // Counted before the next writer may gather, so that it never takes this one for free.
                Interlocked.Increment(ref _committingWriters);
            }

            return true;
        }
        finally
        {
            _gather.Release();
        }
    }

    private static async ValueTask<bool> WaitForMoreAsync(ChannelReader<PendingMessage> reader, TimeSpan wait, AgeTimer timer, CancellationToken abandon)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(timer.Start(wait), abandon);
        try
        {
            return await reader.WaitToReadAsync(linked.Token);
        }
        catch (OperationCanceledException) when (!abandon.IsCancellationRequested)
        {
            return false; // the batch is old enough: write what we have
        }
    }

    private async Task CommitAsync(List<PendingMessage> messages, ReadingBatch batch, CancellationToken abandon)
    {
        long started = Stopwatch.GetTimestamp();
        try
        {
            // Below the free-space watermark, wait (the queue fills, publishers wait) rather than fail mid-write.
            await _diskSpace.WaitForSpaceAsync(abandon);
            var result = await _retry.ExecuteAsync(async ct => await _store.WriteAsync(batch, ct), abandon);
            Succeeded();
            _metrics.Committed(batch, result.Inserted, Math.Max(0, result.Duplicates), Stopwatch.GetElapsedTime(started).TotalSeconds);
            if (result.DeadLetters > batch.DeadLetters.Count)
            {
                // The store's own dead letters: readings whose key was stored with another value (conflicting-reading).
                _metrics.DeadLettered(DeadLetterReasons.ConflictingReading, IngestionMetrics.UnknownKindIndex, result.DeadLetters - batch.DeadLetters.Count);
            }

            NotifyCommitted(batch);

            // The writer goes back to the queue at once; one work item releases the batch's acknowledgements.
            ThreadPool.UnsafeQueueUserWorkItem(new CommittedMessages([.. messages], _metrics), preferLocal: false);
        }
        catch (Exception ex) when (ex is not OperationCanceledException && !_store.IsTransient(ex))
        {
            // The database refused the batch itself (not a passing failure). Find the message it refuses.
            if (messages.Count > 1)
            {
                LogBatchRefused(ex, messages.Count, batch.ReadingCount);
                var single = new ReadingBatch();
                foreach (var message in messages)
                {
                    single.Clear();
                    single.AddRange(message.Readings);
                    single.DeadLetters.AddRange(message.DeadLetters);
                    await CommitOneAsync(message, single, abandon);
                }
            }
            else
            {
                await DeadLetterWholeAsync(messages[0], ex, abandon);
            }
        }
        finally
        {
            foreach (var message in messages)
            {
                _gate.Release(message.Weight);
                Interlocked.Decrement(ref _queuedMessages);
            }
        }
    }

    /// <summary>Marks the database healthy; the first success after failures says so once, with how long they lasted.</summary>
    private void Succeeded()
    {
        var now = _time.GetUtcNow();
        if (_health.MarkSucceeded(now) is { } failingSince)
        {
            LogWritingAgain((now - failingSince).TotalSeconds);
        }
    }

    private void NotifyCommitted(ReadingBatch batch)
    {
        if (batch.ReadingCount == 0)
        {
            return;
        }

        foreach (var observer in _observers)
        {
            try
            {
                observer.OnCommitted(batch);
            }
            catch (Exception ex)
            {
                LogObserverFailed(ex, observer.GetType().Name);
            }
        }
    }

    private async Task CommitOneAsync(PendingMessage message, ReadingBatch batch, CancellationToken abandon)
    {
        try
        {
            var result = await _retry.ExecuteAsync(async ct => await _store.WriteAsync(batch, ct), abandon);
            Succeeded();
            _metrics.Committed(batch, result.Inserted, Math.Max(0, result.Duplicates), 0);
            NotifyCommitted(batch);
            message.Complete(WriteOutcome.Committed);
        }
        catch (Exception ex) when (ex is not OperationCanceledException && !_store.IsTransient(ex))
        {
            await DeadLetterWholeAsync(message, ex, abandon);
        }
    }

    private async Task DeadLetterWholeAsync(PendingMessage message, Exception refusal, CancellationToken abandon)
    {
        var batch = new ReadingBatch();
        batch.DeadLetters.AddRange(message.DeadLetters);
        batch.DeadLetters.Add(DeadLetter.FromPayload(_time.GetUtcNow().UtcDateTime, message.Topic, message.ClientId, IngestionMetrics.DatabaseRejected,
            $"{message.Readings.Count} reading(s) refused by the database: {refusal.GetType().Name}: {refusal.Message}",
            message.Payload.Span));
        LogMessageRefused(refusal, message.Topic, message.Readings.Count);
        try
        {
            await _retry.ExecuteAsync(async ct => await _store.WriteAsync(batch, ct), abandon);
            // The database takes writes: /health no longer says a message is held (it stayed failing until the next commit).
            Succeeded();
            _metrics.DeadLettered(IngestionMetrics.DatabaseRejected, KindIndex(message));
            message.Complete(WriteOutcome.DeadLettered);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // Not even the dead letter could be stored: the message is not acknowledged, so it is not lost.
            message.Fail(ex);
        }
    }

    /// <summary>The <c>kind</c> attribute of a message the database refused: its readings' kind (one per topic), else unknown.</summary>
    private static int KindIndex(PendingMessage message) =>
        message.Readings.Count > 0 ? (int)message.Readings[0].Kind : IngestionMetrics.UnknownKindIndex;

    /// <summary>
    /// Completes a committed batch's messages, each one's continuations (up to its acknowledgement being queued) running
    /// here in turn: one thread-pool hop per batch, not per message.
    /// </summary>
    private sealed class CommittedMessages(PendingMessage[] messages, IngestionMetrics metrics) : IThreadPoolWorkItem
    {
        public void Execute()
        {
            long now = Stopwatch.GetTimestamp(); // one clock read for the batch: they were committed together
            foreach (var message in messages)
            {
                metrics.QueueToCommit(Stopwatch.GetElapsedTime(message.EnqueuedAt, now).TotalSeconds);
                message.Complete(WriteOutcome.Committed);
            }
        }
    }

    /// <summary>One reusable timer per writer for the batch-age wait.</summary>
    private sealed class AgeTimer : IDisposable
    {
        private CancellationTokenSource _source = new();

        public CancellationToken Start(TimeSpan after)
        {
            if (!_source.TryReset())
            {
                _source.Dispose();
                _source = new CancellationTokenSource();
            }

            _source.CancelAfter(after);
            return _source.Token;
        }

        public void Dispose() => _source.Dispose();
    }

    [LoggerMessage(2012, LogLevel.Information, "Writing readings: {KeyStrategy} keys, {Writers} writer(s), batches of up to {BatchSize} readings or {BatchAgeMs} ms")]
    private partial void LogWriting(Saito.Storage.Keys.KeyStrategy keyStrategy, int writers, int batchSize, int batchAgeMs);

    [LoggerMessage(2014, LogLevel.Error, "The database refused a batch of {Messages} messages ({Readings} readings); writing them one message at a time")]
    private partial void LogBatchRefused(Exception exception, int messages, int readings);

    [LoggerMessage(2015, LogLevel.Error, "The database refused the {Readings} reading(s) of a message on {Topic}; stored as a dead letter")]
    private partial void LogMessageRefused(Exception exception, string topic, int readings);

    [LoggerMessage(2016, LogLevel.Warning, "Shutdown timed out with {Messages} message(s) not committed; they were not acknowledged and will be sent again")]
    private partial void LogAbandoned(int messages);

    [LoggerMessage(2018, LogLevel.Warning,
        "The write queue is full ({Capacity} readings, Storage:QueueCapacity): {Waits} publish(es) waited for room since the last report ({Total} since start); their acknowledgements are held until the database catches up")]
    private partial void LogQueueFull(long capacity, long waits, long total);

    [LoggerMessage(2019, LogLevel.Error, "{Observer} failed on a committed batch; the readings are stored, the live view may have missed them")]
    private partial void LogObserverFailed(Exception exception, string observer);

    [LoggerMessage(2020, LogLevel.Information, "Database writes succeed again after {Seconds:F1} s of failures; held acknowledgements are being sent")]
    private partial void LogWritingAgain(double seconds);

    [LoggerMessage(2017, LogLevel.Information, "Writers stopped; {Readings} readings stored since start")]
    private partial void LogDrained(long readings);
}

/// <summary>Saito is shutting down and takes no more messages; they were not acknowledged.</summary>
public sealed class IngestionStoppedException : Exception
{
    public IngestionStoppedException()
        : base("Saito is shutting down and takes no more readings.")
    {
    }

    public IngestionStoppedException(string message)
        : base(message)
    {
    }

    public IngestionStoppedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}

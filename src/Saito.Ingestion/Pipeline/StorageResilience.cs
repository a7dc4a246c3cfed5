using Microsoft.Extensions.Logging;
using Polly;
using Polly.Retry;
using Saito.Mqtt;
using Saito.Storage;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The retry policy every database call on the write path goes through (Polly): transient errors (connection
/// lost, deadlock, timeout, busy, a full disk) are retried for as long as it takes, because a reading that is not
/// committed is not acknowledged and the hub is waiting for it. Each retry marks the storage unhealthy; the next
/// success marks it healthy again.
/// <para>
/// A lost connection is retried with exponential backoff and jitter (a restarting server is not hammered). A storage
/// outage (<see cref="IReadingWriter.IsStorageOutage"/>: the disk or the log is full, an I/O error) is retried every
/// <see cref="StorageOutageRetryDelay"/> instead: a failed write on a full disk costs the database next to nothing,
/// and writing must resume within a second or two of space being freed, not after a backoff grown to seconds.
/// </para>
/// <para>
/// Failures are logged the first time and then at most once per <see cref="LogInterval"/> for all writers together,
/// with how many failed since the last line, and without a stack trace: while a disk is full every batch fails, and a
/// line per failure would fill what is left of it with the log.
/// </para>
/// </summary>
public sealed partial class StorageResilience
{
    /// <summary>How often a write is tried again while the database's storage is full or failing.</summary>
    public static TimeSpan StorageOutageRetryDelay { get; } = TimeSpan.FromMilliseconds(500);

    /// <summary>At most one line per this interval for failed database calls (the count says how many).</summary>
    public static TimeSpan LogInterval { get; } = TimeSpan.FromSeconds(10);

    private readonly ILogger<StorageResilience> _logger;
    private readonly IReadingWriter _store;
    private readonly ReportThrottle _reports = new(LogInterval);

    public StorageResilience(IReadingWriter store, StorageHealth health, IngestionMetrics metrics, TimeProvider timeProvider, ILogger<StorageResilience> logger)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(health);
        ArgumentNullException.ThrowIfNull(metrics);
        ArgumentNullException.ThrowIfNull(timeProvider);
        _logger = logger;
        _store = store;
        Pipeline = new ResiliencePipelineBuilder { TimeProvider = timeProvider }
            .AddRetry(new RetryStrategyOptions
            {
                ShouldHandle = new PredicateBuilder().Handle<Exception>(ex => ex is not OperationCanceledException && store.IsTransient(ex)),
                MaxRetryAttempts = int.MaxValue,
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = TimeSpan.FromMilliseconds(100),
                MaxDelay = TimeSpan.FromSeconds(5),
                DelayGenerator = args => ValueTask.FromResult<TimeSpan?>(
                    args.Outcome.Exception is { } error && store.IsStorageOutage(error) ? StorageOutageRetryDelay : null),
                OnRetry = args =>
                {
                    var error = args.Outcome.Exception;
                    if (args.AttemptNumber == 0)
                    {
                        // Whatever the pools hold idle may be dead too (PostgreSQL restarted); queries must not get it.
                        store.ConnectionsLost();
                    }

                    bool outage = error is not null && store.IsStorageOutage(error);
                    health.MarkFailing(timeProvider.GetUtcNow(), (outage ? "storage full or failing: " : "") + (error?.Message ?? "unknown error"));
                    if (_reports.Due(metrics.WriteRetried()) is > 0 and var since)
                    {
                        LogRetry(since, args.RetryDelay.TotalMilliseconds, error?.GetType().Name, error?.Message);
                    }

                    return ValueTask.CompletedTask;
                },
            })
            .Build();
    }

    public ResiliencePipeline Pipeline { get; }

    /// <summary>Whether <paramref name="exception"/> is one <see cref="Pipeline"/> retries (the database says it may pass).</summary>
    public bool IsTransient(Exception exception) => _store.IsTransient(exception);

    [LoggerMessage(2001, LogLevel.Warning,
        "Database calls failing ({Failures} failed attempt(s) since the last report), retrying in {DelayMs:F0} ms with acknowledgements held: {ErrorType}: {Error}")]
    private partial void LogRetry(long failures, double delayMs, string? errorType, string? error);
}

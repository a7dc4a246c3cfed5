using Microsoft.Extensions.Logging;
using Polly;
using Polly.Retry;
using Saito.Storage;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The retry policy every database call on the write path goes through (Polly): transient errors (connection
/// lost, deadlock, timeout, busy) are retried with exponential backoff and jitter, for as long as it takes,
/// because a reading that is not committed is not acknowledged and the hub is waiting for it. Each retry marks
/// the storage unhealthy; the next success marks it healthy again.
/// </summary>
public sealed partial class StorageResilience
{
    private readonly ILogger<StorageResilience> _logger;

    public StorageResilience(IReadingStore store, StorageHealth health, IngestionMetrics metrics, TimeProvider timeProvider, ILogger<StorageResilience> logger)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(health);
        ArgumentNullException.ThrowIfNull(metrics);
        ArgumentNullException.ThrowIfNull(timeProvider);
        _logger = logger;
        Pipeline = new ResiliencePipelineBuilder { TimeProvider = timeProvider }
            .AddRetry(new RetryStrategyOptions
            {
                ShouldHandle = new PredicateBuilder().Handle<Exception>(ex => ex is not OperationCanceledException && store.IsTransient(ex)),
                MaxRetryAttempts = int.MaxValue,
                BackoffType = DelayBackoffType.Exponential,
                UseJitter = true,
                Delay = TimeSpan.FromMilliseconds(100),
                MaxDelay = TimeSpan.FromSeconds(5),
                OnRetry = args =>
                {
                    var error = args.Outcome.Exception;
                    if (args.AttemptNumber == 0)
                    {
                        // Whatever the pools hold idle may be dead too (PostgreSQL restarted); queries must not get it.
                        store.ConnectionsLost();
                    }

                    health.MarkFailing(timeProvider.GetUtcNow(), error?.Message ?? "unknown error");
                    metrics.WriteRetried();
                    if (args.AttemptNumber < 3 || args.AttemptNumber % 20 == 0)
                    {
                        LogRetry(args.AttemptNumber + 1, args.RetryDelay.TotalMilliseconds, error?.GetType().Name, error?.Message);
                    }

                    return ValueTask.CompletedTask;
                },
            })
            .Build();
    }

    public ResiliencePipeline Pipeline { get; }

    [LoggerMessage(2001, LogLevel.Warning, "Database call failed (attempt {Attempt}), retrying in {DelayMs:F0} ms: {ErrorType}: {Error}")]
    private partial void LogRetry(int attempt, double delayMs, string? errorType, string? error);
}

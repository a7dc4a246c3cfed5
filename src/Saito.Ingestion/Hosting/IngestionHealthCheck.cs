using System.Globalization;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Storage;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// /health for storage, answered from the state the writers keep, never by waiting on the database: unhealthy while
/// the schema is not ready, database writes are failing, or a commit has gone on longer than
/// <see cref="StorageOptions.WriteStallSeconds"/> (acknowledgements are held in each case); degraded when the queue is
/// more than 80% full (publishers are about to be slowed down). When all that is well it also asks the database for a
/// round trip (<see cref="DatabasePing"/>), so that a database that went away while no readings arrived shows too, but
/// waits for it at most <see cref="PingWait"/>: a ping still waiting is reported once it has waited past the stall
/// threshold, and until then the last known state stands. So a check answers within a second whatever the database does.
/// </summary>
internal sealed class IngestionHealthCheck(StorageHealth health, StorageStartup storage, ReadingWriterPool writers, DeviceRegistry registry, DatabasePing ping,
    DiskSpaceGuard diskSpace, IOptions<StorageOptions> options, TimeProvider time) : IHealthCheck
{
    /// <summary>How long a check waits for the database's answer before it reports what it knows.</summary>
    public static TimeSpan PingWait { get; } = TimeSpan.FromMilliseconds(500);

    /// <summary>The whole check's deadline, given to the health check service (<c>AddCheck</c>'s timeout).</summary>
    public static TimeSpan Deadline { get; } = TimeSpan.FromSeconds(1);

    private readonly TimeSpan _stall = TimeSpan.FromSeconds(options.Value.WriteStallSeconds);

    public async Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var result = Evaluate();
        if (result.Status != HealthStatus.Healthy)
        {
            return result;
        }

        var answer = await ping.AskAsync(PingWait, cancellationToken);
        return answer.State switch
        {
            PingState.Failed => HealthCheckResult.Unhealthy($"the database does not answer: {answer.Error}", data: result.Data),
            PingState.Waiting when answer.Waiting >= _stall =>
                HealthCheckResult.Unhealthy($"the database has not answered for {answer.Waiting.TotalSeconds:F0} s", data: result.Data),
            _ => result,
        };
    }

    private HealthCheckResult Evaluate()
    {
        var (failingSince, lastError, lastCommit) = health.Snapshot();
        var data = new Dictionary<string, object>
        {
            ["queuedReadings"] = writers.QueuedReadings,
            ["queueCapacity"] = writers.QueueCapacity,
            ["devices"] = registry.Count,
        };
        if (lastCommit is { } commit)
        {
            data["lastCommit"] = commit.ToString("O", CultureInfo.InvariantCulture);
        }

        if (storage.Ready.IsFaulted)
        {
            return HealthCheckResult.Unhealthy("the database could not be prepared: " + storage.Ready.Exception?.GetBaseException().Message, data: data);
        }

        if (diskSpace.Check() is { } shortage)
        {
            data["freeDiskMegabytes"] = shortage.FreeBytes / (1024 * 1024);
            data["minFreeDiskMegabytes"] = shortage.MinimumBytes / (1024 * 1024);
            return HealthCheckResult.Unhealthy(shortage.Describe(), data: data);
        }

        if (failingSince is { } since)
        {
            data["failingSince"] = since.ToString("O", CultureInfo.InvariantCulture);
            double seconds = (time.GetUtcNow() - since).TotalSeconds;
            return HealthCheckResult.Unhealthy($"database writes failing for {seconds:F0} s (acknowledgements held): {lastError}", data: data);
        }

        var writing = writers.LongestWriteInProgress;
        if (writing >= _stall)
        {
            data["writeInProgressSeconds"] = Math.Round(writing.TotalSeconds, 1);
            return HealthCheckResult.Unhealthy(
                $"a database write has not finished for {writing.TotalSeconds:F0} s, past Storage:WriteStallSeconds ({_stall.TotalSeconds:F0} s): " +
                "the database does not answer (acknowledgements held)", data: data);
        }

        if (!storage.Ready.IsCompletedSuccessfully)
        {
            return HealthCheckResult.Unhealthy("preparing the database", data: data);
        }

        if (writers.QueuedReadings > writers.QueueCapacity * 8 / 10)
        {
            return HealthCheckResult.Degraded("the write queue is over 80% full: publishers are being slowed down", data: data);
        }

        return HealthCheckResult.Healthy("storing readings", data);
    }
}

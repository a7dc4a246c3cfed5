using Microsoft.Extensions.Diagnostics.HealthChecks;
using Saito.Ingestion.Pipeline;
using Saito.Storage;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// /health for storage: unhealthy while the schema is not ready or database writes are failing (acknowledgements
/// are held then), degraded when the queue is more than 80% full (publishers are about to be slowed down). When no
/// writes are failing it also pings the database (a round trip of at most 2 s), so a database that went away while
/// no readings arrived shows too.
/// </summary>
internal sealed class IngestionHealthCheck(StorageHealth health, ReadingWriterPool writers, DeviceRegistry registry, IReadingStore store, DiskSpaceGuard diskSpace,
    TimeProvider time) : IHealthCheck
{
    private static readonly TimeSpan PingTimeout = TimeSpan.FromSeconds(2);

    public async Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var result = Evaluate();
        if (result.Status != HealthStatus.Healthy)
        {
            return result;
        }

        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
            timeout.CancelAfter(PingTimeout);
            await store.PingAsync(timeout.Token);
            return result;
        }
        catch (Exception ex) when (ex is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
        {
            return HealthCheckResult.Unhealthy($"the database does not answer: {ex.Message}", ex, result.Data);
        }
    }

    private HealthCheckResult Evaluate()
    {
        var (schemaReady, failingSince, lastError, lastCommit) = health.Snapshot();
        var data = new Dictionary<string, object>
        {
            ["queuedReadings"] = writers.QueuedReadings,
            ["queueCapacity"] = writers.QueueCapacity,
            ["devices"] = registry.Count,
        };
        if (lastCommit is { } commit)
        {
            data["lastCommit"] = commit.ToString("O", System.Globalization.CultureInfo.InvariantCulture);
        }

        if (writers.Ready.IsFaulted)
        {
            return HealthCheckResult.Unhealthy("the database could not be prepared: " + writers.Ready.Exception?.GetBaseException().Message, data: data);
        }

        if (diskSpace.Check() is { } shortage)
        {
            data["freeDiskMegabytes"] = shortage.FreeBytes / (1024 * 1024);
            data["minFreeDiskMegabytes"] = shortage.MinimumBytes / (1024 * 1024);
            return HealthCheckResult.Unhealthy(shortage.Describe(), data: data);
        }

        if (failingSince is { } since)
        {
            data["failingSince"] = since.ToString("O", System.Globalization.CultureInfo.InvariantCulture);
            double seconds = (time.GetUtcNow() - since).TotalSeconds;
            return HealthCheckResult.Unhealthy($"database writes failing for {seconds:F0} s (acknowledgements held): {lastError}", data: data);
        }

        if (!schemaReady)
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

using Microsoft.Extensions.Diagnostics.HealthChecks;
using Saito.Ingestion.Pipeline;

namespace Saito.Ingestion.Hosting;

/// <summary>
/// /health for storage: unhealthy while the schema is not ready or database writes are failing (acknowledgements
/// are held then), degraded when the queue is more than 80% full (publishers are about to be slowed down).
/// </summary>
internal sealed class IngestionHealthCheck(StorageHealth health, ReadingWriterPool writers, DeviceRegistry registry, TimeProvider time) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var (schemaReady, failingSince, lastError, lastCommit) = health.Snapshot();
        var data = new Dictionary<string, object>
        {
            ["queued_readings"] = writers.QueuedReadings,
            ["queue_capacity"] = writers.QueueCapacity,
            ["devices"] = registry.Count,
        };
        if (lastCommit is { } commit)
        {
            data["last_commit"] = commit.ToString("O", System.Globalization.CultureInfo.InvariantCulture);
        }

        if (writers.Ready.IsFaulted)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("the database could not be prepared: " + writers.Ready.Exception?.GetBaseException().Message, data: data));
        }

        if (failingSince is { } since)
        {
            data["failing_since"] = since.ToString("O", System.Globalization.CultureInfo.InvariantCulture);
            double seconds = (time.GetUtcNow() - since).TotalSeconds;
            return Task.FromResult(HealthCheckResult.Unhealthy($"database writes failing for {seconds:F0} s (acknowledgements held): {lastError}", data: data));
        }

        if (!schemaReady)
        {
            return Task.FromResult(HealthCheckResult.Unhealthy("preparing the database", data: data));
        }

        if (writers.QueuedReadings > writers.QueueCapacity * 8 / 10)
        {
            return Task.FromResult(HealthCheckResult.Degraded("the write queue is over 80% full: publishers are being slowed down", data: data));
        }

        return Task.FromResult(HealthCheckResult.Healthy("storing readings", data));
    }
}

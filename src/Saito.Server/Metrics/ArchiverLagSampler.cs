using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Archive;

namespace Saito.Server.Metrics;

/// <summary>
/// Looks up the oldest reading of each hot table every <see cref="MetricsOptions.ArchiverLagIntervalSeconds"/> (one
/// <c>MIN(ts)</c> per kind) and hands it to <see cref="ArchiverMetrics"/>, whose <c>saito.archiver.lag</c> gauge reports
/// its age on each scrape without touching the database. A failed lookup is logged and the last figure kept (the
/// gauge then grows, which is what an alert on it wants to see when the database is away).
/// </summary>
internal sealed partial class ArchiverLagSampler(
    IReadingStore store, StorageStartup storage, IOptions<MetricsOptions> options, TimeProvider time, ILogger<ArchiverLagSampler> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            await storage.Ready.WaitAsync(stoppingToken);
        }
        catch (Exception) when (storage.Ready.IsFaulted)
        {
            // The database could not be prepared: StorageStartup logs why and stops Saito; nothing to sample.
            return;
        }

        using var timer = new PeriodicTimer(TimeSpan.FromSeconds(options.Value.ArchiverLagIntervalSeconds), time);
        do
        {
            await SampleAsync(stoppingToken);
        }
        while (await timer.WaitForNextTickAsync(stoppingToken));
    }

    internal async Task SampleAsync(CancellationToken cancellationToken)
    {
        foreach (var kind in ReadingKinds.All)
        {
            try
            {
                ArchiverMetrics.ReportOldest(kind, await store.OldestAsync(kind, StorageTier.Hot, cancellationToken));
            }
            catch (Exception ex) when (ex is not OperationCanceledException || !cancellationToken.IsCancellationRequested)
            {
                LogSampleFailed(ex, ReadingKinds.Name(kind));
            }
        }
    }

    [LoggerMessage(5310, LogLevel.Warning, "Could not look up the oldest hot {Kind} reading for saito.archiver.lag; keeping the last figure")]
    private partial void LogSampleFailed(Exception exception, string kind);
}

using System.Collections.Concurrent;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Storage;
using Saito.Mqtt;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// When each device was last heard from, for the registry's "silent since" (the device table's <c>last_seen</c>).
/// A message only sets a number in memory; every <see cref="IngestionOptions.LastSeenFlushSeconds"/> the times are
/// written in one transaction, so a busy class costs one small update per device every few seconds, not one per
/// reading. On shutdown the last times are written too. A failed write is logged and the times kept for the next one.
/// </summary>
public sealed partial class DeviceActivity(IDeviceTable devices, StorageResilience resilience, StorageStartup storage, IOptions<IngestionOptions> options, TimeProvider time, ILogger<DeviceActivity> logger)
    : BackgroundService
{
    private ConcurrentDictionary<int, long> _seen = new();
    private readonly ReportThrottle _heldReports = new(StorageResilience.LogInterval);
    private long _held;

    /// <summary>Notes that <paramref name="deviceId"/> sent something now.</summary>
    public void Seen(int deviceId) => _seen[deviceId] = time.GetUtcNow().UtcTicks;

    /// <summary>Writes what was noted since the last flush.</summary>
    public async Task FlushAsync(CancellationToken cancellationToken)
    {
        if (_seen.IsEmpty)
        {
            return;
        }

        var taken = Interlocked.Exchange(ref _seen, new ConcurrentDictionary<int, long>());
        var seen = taken.Select(p => KeyValuePair.Create(p.Key, new DateTime(p.Value, DateTimeKind.Utc))).ToList();
        try
        {
            await devices.MarkSeenAsync(seen, cancellationToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // Keep them for the next flush, unless a newer time arrived meanwhile.
            foreach (var (id, ticks) in taken)
            {
                _seen.AddOrUpdate(id, ticks, (_, newer) => Math.Max(newer, ticks));
            }

            if (!resilience.IsTransient(ex))
            {
                LogFlushFailed(ex, seen.Count);
            }
            else if (_heldReports.Due(Interlocked.Increment(ref _held)) > 0)
            {
                // The database is away or its disk is full: the writers report that already; one line per interval, no stack trace.
                LogFlushHeld(seen.Count, ex.GetType().Name, ex.Message);
            }
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            await storage.Ready.WaitAsync(stoppingToken);
            using var timer = new PeriodicTimer(TimeSpan.FromSeconds(Math.Max(1, options.Value.LastSeenFlushSeconds)), time);
            while (await timer.WaitForNextTickAsync(stoppingToken))
            {
                await FlushAsync(stoppingToken);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
        }
    }

    /// <summary>
    /// Writes the last times before Saito stops. With the database unreachable the write fails or outlasts the shutdown
    /// timeout: that is logged (the times are lost; the devices' next messages set them again), and stopping goes on.
    /// </summary>
    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        await base.StopAsync(cancellationToken);
        if (!storage.Ready.IsCompletedSuccessfully)
        {
            return;
        }

        int pending = _seen.Count;
        try
        {
            await FlushAsync(cancellationToken);
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            LogFlushAbandoned(pending);
            return;
        }

        if (!_seen.IsEmpty)
        {
            LogFlushAbandoned(_seen.Count); // the write failed, and there is no next flush
        }
    }

    [LoggerMessage(2140, LogLevel.Warning, "Could not record when {Count} device(s) were last seen; trying again at the next flush")]
    private partial void LogFlushFailed(Exception exception, int count);

    [LoggerMessage(2142, LogLevel.Warning, "Could not record when {Count} device(s) were last seen, the database is unavailable ({ErrorType}: {Error}); trying again at the next flush")]
    private partial void LogFlushHeld(int count, string errorType, string error);

    [LoggerMessage(2141, LogLevel.Warning, "Stopping without recording when {Count} device(s) were last seen (the database did not take it before the shutdown timeout); their next messages record it")]
    private partial void LogFlushAbandoned(int count);
}

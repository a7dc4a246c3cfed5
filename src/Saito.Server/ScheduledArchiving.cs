using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Storage;
using Saito.Storage.Archive;
using Saito.Readings;

namespace Saito.Server;

/// <summary>
/// <c>Archiver:Schedule</c>: run the archive job inside the server, for a box where a systemd timer or cron is not
/// wanted. Off unless <see cref="Every"/> or <see cref="DailyAtUtc"/> is set. The job is the same as
/// <c>saito-archiver run</c> (docs/archiver.md), with <c>Archiver:*</c> for batch size, threads, exports and gzip;
/// its run lock keeps a scheduled run and a manual one from overlapping.
/// </summary>
public sealed class ArchiveScheduleOptions
{
    public const string SectionName = "Archiver:Schedule";

    /// <summary>Run at this interval (e.g. <c>06:00:00</c> for every six hours); the first run one interval after start.</summary>
    public TimeSpan? Every { get; set; }

    /// <summary>Run once a day at this UTC time of day (e.g. <c>02:30</c>).</summary>
    public TimeOnly? DailyAtUtc { get; set; }

    /// <summary>Move readings older than this (default 7 days).</summary>
    public TimeSpan OlderThan { get; set; } = TimeSpan.FromDays(7);

    public bool Enabled => Every is not null || DailyAtUtc is not null;

    /// <summary>When the next run is due after <paramref name="now"/>.</summary>
    public DateTimeOffset NextRun(DateTimeOffset now)
    {
        if (Every is { } every)
        {
            return now + every;
        }

        var today = new DateTimeOffset(DateOnly.FromDateTime(now.UtcDateTime).ToDateTime(DailyAtUtc!.Value), TimeSpan.Zero);
        return today > now ? today : today.AddDays(1);
    }
}

internal sealed class ArchiveScheduleOptionsValidator : IValidateOptions<ArchiveScheduleOptions>
{
    public ValidateOptionsResult Validate(string? name, ArchiveScheduleOptions options)
    {
        var failures = new List<string>();
        if (options.Every is not null && options.DailyAtUtc is not null)
        {
            failures.Add("Archiver:Schedule: set Every or DailyAtUtc, not both.");
        }

        if (options.Every is { } every && every < TimeSpan.FromSeconds(1))
        {
            failures.Add($"Archiver:Schedule:Every must be at least one second (was {every}).");
        }

        if (options.OlderThan < TimeSpan.Zero)
        {
            failures.Add($"Archiver:Schedule:OlderThan must not be negative (was {options.OlderThan}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

/// <summary>Runs the archive job on <see cref="ArchiveScheduleOptions"/>'s schedule; a failed run is logged and the next one tries again.</summary>
internal sealed partial class ScheduledArchiver(
    IOptions<ArchiveScheduleOptions> schedule, IOptions<ArchiverOptions> archiver, IOptions<StorageOptions> storage,
    StorageStartup startup, TimeProvider time, ILoggerFactory loggerFactory, ILogger<ScheduledArchiver> logger) : BackgroundService
{
    /// <summary>Runs finished since start (for tests and logs).</summary>
    public int CompletedRuns { get; private set; }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var options = schedule.Value;
        if (!options.Enabled)
        {
            return;
        }

        await startup.Ready.WaitAsync(stoppingToken);
        while (!stoppingToken.IsCancellationRequested)
        {
            var next = options.NextRun(time.GetUtcNow());
            LogNext(next, options.OlderThan);
            await Task.Delay(next - time.GetUtcNow() is var wait && wait > TimeSpan.Zero ? wait : TimeSpan.Zero, time, stoppingToken);
            await RunOnceAsync(options, stoppingToken);
        }
    }

    private async Task RunOnceAsync(ArchiveScheduleOptions options, CancellationToken stoppingToken)
    {
        var settings = archiver.Value;
        var request = new ArchiveRunRequest
        {
            Kinds = ReadingKinds.All,
            Cutoff = (time.GetUtcNow() - options.OlderThan).UtcDateTime,
            Threads = settings.Threads,
            BatchRows = settings.BatchRows,
            ExportDirectory = settings.EffectiveExportDirectory(storage.Value),
            Gzip = settings.Gzip,
        };
        try
        {
            await using var job = new Archiver(storage.Value, loggerFactory);
            var summary = await job.RunAsync(request, stoppingToken);
            CompletedRuns++;
            if (summary.Failures.Count > 0)
            {
                LogFailed(summary.Failures.Count, string.Join("; ", summary.Failures));
            }
            else
            {
                LogDone(summary.RowsMoved, request.Cutoff, summary.Elapsed.TotalSeconds, summary.RowsPerSecond);
            }
        }
        catch (Exception ex) when (ex is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
        {
            CompletedRuns++;
            LogCrashed(ex);
        }
    }

    [LoggerMessage(5301, LogLevel.Information, "Next scheduled archive run at {Next:u}: readings older than {OlderThan}")]
    private partial void LogNext(DateTimeOffset next, TimeSpan olderThan);

    [LoggerMessage(5302, LogLevel.Information, "Scheduled archive run moved {Rows} readings older than {Cutoff:u} in {Seconds:F1} s ({RowsPerSecond:F0} rows/s)")]
    private partial void LogDone(long rows, DateTime cutoff, double seconds, double rowsPerSecond);

    [LoggerMessage(5303, LogLevel.Error, "Scheduled archive run finished with {Count} failure(s); the next run resumes what is unfinished: {Failures}")]
    private partial void LogFailed(int count, string failures);

    [LoggerMessage(5304, LogLevel.Error, "Scheduled archive run failed; the next run resumes what is unfinished")]
    private partial void LogCrashed(Exception exception);
}

using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;

namespace Saito.Registry.Timetable;

/// <summary>
/// Keeps the sessions of the coming days in the database: once the registry is migrated, and then every hour, plans
/// today and the next <see cref="SchoolOptions.PlanDays"/> school-local days with <see cref="SessionPlanner"/>.
/// The hourly round picks up timetable changes and the day that has come into range; it is idempotent, so a round
/// that finds nothing to do writes nothing.
/// </summary>
/// <remarks>
/// A failed round is logged and tried again the next hour instead of ending the service: the default host stops
/// when a background service throws, and ingestion must not stop because the registry's database had a bad moment.
/// If the registry never becomes ready (its migrations failed), the service logs that and ends; the migrator has
/// already logged why.
/// </remarks>
public sealed partial class SessionPlanningService(
    RegistryContextFactory contexts,
    RegistryMigrator migrator,
    SessionPlanner planner,
    IOptions<SchoolOptions> school,
    TimeProvider time,
    ILogger<SessionPlanningService> logger) : BackgroundService
{
    /// <summary>How often the sessions are planned again.</summary>
    public static readonly TimeSpan Period = TimeSpan.FromHours(1);

    /// <summary>Raised after each round (tests watch it instead of polling the database).</summary>
    internal event Action<SessionPlan>? Planned;

    /// <summary>One round: today to today + <see cref="SchoolOptions.PlanDays"/>, school-local.</summary>
    public async Task<SessionPlan> PlanOnceAsync(CancellationToken cancellationToken)
    {
        var today = school.Value.SchoolDate(time.GetUtcNow());
        var to = today.AddDays(school.Value.PlanDays);
        await using var db = contexts.Create();
        var plan = await planner.PlanAsync(db, today, to, cancellationToken);
        if (plan.Added.Count > 0)
        {
            LogPlanned(plan.Added.Count, today, to);
        }

        foreach (var rejected in plan.Rejected)
        {
            LogRejected(rejected.ClassName, rejected.ClassId, string.Join(" ", rejected.Problems));
        }

        return plan;
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (!await migrator.WaitReadyAsync(stoppingToken))
        {
            LogRegistryNotReady();
            return;
        }

        // The timer exists before the first round, so a tick that falls due while it runs is not lost.
        using var timer = new PeriodicTimer(Period, time);
        do
        {
            try
            {
                var plan = await PlanOnceAsync(stoppingToken);
                Planned?.Invoke(plan);
            }
            catch (Exception ex) when (ex is not OperationCanceledException || !stoppingToken.IsCancellationRequested)
            {
                LogFailed(ex);
            }
        }
        while (await timer.WaitForNextTickAsync(stoppingToken));
    }

    [LoggerMessage(3051, LogLevel.Information, "Timetable: planned {Count} sessions for {From} to {To}")]
    private partial void LogPlanned(int count, DateOnly from, DateOnly to);

    [LoggerMessage(3052, LogLevel.Warning, "Timetable: class '{ClassName}' (id {ClassId}) has no sessions planned until its slots are fixed: {Problems}")]
    private partial void LogRejected(string className, int classId, string problems);

    [LoggerMessage(3053, LogLevel.Error, "Timetable: planning sessions failed; trying again in an hour")]
    private partial void LogFailed(Exception exception);

    [LoggerMessage(3054, LogLevel.Warning, "Timetable: the registry is not available, so no sessions are planned until Saito restarts with it fixed")]
    private partial void LogRegistryNotReady();
}

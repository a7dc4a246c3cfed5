using System.Threading.Channels;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Microsoft.Extensions.Time.Testing;
using Saito.Registry.Hosting;
using Saito.Registry.Tests.Infrastructure;
using Saito.Registry.Timetable;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Timetable;

/// <summary>The hosted planner: once the registry is ready, then every hour of a fake clock.</summary>
public sealed class SessionPlanningServiceTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Plans_today_and_the_next_days_at_start_and_the_new_day_an_hour_later()
    {
        await using var database = await TestRegistryDatabase.CreateAsync(StorageProvider.Sqlite, postgres: null);
        // Sunday 22 November 2026, 23:30 in London (GMT): today is Sunday, PlanDays = 1 reaches Monday.
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 11, 22, 23, 30, 0, TimeSpan.Zero));
        await using (var db = database.Open())
        {
            await ExampleSchool.SeedAsync(db, clock, Ct);
        }

        var school = Options.Create(new SchoolOptions { TimeZone = "Europe/London", PlanDays = 1 });
        var migrator = new RegistryMigrator(database.Contexts, new StorageAlreadyReady(), NullLogger<RegistryMigrator>.Instance);
        using var service = new SessionPlanningService(database.Contexts, migrator, new SessionPlanner(school.Value.Zone), school, clock, NullLogger<SessionPlanningService>.Instance);
        var plans = Channel.CreateUnbounded<SessionPlan>();
        service.Planned += plan => plans.Writer.TryWrite(plan);

        await service.StartAsync(Ct); // waits for the migrator's Ready
        await migrator.StartAsync(Ct);
        var atStart = await plans.Reader.ReadAsync(Ct);
        clock.Advance(SessionPlanningService.Period); // 00:30 on Monday: Tuesday comes into range
        var anHourLater = await plans.Reader.ReadAsync(Ct);
        await service.StopAsync(Ct);
        await migrator.StopAsync(Ct);
        migrator.Dispose();

        atStart.Added.Select(s => s.SchoolDate).Distinct().ShouldBe([new DateOnly(2026, 11, 23)]);
        atStart.Added.Count.ShouldBe(3);
        anHourLater.Added.Select(s => s.SchoolDate).Distinct().ShouldBe([new DateOnly(2026, 11, 24)]);
        anHourLater.Added.Count.ShouldBe(3);
        await using var check = database.Open();
        (await check.Sessions.CountAsync(Ct)).ShouldBe(6);
    }
}

using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Time.Testing;
using Saito.Registry.Model;
using Saito.Registry.Tests.Infrastructure;
using Saito.Registry.Timetable;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Timetable;

/// <summary>Sessions planned into a real database, on SQLite and PostgreSQL.</summary>
public sealed class SessionPlannerTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static readonly TimeZoneInfo London = TimeZoneInfo.FindSystemTimeZoneById("Europe/London");

    private static readonly DateOnly Monday = new(2026, 11, 23);

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    /// <summary>A fresh database of <paramref name="provider"/> holding the example school.</summary>
    private async Task<TestRegistryDatabase> ExampleSchoolAsync(StorageProvider provider)
    {
        var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        await using var db = database.Open();
        await ExampleSchool.SeedAsync(db, new FakeTimeProvider(new DateTimeOffset(2026, 11, 20, 12, 0, 0, TimeSpan.Zero)), Ct);
        return database;
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Planning_a_week_twice_stores_fifteen_sessions_once(StorageProvider provider)
    {
        await using var database = await ExampleSchoolAsync(provider);
        var planner = new SessionPlanner(London);

        SessionPlan first, second;
        await using (var db = database.Open())
        {
            first = await planner.PlanAsync(db, Monday, Monday.AddDays(6), Ct);
        }

        await using (var db = database.Open())
        {
            second = await planner.PlanAsync(db, Monday, Monday.AddDays(6), Ct);
        }

        first.Added.Count.ShouldBe(15);
        first.Rejected.ShouldBeEmpty();
        second.Added.ShouldBeEmpty();
        await using var check = database.Open();
        var stored = await check.Sessions.Include(s => s.Class).OrderBy(s => s.StartsAt).ToListAsync(Ct);
        stored.Count.ShouldBe(15);
        stored[0].Class!.Name.ShouldBe("Morning circle");
        stored[0].StartsAt.ShouldBe(new DateTimeOffset(2026, 11, 23, 9, 0, 0, TimeSpan.Zero));
        stored[0].EndsAt.ShouldBe(new DateTimeOffset(2026, 11, 23, 11, 0, 0, TimeSpan.Zero));
        stored.Select(s => s.SchoolDate).Distinct().ShouldBe(Enumerable.Range(0, 5).Select(Monday.AddDays));
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_session_keeps_its_school_local_date_when_the_utc_date_is_the_day_before(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        var auckland = TimeZoneInfo.FindSystemTimeZoneById("Pacific/Auckland"); // UTC+13 in November
        await using (var db = database.Open())
        {
            var schoolClass = new SchoolClass { Name = "Early" };
            schoolClass.Slots.Add(new TimetableSlot { Day = DayOfWeek.Monday, Start = new TimeOnly(9, 0), DurationMinutes = 60 });
            db.Classes.Add(schoolClass);
            await db.SaveChangesAsync(Ct);
            await new SessionPlanner(auckland).PlanAsync(db, Monday, Monday, Ct);
        }

        await using var check = database.Open();
        var session = await check.Sessions.SingleAsync(Ct);
        session.SchoolDate.ShouldBe(Monday);
        session.StartsAt.ShouldBe(new DateTimeOffset(2026, 11, 22, 20, 0, 0, TimeSpan.Zero)); // Sunday evening in UTC
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_slot_removed_later_leaves_its_sessions_and_a_moved_slot_adds_only_the_new_times(StorageProvider provider)
    {
        await using var database = await ExampleSchoolAsync(provider);
        var planner = new SessionPlanner(London);
        await using (var db = database.Open())
        {
            await planner.PlanAsync(db, Monday, Monday.AddDays(4), Ct);
        }

        await using (var db = database.Open())
        {
            var midday = await db.Classes.Include(c => c.Slots).SingleAsync(c => c.Name == "Midday", Ct);
            db.TimetableSlots.Remove(midday.Slots.Single(s => s.Day == DayOfWeek.Monday));
            midday.Slots.Single(s => s.Day == DayOfWeek.Tuesday).Start = new TimeOnly(11, 45);
            await db.SaveChangesAsync(Ct);
        }

        SessionPlan again;
        await using (var db = database.Open())
        {
            again = await planner.PlanAsync(db, Monday, Monday.AddDays(4), Ct);
        }

        again.Added.ShouldHaveSingleItem().StartsAt.ShouldBe(new DateTimeOffset(2026, 11, 24, 11, 45, 0, TimeSpan.Zero));
        await using var check = database.Open();
        (await check.Sessions.CountAsync(Ct)).ShouldBe(16); // the Monday session of the removed slot is still there
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_class_with_overlapping_slots_is_reported_and_the_others_are_planned(StorageProvider provider)
    {
        await using var database = await ExampleSchoolAsync(provider);
        await using var db = database.Open();
        var broken = new SchoolClass { Name = "Broken" };
        broken.Slots.Add(new TimetableSlot { Day = DayOfWeek.Monday, Start = new TimeOnly(9, 0), DurationMinutes = 120 });
        broken.Slots.Add(new TimetableSlot { Day = DayOfWeek.Monday, Start = new TimeOnly(10, 0), DurationMinutes = 30 });
        db.Classes.Add(broken);
        await db.SaveChangesAsync(Ct);

        var plan = await new SessionPlanner(London).PlanAsync(db, Monday, Monday, Ct);

        plan.Added.Count.ShouldBe(3);
        var rejected = plan.Rejected.ShouldHaveSingleItem();
        rejected.ClassName.ShouldBe("Broken");
        rejected.Problems.ShouldHaveSingleItem().ShouldContain("overlaps");
    }
}

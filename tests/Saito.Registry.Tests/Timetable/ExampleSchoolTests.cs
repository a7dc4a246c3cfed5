using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Time.Testing;
using Saito.Registry.Model;
using Saito.Registry.Tests.Infrastructure;
using Saito.Registry.Timetable;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Timetable;

/// <summary>The example school's data, seeded twice, on SQLite and PostgreSQL.</summary>
public sealed class ExampleSchoolTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Seeding_twice_gives_three_classes_of_sixteen_students_with_their_contacts_once(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateAsync(provider, postgres);
        var clock = new FakeTimeProvider(new DateTimeOffset(2026, 11, 20, 12, 0, 0, TimeSpan.Zero));

        ExampleSchoolCounts first, second;
        await using (var db = database.Open())
        {
            first = await ExampleSchool.SeedAsync(db, clock, Ct);
        }

        await using (var db = database.Open())
        {
            second = await ExampleSchool.SeedAsync(db, clock, Ct);
        }

        first.Classes.ShouldBe(3);
        first.Students.ShouldBe(48);
        first.Staff.ShouldBe(2);
        first.RosterEntries.ShouldBe(48);
        first.Contacts.ShouldBe(64); // a parent each, a guardian for every third student
        second.ShouldBe(new ExampleSchoolCounts(0, 0, 0, 0, 0));

        await using var check = database.Open();
        var classes = await check.Classes.Include(c => c.Slots).Include(c => c.Roster).ThenInclude(r => r.Owner).OrderBy(c => c.Name).ToListAsync(Ct);
        classes.Select(c => c.Name).ShouldBe(["Afternoon", "Midday", "Morning circle"]);
        classes.ShouldAllBe(c => c.Roster.Count == 16 && c.Roster.All(r => r.Owner!.Kind == OwnerKind.Student) && c.Slots.Count == 5);
        classes.SelectMany(c => c.Roster).Select(r => r.OwnerId).Distinct().Count().ShouldBe(48);
        classes.SelectMany(c => c.Slots).ShouldAllBe(s => s.DurationMinutes == 120 && s.Day != DayOfWeek.Saturday && s.Day != DayOfWeek.Sunday);
        classes.Single(c => c.Name == "Midday").Slots.ShouldAllBe(s => s.Start == new TimeOnly(11, 15));

        (await check.Owners.CountAsync(Ct)).ShouldBe(50);
        (await check.Owners.CountAsync(o => o.Kind == OwnerKind.Aide, Ct)).ShouldBe(1);
        (await check.Owners.CountAsync(o => o.Kind == OwnerKind.Staff, Ct)).ShouldBe(1);
        var contacts = await check.Contacts.ToListAsync(Ct);
        contacts.Count.ShouldBe(first.Contacts);
        contacts.ShouldAllBe(c => c.Email.EndsWith("@example.org", StringComparison.Ordinal));
        contacts.ShouldContain(c => c.Language == "fr");
        contacts.Count(c => !c.NotifyArrival).ShouldBe(2);
        (await check.Owners.Where(o => o.Kind == OwnerKind.Student).CountAsync(o => o.Contacts.Count == 0, Ct)).ShouldBe(0);
    }
}

using Microsoft.EntityFrameworkCore;
using Saito.Registry.Data;
using Saito.Registry.Model;

namespace Saito.Registry.Timetable;

/// <summary>What <see cref="ExampleSchool.SeedAsync"/> added (all zero when the example data was already there).</summary>
public sealed record ExampleSchoolCounts(int Classes, int Students, int Staff, int Contacts, int RosterEntries);

/// <summary>
/// The example school, for trying Saito out and for tests: three two-hour classes a day Monday to Friday
/// ("Morning circle" 09:00, "Midday" 11:15, "Afternoon" 13:30, school-local), 16 students on each roster
/// (S-001 to S-048), one aide and one member of staff (T-001). Every student has a parent contact; every
/// third has a second one (a guardian); some contacts read French, two do not want arrival emails. Names are made
/// up and every address is under example.org (RFC 2606), so nothing ever reaches a real person.
/// </summary>
public static class ExampleSchool
{
    public const int StudentsPerClass = 16;

    public const int SlotMinutes = 120;

    /// <summary>The classes and their daily local start.</summary>
    public static IReadOnlyList<(string Name, string Room, TimeOnly Start)> Classes { get; } =
    [
        ("Morning circle", "Room 1", new TimeOnly(9, 0)),
        ("Midday", "Room 2", new TimeOnly(11, 15)),
        ("Afternoon", "Room 3", new TimeOnly(13, 30)),
    ];

    public static IReadOnlyList<DayOfWeek> SchoolDays { get; } =
        [DayOfWeek.Monday, DayOfWeek.Tuesday, DayOfWeek.Wednesday, DayOfWeek.Thursday, DayOfWeek.Friday];

    private static readonly string[] GivenNames = ["Ada", "Basil", "Cleo", "Dorian", "Elsa", "Felix", "Greta", "Hugo", "Iris", "Jules", "Kit", "Luna"];

    private static readonly string[] FamilyNames = ["Sampleton", "Exampleby", "Testwood", "Placeholder"];

    /// <summary>Students whose contacts do not want an email on arrival (absence notices still go).</summary>
    private static readonly HashSet<int> NoArrivalEmail = [7, 30];

    /// <summary>
    /// Adds whatever of the example school is missing: classes by name, owners by <see cref="Owner.ExternalRef"/>,
    /// roster entries by class and student; a student's contacts come with the student. Running it twice adds nothing.
    /// </summary>
    public static async Task<ExampleSchoolCounts> SeedAsync(RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(time);
        var now = time.GetUtcNow();
        var classNames = Classes.Select(c => c.Name).ToList();
        var classes = await db.Classes.Include(c => c.Roster).Where(c => classNames.Contains(c.Name)).ToDictionaryAsync(c => c.Name, cancellationToken);
        var refs = Enumerable.Range(1, Classes.Count * StudentsPerClass).Select(StudentRef).Append("A-001").Append("T-001").ToList();
        var owners = await db.Owners.Where(o => o.ExternalRef != null && refs.Contains(o.ExternalRef)).ToDictionaryAsync(o => o.ExternalRef!, cancellationToken);

        int addedClasses = 0, addedStudents = 0, addedStaff = 0, addedContacts = 0, addedRoster = 0;
        foreach (var (kind, externalRef, name) in new[] { (OwnerKind.Aide, "A-001", "Morgan Aide (example)"), (OwnerKind.Staff, "T-001", "Robin Teacher (example)") })
        {
            if (!owners.ContainsKey(externalRef))
            {
                db.Owners.Add(new Owner { Kind = kind, ExternalRef = externalRef, DisplayName = name, CreatedAt = now, UpdatedAt = now });
                addedStaff++;
            }
        }

        for (int c = 0; c < Classes.Count; c++)
        {
            var (className, room, start) = Classes[c];
            if (!classes.TryGetValue(className, out var schoolClass))
            {
                schoolClass = new SchoolClass { Name = className, Room = room, CreatedAt = now, UpdatedAt = now };
                schoolClass.Slots.AddRange(SchoolDays.Select(day => new TimetableSlot { Day = day, Start = start, DurationMinutes = SlotMinutes }));
                db.Classes.Add(schoolClass);
                addedClasses++;
            }

            for (int n = (c * StudentsPerClass) + 1; n <= (c + 1) * StudentsPerClass; n++)
            {
                if (!owners.TryGetValue(StudentRef(n), out var student))
                {
                    student = NewStudent(n, now);
                    db.Owners.Add(student);
                    addedStudents++;
                    addedContacts += student.Contacts.Count;
                }

                if (student.Id == 0 || !schoolClass.Roster.Any(r => r.OwnerId == student.Id))
                {
                    schoolClass.Roster.Add(new RosterEntry { Owner = student, AddedAt = now });
                    addedRoster++;
                }
            }
        }

        await db.SaveChangesAsync(cancellationToken);
        return new ExampleSchoolCounts(addedClasses, addedStudents, addedStaff, addedContacts, addedRoster);
    }

    /// <summary>S-001 to S-048.</summary>
    public static string StudentRef(int number) => $"S-{number:000}";

    private static Owner NewStudent(int number, DateTimeOffset now)
    {
        string given = GivenNames[(number - 1) % GivenNames.Length];
        string family = FamilyNames[(number - 1) / GivenNames.Length % FamilyNames.Length];
        var student = new Owner { Kind = OwnerKind.Student, ExternalRef = StudentRef(number), DisplayName = $"{given} {family}", CreatedAt = now, UpdatedAt = now };
        bool french = number % 5 == 0;
        student.Contacts.Add(new Contact
        {
            Name = french ? $"Famille {family}" : $"Parent of {given} {family}",
            Email = $"parent.s{number:000}@example.org",
            Relationship = ContactRelationship.Parent,
            Language = french ? "fr" : null,
            NotifyArrival = !NoArrivalEmail.Contains(number),
            CreatedAt = now,
            UpdatedAt = now,
        });
        if (number % 3 == 0)
        {
            student.Contacts.Add(new Contact
            {
                Name = $"Guardian of {given} {family}",
                Email = $"guardian.s{number:000}@example.org",
                Relationship = ContactRelationship.Guardian,
                Language = number % 2 == 0 ? "fr" : "en",
                CreatedAt = now,
                UpdatedAt = now,
            });
        }

        return student;
    }
}

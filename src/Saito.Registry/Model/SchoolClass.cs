namespace Saito.Registry.Model;

/// <summary>A class: a name, a weekly timetable in the school's time zone, and a roster.</summary>
public sealed class SchoolClass : IVersioned
{
    public int Id { get; set; }

    public required string Name { get; set; }

    public string? Room { get; set; }

    public DateTimeOffset CreatedAt { get; set; }

    public DateTimeOffset UpdatedAt { get; set; }

    public int Version { get; set; }

    public List<TimetableSlot> Slots { get; } = [];

    public List<RosterEntry> Roster { get; } = [];
}

/// <summary>One weekly slot of a class: a day, a local start time in <c>School:TimeZone</c>, a length.</summary>
public sealed class TimetableSlot
{
    public int Id { get; set; }

    public int ClassId { get; set; }

    public DayOfWeek Day { get; set; }

    /// <summary>Wall-clock time in the school's time zone (09:00 stays 09:00 across daylight-saving changes).</summary>
    public TimeOnly Start { get; set; }

    public int DurationMinutes { get; set; }
}

/// <summary>A student on a class's roster.</summary>
public sealed class RosterEntry
{
    public int ClassId { get; set; }

    public int OwnerId { get; set; }

    public Owner? Owner { get; set; }

    public DateTimeOffset AddedAt { get; set; }
}

/// <summary>
/// One meeting of a class, from <see cref="StartsAt"/> to <see cref="EndsAt"/> (UTC in the database). Made from
/// the timetable for a range of dates, or by hand.
/// </summary>
public sealed class ClassSession
{
    public int Id { get; set; }

    public int ClassId { get; set; }

    public SchoolClass? Class { get; set; }

    public DateTimeOffset StartsAt { get; set; }

    public DateTimeOffset EndsAt { get; set; }

    /// <summary>The school-local date the session falls on.</summary>
    public DateOnly SchoolDate { get; set; }

    /// <summary>When the not-arrived notices for this session were queued (once per session).</summary>
    public DateTimeOffset? AbsencesCheckedAt { get; set; }
}

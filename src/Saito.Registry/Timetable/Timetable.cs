using Saito.Registry.Model;

namespace Saito.Registry.Timetable;

/// <summary>One meeting a timetable asks for: a class, its school-local date, and its start and end in UTC.</summary>
public readonly record struct PlannedSession(int ClassId, DateOnly SchoolDate, DateTimeOffset StartsAt, DateTimeOffset EndsAt);

/// <summary>
/// A class's weekly slots turned into sessions for a range of school-local dates (pure: no database, no clock).
/// Slots are wall-clock times in the school's time zone, so 09:00 stays 09:00 on both sides of a daylight-saving
/// change. The two hours a year where a wall-clock time does not name exactly one instant are decided so:
/// <list type="bullet">
/// <item>A local start in the spring-forward gap (01:30 in Europe/London on the last Sunday of March, which does not
/// exist) starts at the first valid instant after the gap: the moment the clocks jump (02:00 BST = 01:00 UTC).</item>
/// <item>A local start that happens twice (01:30 in Europe/London on the last Sunday of October) takes the first
/// occurrence, the daylight-saving one (01:30 BST = 00:30 UTC).</item>
/// <item>A session lasts <see cref="TimetableSlot.DurationMinutes"/> of elapsed time: one that spans a change ends an
/// hour later or earlier on the wall clock than on an ordinary day.</item>
/// </list>
/// </summary>
public static class Timetable
{
    /// <summary>The longest slot: twelve hours.</summary>
    public const int MaxDurationMinutes = 720;

    private const int MinutesPerDay = 24 * 60;
    private const int MinutesPerWeek = 7 * MinutesPerDay;

    /// <summary>
    /// What is wrong with a class's slots, one sentence each; empty when they are fine. A slot must last 1 to
    /// <see cref="MaxDurationMinutes"/> minutes, and no two slots may overlap on the wall clock (a slot that runs past
    /// midnight is checked against the next day's slots too).
    /// </summary>
    public static IReadOnlyList<string> Problems(IEnumerable<TimetableSlot> slots)
    {
        ArgumentNullException.ThrowIfNull(slots);
        var list = slots.ToList();
        var problems = new List<string>();
        foreach (var slot in list.Where(s => s.DurationMinutes is < 1 or > MaxDurationMinutes))
        {
            problems.Add($"The {Describe(slot)} slot lasts {slot.DurationMinutes} minutes; a slot lasts 1 to {MaxDurationMinutes} minutes.");
        }

        for (int i = 0; i < list.Count; i++)
        {
            for (int j = i + 1; j < list.Count; j++)
            {
                if (Overlap(list[i], list[j]))
                {
                    problems.Add($"The {Describe(list[i])} slot ({list[i].DurationMinutes} minutes) overlaps the {Describe(list[j])} slot ({list[j].DurationMinutes} minutes).");
                }
            }
        }

        return problems;
    }

    /// <summary>Throws <see cref="ArgumentException"/> naming every problem <see cref="Problems"/> finds.</summary>
    public static void Validate(IEnumerable<TimetableSlot> slots)
    {
        var problems = Problems(slots);
        if (problems.Count > 0)
        {
            throw new ArgumentException(string.Join(" ", problems), nameof(slots));
        }
    }

    /// <summary>
    /// The sessions <paramref name="slots"/> ask for on the school-local dates <paramref name="from"/> to
    /// <paramref name="to"/> (both included) in <paramref name="zone"/>, in order of start. Each session's
    /// <see cref="PlannedSession.SchoolDate"/> is the date of its slot; the slots are validated first.
    /// </summary>
    public static IReadOnlyList<PlannedSession> Sessions(IEnumerable<TimetableSlot> slots, DateOnly from, DateOnly to, TimeZoneInfo zone)
    {
        ArgumentNullException.ThrowIfNull(slots);
        ArgumentNullException.ThrowIfNull(zone);
        if (to < from)
        {
            throw new ArgumentException($"The range ends ({to:yyyy-MM-dd}) before it starts ({from:yyyy-MM-dd}).", nameof(to));
        }

        var list = slots.ToList();
        Validate(list);
        var sessions = new List<PlannedSession>();
        for (var date = from; date <= to; date = date.AddDays(1))
        {
            foreach (var slot in list.Where(s => s.Day == date.DayOfWeek))
            {
                var starts = StartInstant(date, slot.Start, zone);
                sessions.Add(new PlannedSession(slot.ClassId, date, starts, starts.AddMinutes(slot.DurationMinutes)));
            }
        }

        sessions.Sort((a, b) => a.StartsAt.CompareTo(b.StartsAt));
        return sessions;
    }

    /// <summary>
    /// The UTC instant of the wall-clock <paramref name="time"/> on <paramref name="date"/> in <paramref name="zone"/>:
    /// in a spring-forward gap, the first valid instant after it; when ambiguous, the first occurrence.
    /// </summary>
    public static DateTimeOffset StartInstant(DateOnly date, TimeOnly time, TimeZoneInfo zone)
    {
        ArgumentNullException.ThrowIfNull(zone);
        var local = date.ToDateTime(time, DateTimeKind.Unspecified);
        if (zone.IsInvalidTime(local))
        {
            return EndOfGap(local, zone);
        }

        if (zone.IsAmbiguousTime(local))
        {
            // The larger offset is the earlier instant: the first time the wall clock shows this time.
            var offset = zone.GetAmbiguousTimeOffsets(local).Max();
            return new DateTimeOffset(local, offset).ToUniversalTime();
        }

        return new DateTimeOffset(local, zone.GetUtcOffset(local)).ToUniversalTime();
    }

    /// <summary>
    /// The instant the clocks jump over <paramref name="local"/>. Before the jump the zone is at some offset A, after it
    /// at B &gt; A, and the gap is the local times [jump + A, jump + B); so the jump lies in (local - B, local - A] and a
    /// binary search over UTC finds the first instant at offset B. Works for any gap length and any zone, without
    /// reading adjustment rules.
    /// </summary>
    private static DateTimeOffset EndOfGap(DateTime local, TimeZoneInfo zone)
    {
        var before = zone.GetUtcOffset(local.AddDays(-1));
        var after = zone.GetUtcOffset(local.AddDays(1));
        long low = (local - after).Ticks; // still at offset A
        long high = (local - before).Ticks; // already at offset B
        while (high - low > 1)
        {
            long middle = low + ((high - low) / 2);
            if (zone.GetUtcOffset(new DateTime(middle, DateTimeKind.Utc)) == before)
            {
                low = middle;
            }
            else
            {
                high = middle;
            }
        }

        return new DateTimeOffset(high, TimeSpan.Zero);
    }

    private static bool Overlap(TimetableSlot a, TimetableSlot b)
    {
        int aStart = WeekMinute(a);
        int bStart = WeekMinute(b);
        int aEnd = aStart + a.DurationMinutes;
        int bEnd = bStart + b.DurationMinutes;

        // The week wraps: Saturday 23:00 for two hours runs into Sunday 01:00.
        return (aStart < bEnd && bStart < aEnd)
            || (aStart < bEnd + MinutesPerWeek && bStart + MinutesPerWeek < aEnd)
            || (aStart + MinutesPerWeek < bEnd && bStart < aEnd + MinutesPerWeek);
    }

    private static int WeekMinute(TimetableSlot slot) => ((int)slot.Day * MinutesPerDay) + (slot.Start.Hour * 60) + slot.Start.Minute;

    private static string Describe(TimetableSlot slot) => $"{slot.Day} {slot.Start:HH:mm}";
}

using Saito.Registry.Model;
using Saito.Registry.Timetable;
using SchoolTimetable = Saito.Registry.Timetable.Timetable;

namespace Saito.Registry.Tests.Timetable;

/// <summary>The pure timetable: wall-clock slots to UTC sessions, around both daylight-saving changes of 2026.</summary>
public sealed class TimetableTests
{
    private static readonly TimeZoneInfo London = TimeZoneInfo.FindSystemTimeZoneById("Europe/London");

    private static TimetableSlot Slot(DayOfWeek day, int hour, int minute, int minutes = 120, int classId = 1) =>
        new() { ClassId = classId, Day = day, Start = new TimeOnly(hour, minute), DurationMinutes = minutes };

    private static PlannedSession OnlySession(TimetableSlot slot, DateOnly date, TimeZoneInfo zone) =>
        SchoolTimetable.Sessions([slot], date, date, zone).ShouldHaveSingleItem();

    private static DateTimeOffset Utc(int month, int day, int hour, int minute) => new(2026, month, day, hour, minute, 0, TimeSpan.Zero);

    [Fact]
    public void A_normal_week_of_three_classes_on_five_days_is_fifteen_sessions_at_the_local_times()
    {
        var days = new[] { DayOfWeek.Monday, DayOfWeek.Tuesday, DayOfWeek.Wednesday, DayOfWeek.Thursday, DayOfWeek.Friday };
        var slots = days.SelectMany(d => new[] { Slot(d, 9, 0, classId: 1), Slot(d, 11, 15, classId: 2), Slot(d, 13, 30, classId: 3) }).ToList();

        // Monday 2026-11-23 to Sunday 2026-11-29: London is on GMT, so local is UTC.
        var sessions = SchoolTimetable.Sessions(slots, new DateOnly(2026, 11, 23), new DateOnly(2026, 11, 29), London);

        sessions.Count.ShouldBe(15);
        sessions.GroupBy(s => s.ClassId).Select(g => g.Count()).ShouldAllBe(n => n == 5);
        sessions.Select(s => s.SchoolDate.DayOfWeek).Distinct().ShouldBe(days);
        sessions.ShouldAllBe(s => s.EndsAt - s.StartsAt == TimeSpan.FromHours(2) && s.StartsAt.Offset == TimeSpan.Zero);
        sessions[0].ShouldBe(new PlannedSession(1, new DateOnly(2026, 11, 23), Utc(11, 23, 9, 0), Utc(11, 23, 11, 0)));
        sessions[^1].ShouldBe(new PlannedSession(3, new DateOnly(2026, 11, 27), Utc(11, 27, 13, 30), Utc(11, 27, 15, 30)));
    }

    [Fact]
    public void Nine_oclock_stays_nine_oclock_on_the_wall_across_the_change_in_London()
    {
        var sessions = SchoolTimetable.Sessions([Slot(DayOfWeek.Friday, 9, 0), Slot(DayOfWeek.Monday, 9, 0)], new DateOnly(2026, 3, 27), new DateOnly(2026, 3, 30), London);

        sessions.Select(s => s.StartsAt).ShouldBe([Utc(3, 27, 9, 0), Utc(3, 30, 8, 0)]); // GMT, then BST
    }

    [Theory]
    [InlineData("Europe/London", 3, 29, 1, 30, 1, 0)] // 01:00 GMT jumps to 02:00 BST: 01:30 does not exist; starts at 02:00 BST
    [InlineData("America/New_York", 3, 8, 2, 30, 7, 0)] // 02:00 EST jumps to 03:00 EDT: starts at 03:00 EDT
    public void A_start_in_the_spring_gap_starts_when_the_clocks_jump(string zoneId, int month, int day, int hour, int minute, int utcHour, int utcMinute)
    {
        var zone = TimeZoneInfo.FindSystemTimeZoneById(zoneId);
        var date = new DateOnly(2026, month, day);

        var session = OnlySession(Slot(date.DayOfWeek, hour, minute), date, zone);

        session.StartsAt.ShouldBe(Utc(month, day, utcHour, utcMinute));
        session.SchoolDate.ShouldBe(date);
        session.EndsAt.ShouldBe(session.StartsAt.AddHours(2));
        zone.IsInvalidTime(new DateTime(2026, month, day, hour, minute, 0)).ShouldBeTrue(); // the test really is in the gap
    }

    [Theory]
    [InlineData("Europe/London", 10, 25, 1, 30, 0, 30)] // 01:30 happens in BST (00:30 UTC) and again in GMT (01:30 UTC)
    [InlineData("America/New_York", 11, 1, 1, 30, 5, 30)] // 01:30 EDT (05:30 UTC), then 01:30 EST (06:30 UTC)
    public void An_ambiguous_start_in_the_autumn_takes_the_first_occurrence(string zoneId, int month, int day, int hour, int minute, int utcHour, int utcMinute)
    {
        var zone = TimeZoneInfo.FindSystemTimeZoneById(zoneId);
        var date = new DateOnly(2026, month, day);

        var session = OnlySession(Slot(date.DayOfWeek, hour, minute, 60), date, zone);

        session.StartsAt.ShouldBe(Utc(month, day, utcHour, utcMinute));
        session.EndsAt.ShouldBe(session.StartsAt.AddHours(1));
        zone.IsAmbiguousTime(new DateTime(2026, month, day, hour, minute, 0)).ShouldBeTrue();
    }

    [Theory]
    [InlineData("Europe/London", 3, 29, 0, 30, 2, 30, 3)] // 00:30 GMT to 02:30 UTC, which is 03:30 BST: an hour later on the wall
    [InlineData("America/New_York", 11, 1, 4, 30, 6, 30, 1)] // 00:30 EDT to 06:30 UTC, which is 01:30 EST: an hour earlier on the wall
    public void A_session_across_a_change_lasts_its_real_duration(string zoneId, int month, int day, int utcStartHour, int utcStartMinute, int utcEndHour, int utcEndMinute, int localEndHour)
    {
        var zone = TimeZoneInfo.FindSystemTimeZoneById(zoneId);
        var date = new DateOnly(2026, month, day);

        var session = OnlySession(Slot(date.DayOfWeek, 0, 30), date, zone);

        session.StartsAt.ShouldBe(Utc(month, day, utcStartHour, utcStartMinute));
        session.EndsAt.ShouldBe(Utc(month, day, utcEndHour, utcEndMinute));
        TimeZoneInfo.ConvertTime(session.EndsAt, zone).TimeOfDay.ShouldBe(new TimeSpan(localEndHour, 30, 0));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    [InlineData(721)]
    public void A_slot_shorter_than_a_minute_or_longer_than_twelve_hours_is_rejected(int minutes)
    {
        var slots = new[] { Slot(DayOfWeek.Monday, 9, 0, minutes) };

        var ex = Should.Throw<ArgumentException>(() => SchoolTimetable.Sessions(slots, new DateOnly(2026, 11, 23), new DateOnly(2026, 11, 23), London));

        ex.Message.ShouldContain($"Monday 09:00 slot lasts {minutes} minutes");
    }

    [Fact]
    public void Overlapping_slots_of_a_class_on_one_day_are_rejected_with_both_named()
    {
        var problems = SchoolTimetable.Problems([Slot(DayOfWeek.Monday, 9, 0), Slot(DayOfWeek.Monday, 10, 30), Slot(DayOfWeek.Tuesday, 10, 30)]);

        problems.ShouldHaveSingleItem().ShouldBe("The Monday 09:00 slot (120 minutes) overlaps the Monday 10:30 slot (120 minutes).");
    }

    [Fact]
    public void A_slot_running_past_midnight_overlaps_the_next_mornings_slot_even_across_the_end_of_the_week()
    {
        SchoolTimetable.Problems([Slot(DayOfWeek.Saturday, 23, 0), Slot(DayOfWeek.Sunday, 0, 30)]).Count.ShouldBe(1);
        SchoolTimetable.Problems([Slot(DayOfWeek.Monday, 9, 0), Slot(DayOfWeek.Monday, 11, 0)]).ShouldBeEmpty(); // back to back is fine
    }

    [Fact]
    public void A_range_that_ends_before_it_starts_is_rejected()
    {
        Should.Throw<ArgumentException>(() => SchoolTimetable.Sessions([Slot(DayOfWeek.Monday, 9, 0)], new DateOnly(2026, 11, 24), new DateOnly(2026, 11, 23), London));
    }
}

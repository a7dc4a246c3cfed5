using Saito.Live.Alerts;
using Saito.Live.Classroom;

namespace Saito.Live.Tests.Alerts;

public sealed class AlertClassTests
{
    private static readonly DateTimeOffset T0 = new(2026, 12, 7, 9, 0, 0, TimeSpan.Zero);

    [Fact]
    public void Every_kind_has_a_class_and_the_vital_signs_are_clinical()
    {
        var classes = Enum.GetValues<AlertKind>().ToDictionary(k => k, AlertClasses.Of);

        classes.Count.ShouldBe(AlertKinds.Count);
        classes.Where(c => c.Value == AlertClass.Clinical).Select(c => c.Key)
            .ShouldBe([AlertKind.Tachycardia, AlertKind.HeartRateHigh, AlertKind.Bradycardia, AlertKind.Overheating], ignoreOrder: true);
        classes[AlertKind.SilentSensor].ShouldBe(AlertClass.Device);
        classes[AlertKind.NotCheckedIn].ShouldBe(AlertClass.Attendance);
        classes[AlertKind.OffSeat].ShouldBe(AlertClass.Attendance);
        Enum.GetValues<AlertClass>().Select(AlertClasses.Name).ShouldBe(["clinical", "device", "attendance"]);
    }

    [Fact]
    public void Alerts_order_by_class_then_unacknowledged_then_level_then_age_so_a_racing_heart_is_never_below_attendance()
    {
        var tenNotCheckedIn = Enumerable.Range(0, 10).Select(i => View(AlertKind.NotCheckedIn, $"pupil-{i}", T0.AddMinutes(-30 + i))).ToList();
        var racing = View(AlertKind.Tachycardia, "racing", T0);
        var racingSeen = View(AlertKind.HeartRateHigh, "racing-seen", T0.AddMinutes(-5), acknowledgedBy: "tom");
        var escalatedHot = View(AlertKind.Overheating, "escalated-hot", T0.AddMinutes(1), level: 2);
        var olderHot = View(AlertKind.Overheating, "older-hot", T0.AddMinutes(-1));
        var silent = View(AlertKind.SilentSensor, "silent", T0.AddMinutes(-40));
        var offSeat = View(AlertKind.OffSeat, "off-seat", T0.AddMinutes(-50), level: 1);

        var ordered = tenNotCheckedIn.Append(racingSeen).Append(silent).Append(racing).Append(offSeat).Append(olderHot).Append(escalatedHot)
            .Order(AlertView.Order).Select(a => a.StudentName).ToList();

        ordered.Take(5).ShouldBe(["escalated-hot", "older-hot", "racing", "racing-seen", "silent"]);
        ordered[5].ShouldBe("off-seat", "an escalated attendance alert before those still in the room");
        ordered.Skip(6).ShouldBe([.. tenNotCheckedIn.Select(a => a.StudentName)]);
    }

    private static AlertView View(AlertKind kind, string student, DateTimeOffset raisedAt, int level = 0, string? acknowledgedBy = null) =>
        new(Guid.NewGuid(), student.GetHashCode(StringComparison.Ordinal), student, AlertKinds.Name(kind), AlertClasses.Name(AlertClasses.Of(kind)),
            AlertKinds.Text(kind), level, "in the room", null, "", raisedAt, acknowledgedBy is null ? null : raisedAt, acknowledgedBy, null);
}

using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class EscalationTests
{
    [Fact]
    public void An_unacknowledged_alert_escalates_aide_to_teacher_to_admin_every_EscalateAfterSeconds()
    {
        var s = new AlertScenario(checkIn: false).TickTo(900);

        var events = s.Of(AlertKind.NotCheckedIn);
        events.Select(e => (e.Type, e.Level, Seconds(e))).ShouldBe(
        [
            (AlertEventType.Raised, AlertLevels.Aide, 600.0),
            (AlertEventType.Escalated, AlertLevels.Teacher, 660.0),
            (AlertEventType.Escalated, AlertLevels.Admin, 720.0),
        ]);
        events.ShouldAllBe(e => e.AlertId == events[0].AlertId);
        var active = new List<ActiveAlert>();
        s.Engine.CopyActive(active).ShouldBe(1);
        active[0].Level.ShouldBe(AlertLevels.Admin);
    }

    [Fact]
    public void A_late_tick_escalates_every_level_it_missed()
    {
        var s = new AlertScenario(checkIn: false).TickTo(600);
        s.Engine.Tick(At(750));
        s.Collect();

        s.Of(AlertKind.NotCheckedIn, AlertEventType.Escalated).Select(e => e.Level).ShouldBe([1, 2]);
    }

    [Fact]
    public void Acknowledging_stops_escalation_and_is_recorded_once()
    {
        var s = new AlertScenario(checkIn: false).TickTo(670);
        var id = s.Single(AlertKind.NotCheckedIn, AlertEventType.Raised).AlertId;

        s.Engine.Acknowledge(id, "teacher.kim", At(675)).ShouldBeTrue();
        s.Engine.Acknowledge(id, "aide.sam", At(676)).ShouldBeFalse();
        s.Engine.Acknowledge(Guid.NewGuid(), "aide.sam", At(676)).ShouldBeFalse();
        s.Collect().TickTo(1000);

        s.Of(AlertKind.NotCheckedIn).Select(e => (e.Type, e.Level)).ShouldBe(
            [(AlertEventType.Raised, 0), (AlertEventType.Escalated, 1), (AlertEventType.Acknowledged, 1)]);
        var ack = s.Single(AlertKind.NotCheckedIn, AlertEventType.Acknowledged);
        ack.AcknowledgedBy.ShouldBe("teacher.kim");
        Seconds(ack).ShouldBe(675);
        var active = new List<ActiveAlert>();
        s.Engine.CopyActive(active);
        active.ShouldHaveSingleItem().AcknowledgedBy.ShouldBe("teacher.kim");
    }

    [Fact]
    public void A_closed_alert_cannot_be_acknowledged()
    {
        var s = new AlertScenario(checkIn: false).TickTo(600);
        var id = s.Single(AlertKind.NotCheckedIn, AlertEventType.Raised).AlertId;
        s.Engine.SetCheckedIn(Owner, true, At(601), At(601));

        s.Engine.Acknowledge(id, "aide.sam", At(602)).ShouldBeFalse();
        s.Engine.ActiveCount.ShouldBe(0);
    }
}

using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

/// <summary>The worked timeline of docs/alerts.md, replayed: if this fails, the document is wrong too.</summary>
public sealed class WorkedTimelineTests
{
    [Fact]
    public void The_documented_timeline_gives_the_documented_events()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 80 })
            .Heart(0, 1200, 80)
            .Heart(1200, 1290, 130);
        var tachycardia = s.Single(AlertKind.Tachycardia, AlertEventType.Raised).AlertId;
        s.Engine.Acknowledge(tachycardia, "teacher.kim", At(1290)).ShouldBeTrue();
        s.Collect()
            .Heart(1290, 1320, 130)
            .Heart(1320, 1380, 118)
            .Heart(1380, 1800, 100)
            .TickTo(2100);
        for (var t = 1800.0; t < 2090; t += 0.25)
        {
            s.Engine.ObserveHeart(Owner, Band, At(t), 140, null, At(2100));
        }
        s.Heart(2100, 2110, 80);

        s.Events.Select(e => (e.Kind, e.Type, Clock(e), e.Level)).ShouldBe(
        [
            (AlertKind.Tachycardia, AlertEventType.Raised, "08:20:10", 0),
            (AlertKind.Tachycardia, AlertEventType.Escalated, "08:21:10", 1),
            (AlertKind.Tachycardia, AlertEventType.Acknowledged, "08:21:30", 1),
            (AlertKind.Tachycardia, AlertEventType.Cleared, "08:23:10", 1),
            (AlertKind.SilentSensor, AlertEventType.Raised, "08:30:30", 0),
            (AlertKind.SilentSensor, AlertEventType.Escalated, "08:31:30", 1),
            (AlertKind.SilentSensor, AlertEventType.Escalated, "08:32:30", 2),
            (AlertKind.SilentSensor, AlertEventType.Cleared, "08:35:00", 2),
        ]);
        s.Events[0].Detail.ShouldBe("heart rate 130 bpm for 10 s, 1.6× resting 80 bpm (clinician)");
        s.Events[2].AcknowledgedBy.ShouldBe("teacher.kim");
        s.Events[3].Detail.ShouldBe("heart rate 100 bpm, back in range for 10 s");
        s.Events[4].Detail.ShouldBe("device 101 sent nothing for 30 s");
        s.Engine.Counters.LateIgnored.ShouldBe(1160);
    }

    private static string Clock(AlertEvent e) => e.At.ToString("HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture);
}

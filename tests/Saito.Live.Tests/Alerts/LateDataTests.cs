using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class LateDataTests
{
    [Fact]
    public void A_hub_replaying_the_last_five_minutes_of_a_tachycardia_trace_fires_nothing()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 80 }).Heart(0, 290, 80).TickTo(600);
        var silent = s.Single(AlertKind.SilentSensor, AlertEventType.Raised);
        var before = s.Engine.Counters;

        // The hub comes back at 600 s and sends what it buffered: 300 s to 590 s, the student at 190 bpm.
        for (var t = 300.0; t < 590; t += 0.25)
        {
            s.Engine.ObserveHeart(Owner, Band, At(t), 190, 38.5, At(600));
        }
        s.Collect().TickTo(610);

        s.Of(AlertKind.Tachycardia).ShouldBeEmpty();
        s.Of(AlertKind.HeartRateHigh).ShouldBeEmpty();
        s.Of(AlertKind.Overheating).ShouldBeEmpty();
        s.Of(AlertKind.SilentSensor, AlertEventType.Cleared).ShouldBeEmpty("late readings do not clear a silent sensor either");
        s.Engine.ActiveCount.ShouldBe(1);
        Seconds(silent).ShouldBe(320);
        (s.Engine.Counters.LateIgnored - before.LateIgnored).ShouldBe(1160);
        s.Engine.Counters.ReadingsEvaluated.ShouldBe(before.ReadingsEvaluated);
    }

    [Fact]
    public void Late_readings_do_not_prolong_an_open_alert()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 80 }).Heart(0, 15, 130);
        for (var t = 15.0; t < 40; t += 0.25)
        {
            s.Engine.ObserveHeart(Owner, Band, At(t), 90, null, At(t));
            s.Engine.ObserveHeart(Owner, Band, At(t - 20), 130, null, At(t)); // an old 130 bpm, replayed
        }
        s.Collect();

        s.Of(AlertKind.Tachycardia).Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 10.0), (AlertEventType.Cleared, 25.0)]);
    }
}

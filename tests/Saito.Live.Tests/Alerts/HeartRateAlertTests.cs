using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class HeartRateAlertTests
{
    private static readonly AlertThresholds Resting80 = new() { RestingHeartRate = 80 };

    [Fact]
    public void Tachycardia_fires_after_N_seconds_at_k_times_the_clinician_baseline_and_not_before()
    {
        var s = new AlertScenario(thresholds: Resting80).Heart(0, 30, 80).Heart(30, 50, 130);

        var raised = s.Single(AlertKind.Tachycardia, AlertEventType.Raised);
        Seconds(raised).ShouldBe(40);
        raised.Value.ShouldBe(130);
        raised.Level.ShouldBe(AlertLevels.Aide);
        raised.OwnerId.ShouldBe(Owner);
        raised.Detail.ShouldBe("heart rate 130 bpm for 10 s, 1.6× resting 80 bpm (clinician)");
        s.Of(AlertKind.Tachycardia).Count.ShouldBe(1);
    }

    [Fact]
    public void Tachycardia_uses_the_median_of_the_first_BaselineSeconds_when_no_clinician_baseline_is_set()
    {
        // 68 and 72 alternating for 120 s: median 70, limit 1.5 × 70 = 105.
        var s = new AlertScenario()
            .Heart(0, 120, t => (int)(t * 4) % 2 == 0 ? 68 : 72)
            .Heart(120, 140, 106);

        var raised = s.Single(AlertKind.Tachycardia, AlertEventType.Raised);
        Seconds(raised).ShouldBe(130);
        raised.Detail.ShouldContain("resting 70 bpm (learned)");
    }

    [Fact]
    public void Until_the_baseline_is_learned_only_absolute_limits_apply()
    {
        var s = new AlertScenario().Heart(0, 60, 80).Heart(60, 110, 170);

        s.Of(AlertKind.Tachycardia).ShouldBeEmpty();
        s.Of(AlertKind.HeartRateHigh).ShouldBeEmpty();
        s.Engine.Counters.ReadingsEvaluated.ShouldBe(440);
    }

    [Fact]
    public void A_spike_shorter_than_N_seconds_does_not_fire()
    {
        var s = new AlertScenario(thresholds: Resting80).Heart(0, 20, 80).Heart(20, 29.75, 160).Heart(29.75, 60, 80);

        s.Of(AlertKind.Tachycardia).ShouldBeEmpty();
    }

    [Fact]
    public void A_trace_flapping_around_the_threshold_raises_once_and_clears_once()
    {
        // Limit 120, clears below 115 (margin 5) held for 10 s.
        var s = new AlertScenario(thresholds: Resting80)
            .Heart(0, 10, 80)
            .Heart(10, 70, t => (int)t % 8 < 4 ? 125 : 110) // 4 s over, 4 s under: never long enough
            .Heart(70, 85, 125)
            .Heart(85, 145, t => (int)(t * 4) % 2 == 0 ? 118 : 123) // inside the hysteresis band
            .Heart(145, 170, 100);

        var events = s.Of(AlertKind.Tachycardia);
        events.Select(e => e.Type).ShouldBe([AlertEventType.Raised, AlertEventType.Escalated, AlertEventType.Cleared]);
        Seconds(events[0]).ShouldBe(80);
        Seconds(events[2]).ShouldBe(155);
        events[2].AlertId.ShouldBe(events[0].AlertId);
        events[2].Detail.ShouldBe("heart rate 100 bpm, back in range for 10 s");
    }

    [Fact]
    public void Heart_rate_at_or_above_the_absolute_maximum_fires_after_its_onset_and_clears_below_the_margin()
    {
        var s = new AlertScenario().Heart(0, 10, 185).Heart(10, 20, 178).Heart(20, 40, 150);

        var events = s.Of(AlertKind.HeartRateHigh);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 5.0), (AlertEventType.Cleared, 30.0)]);
        events[0].Detail.ShouldBe("heart rate 185 bpm for 5 s, limit 180 bpm");
    }

    [Fact]
    public void Heart_rate_at_or_below_the_absolute_minimum_fires_bradycardia_and_clears_above_the_margin()
    {
        var s = new AlertScenario().Heart(0, 20, 45).Heart(20, 40, 60);

        var events = s.Of(AlertKind.Bradycardia);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 10.0), (AlertEventType.Cleared, 30.0)]);
        events[0].Value.ShouldBe(45);
        events[0].Detail.ShouldBe("heart rate 45 bpm for 10 s, limit 50 bpm");
    }

    [Fact]
    public void Per_student_thresholds_override_the_defaults()
    {
        var s = new AlertScenario();
        s.Engine.SetStudent(8, new AlertThresholds { HeartRateMax = 150, RestingHeartRate = 100, TachycardiaFactor = 1.2 }, hasSeatMat: false);
        s.Engine.SetSession(8, T0, T0.AddHours(2));
        for (var t = 0.0; t < 12; t += 0.25)
        {
            s.Engine.ObserveHeart(Owner, Band, At(t), 160, null, At(t));
            s.Engine.ObserveHeart(8, 201, At(t), 160, null, At(t));
        }
        s.Collect();

        s.Events.ShouldAllBe(e => e.OwnerId == 8);
        s.Events.Select(e => (e.Kind, Seconds(e))).ShouldBe([(AlertKind.HeartRateHigh, 5.0), (AlertKind.Tachycardia, 10.0)]);
    }

    [Fact]
    public void Missing_heart_rate_neither_confirms_nor_clears()
    {
        // 130 bpm, then 3 s of readings without a heart rate: onset still counts from 0, not from 8.
        var s = new AlertScenario(thresholds: Resting80).Heart(0, 20, t => t is >= 5 and < 8 ? null : 130);

        Seconds(s.Single(AlertKind.Tachycardia, AlertEventType.Raised)).ShouldBe(10);
    }

    [Fact]
    public void A_gap_longer_than_MaxGapSeconds_restarts_the_onset()
    {
        var s = new AlertScenario(thresholds: Resting80).Heart(0, 6, 130).Heart(17, 23, 130).Heart(23, 40, 130);

        Seconds(s.Single(AlertKind.Tachycardia, AlertEventType.Raised)).ShouldBe(27);
    }

    [Fact]
    public void Out_of_order_readings_are_ignored_and_counted()
    {
        var s = new AlertScenario(thresholds: Resting80).Heart(0, 8, 130);
        s.Engine.ObserveHeart(Owner, Band, At(5), 80, null, At(8)); // would restart the onset if evaluated
        s.Engine.ObserveHeart(Owner, Band, At(7.75), 80, null, At(8)); // same timestamp as the newest: a duplicate
        s.Heart(8, 12, 130);

        Seconds(s.Single(AlertKind.Tachycardia, AlertEventType.Raised)).ShouldBe(10);
        s.Engine.Counters.OutOfOrderIgnored.ShouldBe(2);
    }

    [Fact]
    public void A_reading_stamped_far_in_the_future_is_ignored_and_does_not_hold_back_the_true_ones()
    {
        var s = new AlertScenario(thresholds: Resting80);
        s.Engine.ObserveHeart(Owner, Band, At(120), 80, null, At(0));
        s.Heart(0, 12, 130);

        Seconds(s.Single(AlertKind.Tachycardia, AlertEventType.Raised)).ShouldBe(10);
        s.Engine.Counters.FutureIgnored.ShouldBe(1);
    }
}

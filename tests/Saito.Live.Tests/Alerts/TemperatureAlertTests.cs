using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class TemperatureAlertTests
{
    [Fact]
    public void Skin_temperature_at_the_level_for_OverheatSeconds_fires_and_clears_below_the_margin()
    {
        var s = new AlertScenario().Temperature(0, 40, _ => 37.6).Temperature(40, 45, _ => 37.3).Temperature(45, 70, _ => 37.0);

        var events = s.Of(AlertKind.Overheating);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 30.0), (AlertEventType.Cleared, 55.0)]);
        events[0].Detail.ShouldBe("skin temperature 37.6 °C for 30 s, limit 37.5 °C");
        events[0].Value.ShouldBe(37.6);
    }

    [Fact]
    public void A_warm_and_rising_skin_temperature_fires_once_the_trend_window_is_covered()
    {
        // 0.15 °C/min from 36.0: warm (≥ 36.5) from 200 s, the 5-minute trend known from 300 s, raised 30 s later.
        var s = new AlertScenario().Temperature(0, 400, t => 36.0 + (0.15 * t / 60));

        var raised = s.Single(AlertKind.Overheating, AlertEventType.Raised);
        Seconds(raised).ShouldBe(330);
        raised.Value.ShouldBe(36.825, 1e-9);
        raised.Detail.ShouldBe("skin temperature 36.8 °C rising 0.15 °C/min over 5 min");
    }

    [Fact]
    public void Warm_but_steady_or_rising_but_cool_does_not_fire()
    {
        new AlertScenario().Temperature(0, 600, _ => 37.0).Of(AlertKind.Overheating).ShouldBeEmpty();
        new AlertScenario().Temperature(0, 600, t => 34.0 + (0.2 * t / 60)).Of(AlertKind.Overheating).ShouldBeEmpty();
    }

    [Fact]
    public void Per_student_overheat_level_overrides_the_default()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { OverheatCelsius = 37.0, OverheatWarnCelsius = 36.0 }).Temperature(0, 40, _ => 37.1);

        Seconds(s.Single(AlertKind.Overheating, AlertEventType.Raised)).ShouldBe(30);
    }
}

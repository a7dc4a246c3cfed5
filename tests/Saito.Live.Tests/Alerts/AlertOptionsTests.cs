using Saito.Live.Alerts;

namespace Saito.Live.Tests.Alerts;

public sealed class AlertOptionsTests
{
    [Fact]
    public void The_defaults_are_valid_and_paediatric()
    {
        var o = new AlertOptions();

        o.Validate().ShouldBeEmpty();
        (o.TachycardiaFactor, o.TachycardiaSeconds, o.HeartRateMax, o.HeartRateMin).ShouldBe((1.5, 10, 180.0, 50.0));
        (o.OverheatCelsius, o.OverheatWarnCelsius, o.OverheatRiseCelsiusPerMinute, o.OverheatTrendMinutes).ShouldBe((37.5, 36.5, 0.1, 5));
        (o.SilentSensorSeconds, o.CheckInGraceMinutes, o.OffSeatSeconds, o.EscalateAfterSeconds).ShouldBe((30, 10, 60, 60));
        (o.LateAfterSeconds, o.BaselineSeconds, o.ClearSeconds).ShouldBe((10, 120, 10));
    }

    [Fact]
    public void A_setting_out_of_range_is_named_with_its_range()
    {
        new AlertOptions { TachycardiaFactor = 1.0 }.Validate().ShouldBe(["Alerts:TachycardiaFactor must be between 1.1 and 5 (was 1)"]);
        new AlertOptions { LateAfterSeconds = 0, SilentSensorSeconds = -1 }.Validate().ShouldBe(
        [
            "Alerts:SilentSensorSeconds must be between 5 and 3600 (was -1)",
            "Alerts:LateAfterSeconds must be between 1 and 3600 (was 0)",
        ]);
        new AlertOptions { OverheatRiseCelsiusPerMinute = double.NaN }.Validate().ShouldHaveSingleItem().ShouldStartWith("Alerts:OverheatRiseCelsiusPerMinute");
    }

    [Fact]
    public void Limits_that_contradict_each_other_are_reported()
    {
        new AlertOptions { HeartRateMin = 110, HeartRateMax = 105 }.Validate().ShouldHaveSingleItem()
            .ShouldBe("Alerts:HeartRateMin (110) must be below Alerts:HeartRateMax (105)");
        new AlertOptions { OverheatWarnCelsius = 38 }.Validate().ShouldHaveSingleItem()
            .ShouldBe("Alerts:OverheatWarnCelsius (38) must be below Alerts:OverheatCelsius (37.5)");
    }

    [Fact]
    public void The_engine_refuses_invalid_options_and_thresholds()
    {
        Should.Throw<ArgumentException>(() => new AlertEngine(new AlertOptions { EscalateAfterSeconds = 1 }))
            .Message.ShouldContain("Alerts:EscalateAfterSeconds must be between 10 and 3600");

        var engine = new AlertEngine(new AlertOptions());
        Should.Throw<ArgumentException>(() => engine.SetStudent(1, new AlertThresholds { RestingHeartRate = 0 }, false))
            .Message.ShouldContain("Threshold RestingHeartRate must be between 30 and 200 (was 0)");
        Should.Throw<ArgumentException>(() => engine.SetStudent(1, new AlertThresholds { HeartRateMin = 115, HeartRateMax = 110 }, false))
            .Message.ShouldContain("heart-rate minimum 115 must be below maximum 110");
        Should.Throw<InvalidOperationException>(() => engine.SetSession(2, DateTime.UtcNow, DateTime.UtcNow.AddHours(1)));
    }

    [Fact]
    public void Every_kind_has_a_distinct_kebab_case_name_that_parses_back_and_a_text()
    {
        var kinds = Enum.GetValues<AlertKind>();
        kinds.Length.ShouldBe(AlertKinds.Count);
        kinds.Select(AlertKinds.Name).ShouldBeUnique();
        AlertKinds.Name(AlertKind.HeartRateHigh).ShouldBe("heart-rate-high");
        AlertKinds.Name(AlertKind.NotCheckedIn).ShouldBe("not-checked-in");
        foreach (var kind in kinds)
        {
            AlertKinds.Name(kind).ShouldMatch("^[a-z]+(-[a-z]+)*$");
            AlertKinds.TryParse(AlertKinds.Name(kind), out var parsed).ShouldBeTrue();
            parsed.ShouldBe(kind);
            AlertKinds.Text(kind).ShouldNotBeNullOrWhiteSpace();
        }
        AlertKinds.TryParse("HeartRateHigh", out _).ShouldBeFalse();
    }
}

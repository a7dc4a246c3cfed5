namespace Saito.Live.Alerts;

/// <summary>
/// The alert rules' settings (configuration section <see cref="Section"/>). Defaults are for children in a
/// classroom; a clinician's per-student values (<see cref="AlertThresholds"/>) override the heart and
/// temperature ones. docs/alerts.md gives every rule's formula.
/// </summary>
public sealed class AlertOptions
{
    /// <summary>The configuration section the server binds.</summary>
    public const string Section = "Alerts";

    /// <summary>Tachycardia when heart rate ≥ this × the resting baseline.</summary>
    public double TachycardiaFactor { get; set; } = 1.5;

    /// <summary>Seconds (reading time) the relative condition must hold before Tachycardia is raised.</summary>
    public int TachycardiaSeconds { get; set; } = 10;

    /// <summary>Absolute upper heart-rate limit, bpm (HeartRateHigh).</summary>
    public double HeartRateMax { get; set; } = 180;

    /// <summary>Seconds heart rate must stay ≥ <see cref="HeartRateMax"/> before HeartRateHigh is raised.</summary>
    public int HeartRateMaxSeconds { get; set; } = 5;

    /// <summary>Absolute lower heart-rate limit, bpm (Bradycardia).</summary>
    public double HeartRateMin { get; set; } = 50;

    /// <summary>Seconds heart rate must stay ≤ <see cref="HeartRateMin"/> before Bradycardia is raised.</summary>
    public int HeartRateMinSeconds { get; set; } = 10;

    /// <summary>Hysteresis for the heart-rate rules: a limit's alert clears only beyond the limit by this many bpm.</summary>
    public double HeartRateMarginBpm { get; set; } = 5;

    /// <summary>Skin temperature level, °C, at or above which Overheating counts.</summary>
    public double OverheatCelsius { get; set; } = 37.5;

    /// <summary>Skin temperature, °C, at or above which a rising trend counts as Overheating.</summary>
    public double OverheatWarnCelsius { get; set; } = 36.5;

    /// <summary>The rising trend: least-squares slope of skin temperature, °C per minute, over <see cref="OverheatTrendMinutes"/>.</summary>
    public double OverheatRiseCelsiusPerMinute { get; set; } = 0.1;

    /// <summary>The window of the rising trend, minutes; the trend counts only once readings cover it.</summary>
    public int OverheatTrendMinutes { get; set; } = 5;

    /// <summary>Seconds the level or trend must hold before Overheating is raised.</summary>
    public int OverheatSeconds { get; set; } = 30;

    /// <summary>Hysteresis for Overheating, °C below the level (and the warn temperature) before it can clear.</summary>
    public double OverheatMarginCelsius { get; set; } = 0.3;

    /// <summary>An assigned device of a checked-in student silent this long raises SilentSensor.</summary>
    public int SilentSensorSeconds { get; set; } = 30;

    /// <summary>Minutes after the session starts before NotCheckedIn is raised.</summary>
    public int CheckInGraceMinutes { get; set; } = 10;

    /// <summary>Seconds the seat mat must read empty before OffSeat is raised.</summary>
    public int OffSeatSeconds { get; set; } = 60;

    /// <summary>Seconds the condition must be absent (beyond the hysteresis margin) before a heart, temperature or seat alert clears.</summary>
    public int ClearSeconds { get; set; } = 10;

    /// <summary>An unacknowledged alert goes up one level (aide → teacher → admin) after this many seconds at a level.</summary>
    public int EscalateAfterSeconds { get; set; } = 60;

    /// <summary>A reading stamped more than this before now is late: stored, never alerted on.</summary>
    public int LateAfterSeconds { get; set; } = 10;

    /// <summary>Without a clinician's resting heart rate, the baseline is the median over the first this-many seconds of the session's readings.</summary>
    public int BaselineSeconds { get; set; } = 120;

    /// <summary>A gap longer than this between two readings of a signal restarts onset and clear timing.</summary>
    public int MaxGapSeconds { get; set; } = 10;

    /// <summary>Readable errors, each naming its setting (<c>Alerts:Name</c>); empty when the options are usable.</summary>
    public IEnumerable<string> Validate()
    {
        var errors = new List<string>();
        Range(errors, nameof(TachycardiaFactor), TachycardiaFactor, AlertRanges.TachycardiaFactor);
        Range(errors, nameof(TachycardiaSeconds), TachycardiaSeconds, 1, 600);
        Range(errors, nameof(HeartRateMax), HeartRateMax, AlertRanges.HeartRateMax);
        Range(errors, nameof(HeartRateMaxSeconds), HeartRateMaxSeconds, 1, 600);
        Range(errors, nameof(HeartRateMin), HeartRateMin, AlertRanges.HeartRateMin);
        Range(errors, nameof(HeartRateMinSeconds), HeartRateMinSeconds, 1, 600);
        Range(errors, nameof(HeartRateMarginBpm), HeartRateMarginBpm, 0, 30);
        Range(errors, nameof(OverheatCelsius), OverheatCelsius, AlertRanges.Celsius);
        Range(errors, nameof(OverheatWarnCelsius), OverheatWarnCelsius, AlertRanges.Celsius);
        Range(errors, nameof(OverheatRiseCelsiusPerMinute), OverheatRiseCelsiusPerMinute, 0.01, 2);
        Range(errors, nameof(OverheatTrendMinutes), OverheatTrendMinutes, 1, 30);
        Range(errors, nameof(OverheatSeconds), OverheatSeconds, 1, 600);
        Range(errors, nameof(OverheatMarginCelsius), OverheatMarginCelsius, 0, 2);
        Range(errors, nameof(SilentSensorSeconds), SilentSensorSeconds, 5, 3600);
        Range(errors, nameof(CheckInGraceMinutes), CheckInGraceMinutes, 0, 240);
        Range(errors, nameof(OffSeatSeconds), OffSeatSeconds, AlertRanges.OffSeatSeconds);
        Range(errors, nameof(ClearSeconds), ClearSeconds, 0, 600);
        Range(errors, nameof(EscalateAfterSeconds), EscalateAfterSeconds, 10, 3600);
        Range(errors, nameof(LateAfterSeconds), LateAfterSeconds, 1, 3600);
        Range(errors, nameof(BaselineSeconds), BaselineSeconds, 30, 1800);
        Range(errors, nameof(MaxGapSeconds), MaxGapSeconds, 1, 300);
        if (HeartRateMin >= HeartRateMax)
        {
            errors.Add(FormattableString.Invariant($"{Section}:HeartRateMin ({HeartRateMin}) must be below {Section}:HeartRateMax ({HeartRateMax})"));
        }
        if (OverheatWarnCelsius >= OverheatCelsius)
        {
            errors.Add(FormattableString.Invariant($"{Section}:OverheatWarnCelsius ({OverheatWarnCelsius}) must be below {Section}:OverheatCelsius ({OverheatCelsius})"));
        }
        return errors;
    }

    private static void Range(List<string> errors, string name, double value, double min, double max) =>
        Range(errors, name, value, (min, max));

    private static void Range(List<string> errors, string name, double value, (double Min, double Max) range) =>
        AlertRanges.Check(errors, $"{Section}:{name}", value, range);
}

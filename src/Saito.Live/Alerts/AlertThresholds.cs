namespace Saito.Live.Alerts;

/// <summary>
/// One student's limits where a clinician has set them; a null value means the <see cref="AlertOptions"/> default.
/// With <see cref="RestingHeartRate"/> set, Tachycardia applies from the first reading; without it the engine
/// learns a baseline (AlertOptions.BaselineSeconds).
/// </summary>
public sealed record AlertThresholds
{
    /// <summary>No overrides: every limit is the options' default.</summary>
    public static AlertThresholds None { get; } = new();

    /// <summary>The resting heart rate, bpm, Tachycardia is relative to.</summary>
    public double? RestingHeartRate { get; init; }

    /// <summary>Overrides AlertOptions.TachycardiaFactor.</summary>
    public double? TachycardiaFactor { get; init; }

    /// <summary>Overrides AlertOptions.HeartRateMax.</summary>
    public double? HeartRateMax { get; init; }

    /// <summary>Overrides AlertOptions.HeartRateMin.</summary>
    public double? HeartRateMin { get; init; }

    /// <summary>Overrides AlertOptions.OverheatCelsius.</summary>
    public double? OverheatCelsius { get; init; }

    /// <summary>Overrides AlertOptions.OverheatWarnCelsius.</summary>
    public double? OverheatWarnCelsius { get; init; }

    /// <summary>Overrides AlertOptions.OffSeatSeconds.</summary>
    public int? OffSeatSeconds { get; init; }

    /// <summary>Readable errors for values set out of range (same ranges as <see cref="AlertOptions"/>); empty when usable.</summary>
    public IEnumerable<string> Validate()
    {
        var errors = new List<string>();
        Check(errors, nameof(RestingHeartRate), RestingHeartRate, AlertRanges.RestingHeartRate);
        Check(errors, nameof(TachycardiaFactor), TachycardiaFactor, AlertRanges.TachycardiaFactor);
        Check(errors, nameof(HeartRateMax), HeartRateMax, AlertRanges.HeartRateMax);
        Check(errors, nameof(HeartRateMin), HeartRateMin, AlertRanges.HeartRateMin);
        Check(errors, nameof(OverheatCelsius), OverheatCelsius, AlertRanges.Celsius);
        Check(errors, nameof(OverheatWarnCelsius), OverheatWarnCelsius, AlertRanges.Celsius);
        Check(errors, nameof(OffSeatSeconds), OffSeatSeconds, AlertRanges.OffSeatSeconds);
        return errors;
    }

    private static void Check(List<string> errors, string name, double? value, (double Min, double Max) range)
    {
        if (value is { } v)
        {
            AlertRanges.Check(errors, "Threshold " + name, v, range);
        }
    }
}

namespace Saito.Live.Alerts;

/// <summary>The accepted ranges shared by <see cref="AlertOptions"/> and a clinician's <see cref="AlertThresholds"/>.</summary>
internal static class AlertRanges
{
    public static readonly (double Min, double Max) TachycardiaFactor = (1.1, 5);
    public static readonly (double Min, double Max) RestingHeartRate = (30, 200);
    public static readonly (double Min, double Max) HeartRateMax = (100, 250);
    public static readonly (double Min, double Max) HeartRateMin = (20, 120);
    public static readonly (double Min, double Max) Celsius = (30, 45);
    public static readonly (double Min, double Max) OffSeatSeconds = (5, 3600);

    /// <summary>Adds "<paramref name="label"/> must be between min and max (was value)" unless the value is in range (NaN never is).</summary>
    public static void Check(List<string> errors, string label, double value, (double Min, double Max) range)
    {
        if (!(value >= range.Min && value <= range.Max))
        {
            errors.Add(FormattableString.Invariant($"{label} must be between {range.Min} and {range.Max} (was {value})"));
        }
    }
}

namespace Saito.Live.Analytics;

/// <summary>The range check both analytics options classes share, worded the way the server reports a bad setting.</summary>
internal static class OptionChecks
{
    /// <summary>Adds "<c>{section}:{name} must be between {min} and {max} (was {value}).</c>" when the value is outside (NaN is outside).</summary>
    public static void Range(List<string> errors, string section, string name, double value, double min, double max)
    {
        if (!(value >= min && value <= max))
        {
            errors.Add(FormattableString.Invariant($"{section}:{name} must be between {min} and {max} (was {value})."));
        }
    }

    /// <summary>Throws <see cref="ArgumentException"/> naming every error when there is any.</summary>
    public static void ThrowIfInvalid(IEnumerable<string> errors, string parameterName)
    {
        var list = errors.ToList();
        if (list.Count > 0)
        {
            throw new ArgumentException(string.Join(" ", list), parameterName);
        }
    }

    /// <summary>Seconds as ticks (rounded to the nearest tick).</summary>
    public static long Ticks(double seconds) => (long)Math.Round(seconds * TimeSpan.TicksPerSecond);
}

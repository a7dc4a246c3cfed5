using System.Globalization;

namespace Saito.Readings.Configuration;

/// <summary>
/// The range check the options validators share, so a bad setting is reported in one wording wherever it lives:
/// "<c>Storage:BatchSize must be between 1 and 1,000,000 readings (was 0).</c>"
/// </summary>
public static class OptionFailures
{
    /// <summary>
    /// Adds a failure naming <paramref name="key"/> when <paramref name="value"/> is outside <paramref name="min"/> to
    /// <paramref name="max"/> (inclusive); an unset value passes. <paramref name="minMeaning"/> says what the minimum
    /// does (<c>off</c>, <c>no limit</c>), <paramref name="unit"/> follows the maximum (<c>readings</c>).
    /// </summary>
    public static void Range(ICollection<string> failures, string key, long? value, long min, long max, string? unit = null, string? minMeaning = null)
    {
        ArgumentNullException.ThrowIfNull(failures);
        if (value is not { } was || (was >= min && was <= max))
        {
            return;
        }

        string low = minMeaning is null ? Number(min) : $"{Number(min)} ({minMeaning})";
        string high = unit is null ? Number(max) : $"{Number(max)} {unit}";
        failures.Add($"{key} must be between {low} and {high} (was {was.ToString(CultureInfo.InvariantCulture)}).");
    }

    // Four digits read well as they are (3600 seconds); longer numbers with a separator (86,400).
    private static string Number(long value) =>
        value.ToString(Math.Abs(value) >= 10_000 ? "N0" : "D", CultureInfo.InvariantCulture);
}

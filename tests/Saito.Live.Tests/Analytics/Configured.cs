namespace Saito.Live.Tests.Analytics;

/// <summary>Options for a test: the defaults, changed by the test's own edit.</summary>
internal static class Configured
{
    public static T Options<T>(Action<T>? configure)
        where T : new()
    {
        var options = new T();
        configure?.Invoke(options);
        return options;
    }

    /// <summary>Sets one setting by name (an int setting takes the value truncated) and returns the validation errors.</summary>
    public static IEnumerable<string> ValidateWith<T>(string setting, double value, Func<T, IEnumerable<string>> validate)
        where T : new()
    {
        var options = new T();
        var property = typeof(T).GetProperty(setting)!;
        property.SetValue(options, property.PropertyType == typeof(int) ? (object)(int)value : value);
        return validate(options);
    }
}

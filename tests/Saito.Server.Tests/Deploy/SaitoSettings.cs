using System.Collections;
using System.ComponentModel;
using System.Reflection;
using Saito.Ingestion.Hosting;
using Saito.Mqtt.Broker;
using Saito.Registry.Hosting;
using Saito.Storage;

namespace Saito.Server.Tests.Deploy;

/// <summary>
/// Every setting Saito knows, taken from the code rather than a list: each options class with a <c>SectionName</c>
/// constant is bound to that section (<c>BindConfiguration(X.SectionName)</c>), so a key is known when a section name
/// is a prefix of it and the rest walks that class's bindable properties down to a value. A new options class or
/// property is known here without a change to this file.
/// </summary>
internal static class SaitoSettings
{
    /// <summary>The assemblies that hold Saito's options classes (the server and the libraries it composes).</summary>
    private static readonly Assembly[] s_assemblies =
    [
        typeof(MqttBrokerOptions).Assembly,
        typeof(ExternalBrokerOptions).Assembly,
        typeof(StorageOptions).Assembly,
        typeof(SchoolOptions).Assembly,
        typeof(SaitoApp).Assembly,
    ];

    /// <summary>Keys Saito reads straight from the configuration, not through an options class.</summary>
    private static readonly string[] s_directKeys = ["Mqtt:Mode"];

    /// <summary>Sections whose keys are the framework's and open-ended (log levels per category).</summary>
    private static readonly string[] s_openSections = ["Logging"];

    private static readonly ILookup<string, Type> s_sections = s_assemblies
        .SelectMany(a => a.GetTypes())
        .Select(t => (Type: t, Field: t.GetField("SectionName", BindingFlags.Public | BindingFlags.Static)))
        .Where(x => x.Field is { IsLiteral: true } && x.Field.FieldType == typeof(string))
        .ToLookup(x => (string)x.Field!.GetRawConstantValue()!, x => x.Type, StringComparer.OrdinalIgnoreCase);

    /// <summary>The section names found, for messages and for the test that the catalogue is not empty.</summary>
    public static IReadOnlyList<string> Sections { get; } = s_sections.Select(g => g.Key).Order(StringComparer.Ordinal).ToList();

    /// <summary>Null when <paramref name="key"/> (<c>Section:Key</c>, any case, as .NET configuration compares) is a setting Saito has; otherwise why not.</summary>
    public static string? Problem(string key)
    {
        string[] segments = key.Split(':');
        if (segments.Any(string.IsNullOrEmpty))
        {
            return $"'{key}' has an empty segment";
        }

        if (s_directKeys.Contains(key, StringComparer.OrdinalIgnoreCase)
            || s_openSections.Any(s => key.StartsWith(s + ":", StringComparison.OrdinalIgnoreCase)))
        {
            return null;
        }

        // The longest section that is a prefix speaks for the key (Mqtt:External:Hots is ExternalBrokerOptions' to
        // explain, not MqttBrokerOptions'); a shorter one can still know it.
        var reasons = new List<string>();
        for (int length = segments.Length; length >= 1; length--)
        {
            string section = string.Join(':', segments[..length]);
            bool explained = reasons.Count > 0;
            foreach (var type in s_sections[section])
            {
                if (Walk(type, segments, length) is not { } reason)
                {
                    return null;
                }

                if (!explained)
                {
                    reasons.Add($"{type.Name} ({section}) {reason}");
                }
            }
        }

        return reasons.Count > 0
            ? $"'{key}' is not a Saito setting: " + string.Join("; ", reasons)
            : $"'{key}' is not a Saito setting: no options class is bound to a section it starts with (sections: {string.Join(", ", Sections)})";
    }

    /// <summary>Null when segments[index..] lead through <paramref name="type"/>'s properties to a value; otherwise why not.</summary>
    private static string? Walk(Type type, string[] segments, int index)
    {
        if (index == segments.Length)
        {
            return IsValue(type) ? null : $"ends at {type.Name}, which holds settings rather than being one";
        }

        var property = type.GetProperty(segments[index], BindingFlags.Public | BindingFlags.Instance | BindingFlags.IgnoreCase);
        if (property is null || property.GetIndexParameters().Length > 0)
        {
            return $"has no setting '{segments[index]}'";
        }

        var propertyType = Nullable.GetUnderlyingType(property.PropertyType) ?? property.PropertyType;
        bool settable = property.GetSetMethod(nonPublic: false) is not null;
        if (IsValue(propertyType))
        {
            if (!settable)
            {
                return $"has '{property.Name}', but it is computed, not a setting";
            }

            return index == segments.Length - 1 ? null : $"has '{property.Name}', a single value with nothing below it";
        }

        if (!settable && property.GetGetMethod(nonPublic: false) is null)
        {
            return $"has no setting '{segments[index]}'";
        }

        if (ElementType(propertyType) is { } element)
        {
            // A list or array takes one key per item: Section__List__0, Section__List__1 (a dictionary: any key).
            if (index + 1 == segments.Length)
            {
                return $"has the list '{property.Name}', set item by item ('{property.Name}:0', '{property.Name}:1', ...)";
            }

            bool dictionary = propertyType.IsGenericType && propertyType.GetGenericTypeDefinition() == typeof(Dictionary<,>);
            return dictionary || int.TryParse(segments[index + 1], out _)
                ? Walk(element, segments, index + 2)
                : $"has the list '{property.Name}', whose items are numbered, not '{segments[index + 1]}'";
        }

        return Walk(propertyType, segments, index + 1);
    }

    /// <summary>A type the configuration binder sets from one string (numbers, strings, enums, time spans, anything with a string converter).</summary>
    private static bool IsValue(Type type) =>
        type == typeof(string) || type.IsEnum || TypeDescriptor.GetConverter(type).CanConvertFrom(typeof(string));

    private static Type? ElementType(Type type)
    {
        if (type.IsArray)
        {
            return type.GetElementType();
        }

        if (type.IsGenericType && type.GetGenericTypeDefinition() == typeof(Dictionary<,>))
        {
            return type.GetGenericArguments()[1];
        }

        return type.IsGenericType && typeof(IEnumerable).IsAssignableFrom(type) ? type.GetGenericArguments()[0] : null;
    }
}

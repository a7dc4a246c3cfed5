using System.Diagnostics.CodeAnalysis;
using Saito.Readings;

namespace Saito.Payloads;

/// <summary>
/// Parses <c>{prefix}/{hub}/{device}/{kind}</c>: exactly four levels; the prefix compared ordinally; hub and device
/// non-empty, at most <see cref="ReadingLimits.MaxHubLength"/> / <see cref="ReadingLimits.MaxDeviceLength"/>
/// characters, without wildcards (<c>+</c>, <c>#</c>) or control characters; kind one of <c>biosensor</c>,
/// <c>location</c>, <c>pressure</c>, <c>hello</c>, <c>checkin</c> (lower case).
/// </summary>
public static class SaitoTopicParser
{
    public static bool TryParse(string topic, string prefix, out SaitoTopic parsed, [NotNullWhen(false)] out string? error)
    {
        parsed = default;
        if (string.IsNullOrEmpty(topic))
        {
            error = "the topic is empty";
            return false;
        }

        if (string.IsNullOrEmpty(prefix))
        {
            error = "no topic prefix is configured";
            return false;
        }

        ReadOnlySpan<char> rest = topic;
        if (!rest.StartsWith(prefix, StringComparison.Ordinal) || rest.Length == prefix.Length || rest[prefix.Length] != '/')
        {
            error = $"the topic must start with '{prefix}/' and read {prefix}/{{hub}}/{{device}}/{{kind}}";
            return false;
        }

        rest = rest[(prefix.Length + 1)..];
        int hubEnd = rest.IndexOf('/');
        if (hubEnd < 0)
        {
            error = $"the topic has too few levels: expected {prefix}/{{hub}}/{{device}}/{{kind}}";
            return false;
        }

        var hub = rest[..hubEnd];
        rest = rest[(hubEnd + 1)..];
        int deviceEnd = rest.IndexOf('/');
        if (deviceEnd < 0)
        {
            error = $"the topic has too few levels: expected {prefix}/{{hub}}/{{device}}/{{kind}}";
            return false;
        }

        var device = rest[..deviceEnd];
        var kindText = rest[(deviceEnd + 1)..];
        if (kindText.Contains('/'))
        {
            error = $"the topic has too many levels: expected {prefix}/{{hub}}/{{device}}/{{kind}}";
            return false;
        }

        if (CheckLevel(hub, "hub", ReadingLimits.MaxHubLength) is { } hubError)
        {
            error = hubError;
            return false;
        }

        if (CheckLevel(device, "device", ReadingLimits.MaxDeviceLength) is { } deviceError)
        {
            error = deviceError;
            return false;
        }

        TopicKind kind;
        switch (kindText)
        {
            case "biosensor":
                kind = TopicKind.Biosensor;
                break;
            case "location":
                kind = TopicKind.Location;
                break;
            case "pressure":
                kind = TopicKind.Pressure;
                break;
            case "hello":
                kind = TopicKind.Hello;
                break;
            case "checkin":
                kind = TopicKind.CheckIn;
                break;
            default:
                error = $"unknown kind '{Shorten(kindText)}': the last level must be biosensor, location, pressure, hello or checkin";
                return false;
        }

        parsed = new SaitoTopic(hub.ToString(), device.ToString(), kind);
        error = null;
        return true;
    }

    private static string? CheckLevel(ReadOnlySpan<char> level, string what, int maxLength)
    {
        if (level.IsEmpty)
        {
            return $"the {what} level is empty";
        }

        if (level.Length > maxLength)
        {
            return $"the {what} level is {level.Length} characters long; at most {maxLength} are allowed";
        }

        foreach (char c in level)
        {
            if (c is '+' or '#')
            {
                return $"the {what} level '{Shorten(level)}' contains the wildcard '{c}'";
            }

            if (char.IsControl(c))
            {
                return $"the {what} level contains a control character (U+{(int)c:X4})";
            }
        }

        return null;
    }

    private static string Shorten(ReadOnlySpan<char> text) => text.Length <= 64 ? text.ToString() : string.Concat(text[..64], "...");
}

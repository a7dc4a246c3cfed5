namespace Saito.Mqtt.Broker;

/// <summary>Topic name and topic filter rules (MQTT 3.1.1 section 4.7, 5.0 section 4.7 and 4.8.2).</summary>
public static class MqttTopic
{
    private const string SharePrefix = "$share/";

    /// <summary>True when <paramref name="filter"/> is a well-formed filter: '#' only last and alone in its level, '+' alone in its level.</summary>
    public static bool IsValidFilter(string filter)
    {
        if (string.IsNullOrEmpty(filter))
        {
            return false;
        }

        int levelStart = 0;
        for (int i = 0; i <= filter.Length; i++)
        {
            if (i == filter.Length || filter[i] == '/')
            {
                var level = filter.AsSpan(levelStart, i - levelStart);
                if (level.Length > 1 && level.IndexOfAny('+', '#') >= 0)
                {
                    return false;
                }

                if (level is "#" && i != filter.Length)
                {
                    return false;
                }

                levelStart = i + 1;
            }
        }

        return true;
    }

    /// <summary>
    /// Splits <c>$share/{group}/{filter}</c>. Returns false for a non-shared filter; throws nothing.
    /// <paramref name="valid"/> is false for a malformed shared filter (empty group, group with wildcards or no filter).
    /// </summary>
    public static bool TryParseShared(string filter, out string group, out string innerFilter, out bool valid)
    {
        group = string.Empty;
        innerFilter = filter;
        valid = true;
        if (!filter.StartsWith(SharePrefix, StringComparison.Ordinal))
        {
            return false;
        }

        int slash = filter.IndexOf('/', SharePrefix.Length);
        if (slash < 0)
        {
            valid = false;
            return true;
        }

        group = filter[SharePrefix.Length..slash];
        innerFilter = filter[(slash + 1)..];
        valid = group.Length > 0 && group.AsSpan().IndexOfAny('+', '#') < 0 && IsValidFilter(innerFilter);
        return true;
    }

    /// <summary>
    /// True when a topic name or filter has at most <paramref name="maxLength"/> characters and
    /// <paramref name="maxLevels"/> levels (a shared filter's <c>$share/{group}/</c> counts towards the length, not the levels).
    /// </summary>
    public static bool IsWithinLimits(string topicOrFilter, int maxLength, int maxLevels)
    {
        ArgumentNullException.ThrowIfNull(topicOrFilter);
        if (topicOrFilter.Length > maxLength)
        {
            return false;
        }

        var levels = topicOrFilter.AsSpan();
        if (levels.StartsWith(SharePrefix, StringComparison.Ordinal))
        {
            int slash = levels[SharePrefix.Length..].IndexOf('/');
            levels = slash < 0 ? [] : levels[(SharePrefix.Length + slash + 1)..];
        }

        return levels.Count('/') + 1 <= maxLevels;
    }

    /// <summary>Whether <paramref name="topic"/> matches <paramref name="filter"/> (not a shared filter), '$' rule included.</summary>
    public static bool Matches(string filter, string topic)
    {
        if (topic.Length > 0 && topic[0] == '$' && filter.Length > 0 && (filter[0] == '+' || filter[0] == '#'))
        {
            return false;
        }

        int f = 0;
        int t = 0;
        while (true)
        {
            int fEnd = filter.IndexOf('/', f);
            var fLevel = fEnd < 0 ? filter.AsSpan(f) : filter.AsSpan(f, fEnd - f);
            if (fLevel is "#")
            {
                return true;
            }

            if (t > topic.Length)
            {
                return false;
            }

            int tEnd = topic.IndexOf('/', t);
            var tLevel = tEnd < 0 ? topic.AsSpan(t) : topic.AsSpan(t, tEnd - t);
            if (fLevel is not "+" && !fLevel.SequenceEqual(tLevel))
            {
                return false;
            }

            if (fEnd < 0 || tEnd < 0)
            {
                if (fEnd < 0 && tEnd < 0)
                {
                    return true;
                }

                // "a/#" also matches "a": the filter has one level left and it is '#'.
                return tEnd < 0 && fEnd >= 0 && filter.AsSpan(fEnd + 1) is "#";
            }

            f = fEnd + 1;
            t = tEnd + 1;
        }
    }
}

using Saito.Readings;

namespace Saito.Storage.Queries;

/// <summary>The checks on a query's arguments, shared by every database, each failing with a message a caller can act on.</summary>
internal static class ReadingQueryArguments
{
    public static void Kind(ReadingKind kind)
    {
        if (!ReadingKinds.All.Contains(kind))
        {
            throw new ArgumentOutOfRangeException(nameof(kind), kind, "Not a reading kind.");
        }
    }

    /// <summary>A UTC time truncated to whole microseconds, as the tables keep it.</summary>
    public static DateTime Utc(DateTime time, string name) =>
        time.Kind == DateTimeKind.Utc
            ? ReadingTime.Truncate(time)
            : throw new ArgumentException($"{name} must be UTC (DateTimeKind.Utc), was {time.Kind}: {time:O}.", name);

    /// <summary>
    /// The intervals in UTC, each cut to [<paramref name="from"/>, <paramref name="to"/>) when given; empty ones
    /// (from == to, or outside the window) dropped. An interval that ends before it starts is an error.
    /// </summary>
    public static List<DeviceInterval> Intervals(IReadOnlyList<DeviceInterval> intervals, DateTime? from = null, DateTime? to = null)
    {
        ArgumentNullException.ThrowIfNull(intervals);
        if (intervals.Count > ReadingQueryLimits.MaxIntervals)
        {
            throw new ArgumentException($"At most {ReadingQueryLimits.MaxIntervals} intervals in one query (was {intervals.Count}).", nameof(intervals));
        }

        var result = new List<DeviceInterval>(intervals.Count);
        foreach (var interval in intervals)
        {
            var start = Utc(interval.From, nameof(intervals));
            var end = Utc(interval.To, nameof(intervals));
            if (end < start)
            {
                throw new ArgumentException($"Interval of device {interval.DeviceId} ends ({end:O}) before it starts ({start:O}).", nameof(intervals));
            }

            if (from is { } windowFrom && start < windowFrom)
            {
                start = windowFrom;
            }

            if (to is { } windowTo && end > windowTo)
            {
                end = windowTo;
            }

            if (start < end)
            {
                result.Add(new DeviceInterval(interval.DeviceId, start, end));
            }
        }

        return result;
    }

    public static int[] DeviceIds(IReadOnlyList<int> deviceIds)
    {
        ArgumentNullException.ThrowIfNull(deviceIds);
        var distinct = deviceIds.Distinct().ToArray();
        return distinct.Length <= ReadingQueryLimits.MaxIntervals
            ? distinct
            : throw new ArgumentException($"At most {ReadingQueryLimits.MaxIntervals} devices in one query (was {distinct.Length}).", nameof(deviceIds));
    }

    public static void Limit(int limit)
    {
        if (limit is < 1 or > ReadingQueryLimits.MaxRangeRows)
        {
            throw new ArgumentOutOfRangeException(nameof(limit), limit, $"The limit must be between 1 and {ReadingQueryLimits.MaxRangeRows:N0}.");
        }
    }

    /// <summary>The bucket width in microseconds, after checking it and the number of buckets [from, to) spans.</summary>
    public static long BucketMicroseconds(DateTime from, DateTime to, TimeSpan bucket)
    {
        if (from < DateTime.UnixEpoch)
        {
            throw new ArgumentException($"Buckets are aligned to the Unix epoch; from ({from:O}) must not be before 1970-01-01.", nameof(from));
        }

        if (to < from)
        {
            throw new ArgumentException($"to ({to:O}) is before from ({from:O}).", nameof(to));
        }

        if (bucket <= TimeSpan.Zero || bucket.Ticks % ReadingTime.TicksPerMicrosecond != 0)
        {
            throw new ArgumentException($"The bucket must be a positive whole number of microseconds (was {bucket}).", nameof(bucket));
        }

        long width = bucket.Ticks / ReadingTime.TicksPerMicrosecond;
        long buckets = ReadingQueryLimits.BucketsSpanned(from, to, width);
        return buckets <= ReadingQueryLimits.MaxBuckets
            ? width
            : throw new ArgumentException(
                $"{buckets:N0} buckets of {bucket} from {from:O} to {to:O}; at most {ReadingQueryLimits.MaxBuckets:N0}: widen the bucket or shorten the range.",
                nameof(bucket));
    }

    /// <summary>The fields asked for (all of the kind's when null), each of that kind, each once.</summary>
    public static ValueField[] Fields(ReadingKind kind, IReadOnlyList<ValueField>? fields)
    {
        if (fields is null)
        {
            return ReadingFields.FieldsOf(kind).ToArray();
        }

        if (fields.Count == 0)
        {
            throw new ArgumentException("Ask for at least one field (or null for all of the kind's).", nameof(fields));
        }

        foreach (var field in fields)
        {
            if (!Enum.IsDefined(field) || ReadingFields.KindOf(field) != kind)
            {
                throw new ArgumentException(
                    $"Field {field} is not a {ReadingKinds.Name(kind)} field ({string.Join(", ", ReadingFields.FieldsOf(kind))}).", nameof(fields));
            }
        }

        return fields.Distinct().ToArray();
    }
}

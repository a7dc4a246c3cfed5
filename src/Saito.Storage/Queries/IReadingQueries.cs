using Saito.Readings;

namespace Saito.Storage.Queries;

/// <summary>
/// The reads behind the readings API: a device's readings over time ranges, the newest values, and downsampled
/// series. An owner's readings are asked for as the (device, from, to) intervals of their assignment history, which
/// the caller resolves through the registry; this side knows only devices and times.
/// <para>
/// Ranges and downsampling read the hot and the archive tier in one statement and count each reading once: the
/// archiver deletes a batch from the hot tier in the same crash-safe step that inserts it into the archive, but a
/// reading can sit in both during a crash window, so an archive row whose natural key (device_id, channel, ts) is
/// also in the hot tier is left out. Times are UTC (<see cref="DateTimeKind.Utc"/>), whole microseconds; every
/// interval is half-open, [from, to).
/// </para>
/// </summary>
public interface IReadingQueries
{
    /// <summary>
    /// The readings of <paramref name="kind"/> inside the intervals, oldest first (then by device and channel), at most
    /// <paramref name="limit"/> of them; each reading once, whether it is in the hot tier, the archive tier or both.
    /// With <paramref name="fields"/>, only the readings that carry at least one of them (a value, not null) are read,
    /// and <paramref name="limit"/> counts those; null reads every reading.
    /// </summary>
    Task<IReadOnlyList<Reading>> ReadRangeAsync(
        ReadingKind kind, IReadOnlyList<DeviceInterval> intervals, int limit, IReadOnlyList<ValueField>? fields, CancellationToken cancellationToken);

    /// <summary>
    /// The newest reading of each channel of each device, ordered by device and channel; a device with no reading
    /// has no entry. Reads the hot tier only: the archiver moves readings that are hours or days old, so the newest
    /// reading of a device that still sends is always hot (a device silent for longer than the archive cutoff has none).
    /// With <paramref name="fields"/>, the newest reading of each channel that carries at least one of them, within
    /// <see cref="ReadingQueryLimits.LatestLookback"/> of the channel's newest reading (a channel with none there has no
    /// entry); null takes the newest reading whatever it carries.
    /// </summary>
    Task<IReadOnlyList<Reading>> LatestAsync(ReadingKind kind, IReadOnlyList<int> deviceIds, IReadOnlyList<ValueField>? fields, CancellationToken cancellationToken);

    /// <summary>
    /// Per device, channel and bucket (<paramref name="bucket"/> wide, aligned to the Unix epoch), the count of readings
    /// and the count, min, avg and max of each of <paramref name="fields"/> (all the kind's fields when null), over the
    /// readings inside the intervals and [<paramref name="from"/>, <paramref name="to"/>); computed by the database
    /// (GROUP BY bucket), each reading once across the tiers. Buckets without readings are absent. With
    /// <paramref name="fields"/>, only the readings that carry at least one of them count (in the bucket's count too), so
    /// a reading that carried none of them leaves no trace. At most
    /// <see cref="ReadingQueryLimits.MaxBuckets"/> buckets may span [from, to).
    /// </summary>
    Task<IReadOnlyList<DownsampleBucket>> DownsampleAsync(
        ReadingKind kind, IReadOnlyList<DeviceInterval> intervals, DateTime from, DateTime to, TimeSpan bucket, IReadOnlyList<ValueField>? fields,
        CancellationToken cancellationToken);
}

/// <summary>One device over [<see cref="From"/>, <see cref="To"/>), UTC: a sensor's whole history, or one assignment of it to an owner.</summary>
public readonly record struct DeviceInterval(int DeviceId, DateTime From, DateTime To);

/// <summary>One bucket of a downsampled series: a device's channel from <see cref="Start"/> for the bucket's width.</summary>
/// <param name="DeviceId">the device</param>
/// <param name="Channel">its channel</param>
/// <param name="Start">the bucket's start (UTC), a multiple of its width since 1970</param>
/// <param name="Count">readings in the bucket</param>
/// <param name="Fields">per field asked for, in the order asked</param>
public sealed record DownsampleBucket(int DeviceId, int Channel, DateTime Start, long Count, IReadOnlyList<FieldStatistics> Fields);

/// <summary>
/// One value field in one bucket. <see cref="Count"/> counts the readings that carry the field (a biosensor may send
/// any subset); min, avg and max are null when none does.
/// </summary>
public readonly record struct FieldStatistics(ValueField Field, long Count, double? Min, double? Avg, double? Max);

/// <summary>The bounds the queries enforce, each with a clear <see cref="ArgumentException"/> when passed.</summary>
public static class ReadingQueryLimits
{
    /// <summary>Buckets one downsample may span: a chart has no use for more, and the answer stays small.</summary>
    public const int MaxBuckets = 10_000;

    /// <summary>
    /// The buckets of <paramref name="bucketMicroseconds"/> (aligned to the Unix epoch) that [from, to) touches, which
    /// <see cref="MaxBuckets"/> bounds: one more than the range over the width when the range starts inside a bucket.
    /// </summary>
    public static long BucketsSpanned(DateTime from, DateTime to, long bucketMicroseconds)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(bucketMicroseconds);
        long first = ReadingTime.ToUnixMicroseconds(from) / bucketMicroseconds;
        long last = (ReadingTime.ToUnixMicroseconds(to) + bucketMicroseconds - 1) / bucketMicroseconds;
        return last - first;
    }

    /// <summary>Intervals (or devices) in one query: each is a few parameters, and SQL Server takes at most 2,100.</summary>
    public const int MaxIntervals = 500;

    /// <summary>Readings one range query may return.</summary>
    public const int MaxRangeRows = 1_000_000;

    /// <summary>
    /// How far before a channel's newest reading the latest query looks for one that carries an asked field: a channel
    /// that never carries one costs this much of its index, not its whole hot history. 3,600 readings at 1 Hz.
    /// </summary>
    public static readonly TimeSpan LatestLookback = TimeSpan.FromHours(1);
}

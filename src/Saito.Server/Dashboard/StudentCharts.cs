using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Live;
using Saito.Live.Analytics;
using Saito.Live.Classroom;
using Saito.Readings;
using Saito.Server.Api;
using Saito.Storage.Queries;

namespace Saito.Server.Dashboard;

/// <summary>One alert on a student's charts.</summary>
public sealed record ChartAlert(Guid Id, string Kind, DateTimeOffset RaisedAt, DateTimeOffset? ClearedAt, string Detail, string? AcknowledgedBy);

/// <summary>
/// A student's charts over [<see cref="From"/>, <see cref="To"/>): each series is a list of <c>[unixMs, value]</c>
/// pairs, one per bucket with readings (bucket start). Blood pressure is null for those who do not see it.
/// </summary>
public sealed record StudentChart(
    DateTimeOffset From,
    DateTimeOffset To,
    int BucketSeconds,
    IReadOnlyList<double[]> HeartRate,
    IReadOnlyList<double[]> SkinTemperature,
    IReadOnlyList<double[]>? Systolic,
    IReadOnlyList<double[]>? Diastolic,
    IReadOnlyList<double[]> Sway,
    bool SwayTruncated,
    IReadOnlyList<double[]> SeatPressure,
    IReadOnlyList<ChartAlert> Alerts);

/// <summary>
/// <c>GET /api/students/{id}/chart?from=&amp;to=</c>: the student page's charts (heart rate, skin temperature, blood
/// pressure, head sway, seat pressure) and the alerts of the range, read through the assignment history from both
/// tiers. Default range: the student's session running now, else the last two hours. Audited as a view of vitals.
/// </summary>
public static class StudentCharts
{
    /// <summary>Longest range one chart may cover.</summary>
    public static readonly TimeSpan MaxRange = TimeSpan.FromDays(31);

    /// <summary>The range shown when none is given and no session of the student runs now.</summary>
    public static readonly TimeSpan DefaultRange = TimeSpan.FromHours(2);

    /// <summary>Head location readings replayed for sway, at most (the rest of the range has no sway).</summary>
    public const int MaxSwayRows = 200_000;

    /// <summary>Alerts listed, at most.</summary>
    public const int MaxAlerts = 500;

    public static RouteGroupBuilder MapStudentCharts(this RouteGroupBuilder api)
    {
        ArgumentNullException.ThrowIfNull(api);
        api.MapGet("/students/{id:int}/chart", ChartAsync).WithTags("Dashboard").RequireAuthorization(ApiPolicies.ViewLive)
            .WithSummary("A student's charts over [from, to) (default: the session running now, else the last 2 hours) with the alerts of the range");
        return api;
    }

    /// <summary>The student's session running now (earliest start if several), else the last <see cref="DefaultRange"/>.</summary>
    public static (DateTimeOffset From, DateTimeOffset To) DefaultRangeOf(LiveRegistry registry, int ownerId, DateTimeOffset now)
    {
        ArgumentNullException.ThrowIfNull(registry);
        var session = registry.Classes.Values.Where(c => c.Session is not null && c.Roster.Contains(ownerId))
            .Select(c => c.Session!).OrderBy(s => s.StartsAt).FirstOrDefault();
        return session is null ? (now - DefaultRange, now) : (session.StartsAt, session.EndsAt);
    }

    /// <summary>The most <see cref="DashboardOptions.MaxChartPoints"/> may be: a chart's buckets are one downsample.</summary>
    public const int MaxChartPointsLimit = ReadingQueryLimits.MaxBuckets;

    /// <summary>
    /// The bucket width: the range over <see cref="DashboardOptions.MaxChartPoints"/> less one, whole seconds, at least
    /// one. Less one because buckets are aligned to the Unix epoch, not to the range: a range a whole number of buckets
    /// wide that starts inside one touches one more, so <c>n - 1</c> widths keep every series to <c>n</c> points.
    /// </summary>
    public static int BucketSecondsOf(TimeSpan range, int maxPoints)
    {
        int points = Math.Clamp(maxPoints, 2, MaxChartPointsLimit);
        return (int)Math.Max(1, Math.Ceiling(range.TotalSeconds / (points - 1)));
    }

    private static async Task<IResult> ChartAsync(int id, DateTimeOffset? from, DateTimeOffset? to, HttpContext http, RegistryDbContext db,
        IReadingQueries queries, LiveClassroom live, DashboardAccess access, VitalsAudit audit, IOptions<DashboardOptions> options,
        IOptions<SwayOptions> swayOptions, TimeProvider time, CancellationToken cancellationToken)
    {
        var user = http.User;
        if (!await db.Owners.AnyAsync(o => o.Id == id, cancellationToken))
        {
            return Problems.NotFound("student", id);
        }

        if (!await DashboardAccess.CanSeeStudentAsync(db, user, id, cancellationToken))
        {
            return Problems.Of(StatusCodes.Status403Forbidden, "Forbidden", $"You may not see the vitals of student {id}.");
        }

        var now = time.GetUtcNow();
        if (from is null && to is null)
        {
            (from, to) = DefaultRangeOf(live.Registry, id, now);
        }

        // Checked before the arithmetic below: 9999-12-31 plus two hours, or 0001-01-01 minus two, is not a date (a 400, not a 500).
        if (from < DateTimeOffset.UnixEpoch || to < DateTimeOffset.UnixEpoch || from > DateTimeOffset.MaxValue - DefaultRange)
        {
            return Problems.BadRange();
        }

        var end = to ?? from!.Value + DefaultRange;
        var start = from ?? end - DefaultRange;
        if (end <= start || start < DateTimeOffset.UnixEpoch)
        {
            return Problems.BadRange();
        }

        if (end - start > MaxRange)
        {
            return Problems.Invalid("to", $"A chart covers at most {MaxRange.TotalDays:0} days.");
        }

        int bucketSeconds = BucketSecondsOf(end - start, options.Value.MaxChartPoints);
        var bucket = TimeSpan.FromSeconds(bucketSeconds);
        bool seesBp = access.SeesBloodPressure(user);
        audit.Viewed(DashboardAccess.UserName(user), [id], VitalsAudit.StudentPage);

        var assignments = await db.Assignments.AsNoTracking()
            .Where(a => a.OwnerId == id && a.From < end && (a.To == null || a.To > start))
            .OrderBy(a => a.From).Take(ReadingQueryLimits.MaxIntervals)
            .Select(a => new { a.DeviceId, a.From, a.To, a.Device!.Kind }).ToListAsync(cancellationToken);
        var all = assignments.ConvertAll(a => new DeviceInterval(a.DeviceId,
            (a.From > start ? a.From : start).UtcDateTime, (a.To is { } t && t < end ? t : end).UtcDateTime));
        var seats = assignments.Select((a, i) => (a.Kind, Interval: all[i])).Where(x => x.Kind is "pressure-mat" or "pressure" or null)
            .Select(x => x.Interval).ToList();

        List<ValueField> vitalFields = [.. new[] { ValueField.HeartRate, ValueField.SkinTemperature, ValueField.Systolic, ValueField.Diastolic }
            .Where(f => seesBp || !DashboardAccess.IsBloodPressure(f))];
        var vitals = all.Count == 0 ? [] : await queries.DownsampleAsync(ReadingKind.Biosensor, all, start.UtcDateTime, end.UtcDateTime, bucket, vitalFields, cancellationToken);
        var pressure = seats.Count == 0 ? [] : await queries.DownsampleAsync(ReadingKind.Pressure, seats, start.UtcDateTime, end.UtcDateTime, bucket, [ValueField.Pressure], cancellationToken);
        var head = all.Count == 0 ? [] : await queries.ReadRangeAsync(ReadingKind.Location, all, MaxSwayRows, null, cancellationToken);
        var (sway, swayTruncated) = Sway(head, options.Value.HeadChannel, swayOptions.Value, bucket);

        var alerts = await db.Alerts.AsNoTracking()
            .Where(a => a.OwnerId == id && a.RaisedAt < end && (a.ClearedAt == null || a.ClearedAt >= start))
            .OrderBy(a => a.RaisedAt).Take(MaxAlerts)
            .Select(a => new ChartAlert(a.Id, a.Kind, a.RaisedAt, a.ClearedAt, a.Detail, a.AcknowledgedBy)).ToListAsync(cancellationToken);

        return TypedResults.Ok(new StudentChart(start, end, bucketSeconds,
            Average(vitals, ValueField.HeartRate), Average(vitals, ValueField.SkinTemperature),
            seesBp ? Average(vitals, ValueField.Systolic) : null, seesBp ? Average(vitals, ValueField.Diastolic) : null,
            sway, swayTruncated, Total(pressure), alerts));
    }

    /// <summary>Per bucket, the mean of a field over every device and channel (weighted by how many readings carried it).</summary>
    public static List<double[]> Average(IReadOnlyList<DownsampleBucket> buckets, ValueField field)
    {
        var sums = new SortedDictionary<DateTime, (double Sum, long Count)>();
        foreach (var b in buckets)
        {
            foreach (var f in b.Fields)
            {
                if (f.Field == field && f.Avg is { } avg && f.Count > 0)
                {
                    var (sum, count) = sums.GetValueOrDefault(b.Start);
                    sums[b.Start] = (sum + (avg * f.Count), count + f.Count);
                }
            }
        }

        return [.. sums.Select(kv => new[] { UnixMs(kv.Key), kv.Value.Sum / kv.Value.Count })];
    }

    /// <summary>Per bucket, the sum over the seat mats' cells of each cell's mean pressure: the mean total load in kPa.</summary>
    public static List<double[]> Total(IReadOnlyList<DownsampleBucket> buckets)
    {
        var totals = new SortedDictionary<DateTime, double>();
        foreach (var b in buckets)
        {
            foreach (var f in b.Fields)
            {
                if (f.Field == ValueField.Pressure && f.Avg is { } avg)
                {
                    totals[b.Start] = totals.GetValueOrDefault(b.Start) + avg;
                }
            }
        }

        return [.. totals.Select(kv => new[] { UnixMs(kv.Key), kv.Value })];
    }

    /// <summary>
    /// Head sway: the head channel's location readings, in time order, through a <see cref="SwayTracker"/> (posture
    /// unknown: phases found by head height); its horizontal mean distance from the ideal (metres) as of the last
    /// sample of each bucket, at the bucket's start. Buckets where it is still settling have no point.
    /// </summary>
    public static (List<double[]> Points, bool Truncated) Sway(IReadOnlyList<Reading> readings, int headChannel, SwayOptions options, TimeSpan bucket)
    {
        ArgumentNullException.ThrowIfNull(readings);
        var points = new List<double[]>();
        var tracker = new SwayTracker(options);
        long bucketTicks = bucket.Ticks;
        long current = long.MinValue;
        foreach (var r in readings)
        {
            if (r.Channel != headChannel)
            {
                continue;
            }

            long index = r.Timestamp.Ticks / bucketTicks;
            if (index != current && current != long.MinValue)
            {
                Sample(tracker, current, bucketTicks, points);
            }

            current = index;
            tracker.Add(DateTime.SpecifyKind(r.Timestamp, DateTimeKind.Utc), r.V0 ?? double.NaN, r.V1 ?? double.NaN, r.V2 ?? double.NaN, Posture.Unknown);
        }

        if (current != long.MinValue)
        {
            Sample(tracker, current, bucketTicks, points);
        }

        return (points, readings.Count >= MaxSwayRows);
    }

    private static void Sample(SwayTracker tracker, long bucketIndex, long bucketTicks, List<double[]> points)
    {
        if (tracker.Current is { Settling: false, SampleCount: > 0 } s)
        {
            points.Add([UnixMs(new DateTime(bucketIndex * bucketTicks, DateTimeKind.Utc)), s.Horizontal.MeanDistanceMetres]);
        }
    }

    private static double UnixMs(DateTime utc) => (utc.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerMillisecond;
}

using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using System.Text;
using Microsoft.EntityFrameworkCore;
using Saito.Readings;
using Saito.Server.Dashboard;
using Saito.Storage.Queries;

namespace Saito.Server.Api;

public sealed record ReadingView(int DeviceId, int Channel, DateTimeOffset Ts, DateTimeOffset ReceivedAt, IReadOnlyDictionary<string, double?> Values);

public sealed record SeriesBucket(int DeviceId, int Channel, DateTimeOffset Start, long Count, IReadOnlyDictionary<string, FieldSummary> Fields);

public sealed record FieldSummary(long Count, double? Min, double? Avg, double? Max);

public sealed class ReadingQuery
{
    /// <summary>A device's readings over its whole history in the range (give this or ownerId).</summary>
    public int? DeviceId { get; set; }

    /// <summary>The readings of the devices the owner had at the time of each reading (through the assignment history).</summary>
    public int? OwnerId { get; set; }

    public DateTimeOffset? From { get; set; }

    public DateTimeOffset? To { get; set; }

    /// <summary>Range: at most this many readings (default 10,000).</summary>
    [Range(1, 100_000)]
    public int? Limit { get; set; }

    /// <summary>Series: the bucket width in seconds (default 60).</summary>
    [Range(1, 86_400)]
    public int? BucketSeconds { get; set; }

    /// <summary>
    /// Comma-separated fields (default all of the kind's the caller may see), e.g. <c>hr,temp</c>: a series summarises
    /// these; a range or the latest values answers the readings that carry at least one of them, with only these
    /// values. Asking for <c>sys</c> or <c>dia</c> without seeing blood pressure is refused (403).
    /// </summary>
    [StringLength(MaxFieldsLength)]
    public string? Fields { get; set; }

    /// <summary>The longest <see cref="Fields"/> accepted (every field name of a kind fits many times over).</summary>
    public const int MaxFieldsLength = 200;
}

/// <summary>
/// Readings for staff: a time range, the latest values, and a downsampled series (min, avg, max per bucket), by device
/// or by owner. An owner's readings are those of each device while it was assigned to them, so a wristband that moved
/// from one student to another never mixes them. Hot and archive tiers are both read. Blood pressure (<c>sys</c>,
/// <c>dia</c>) is left out for those who do not see it (<see cref="DashboardAccess.SeesBloodPressure"/>), as on the
/// dashboard.
/// </summary>
internal static class ReadingEndpoints
{
    public static void MapReadingEndpoints(this RouteGroupBuilder api)
    {
        var readings = api.MapGroup("/readings/{kind}").WithTags("Readings").RequireAuthorization(ApiPolicies.ReadReadings)
            .AddEndpointFilter(OnlyVisibleStudentsAsync);
        readings.MapGet("/", RangeAsync).WithSummary("Readings of a kind (biosensor, location, pressure) for a device or an owner over [from, to)");
        readings.MapGet("/latest", LatestAsync).WithSummary("The newest reading of each channel: a device's, or those of the devices an owner has now");
        readings.MapGet("/series", SeriesAsync).WithSummary("Min, avg and max per bucket over [from, to), for charts");
    }

    /// <summary>
    /// Admins read any device or owner; teachers and aides only students on the classes they are listed on, and a
    /// device only if every owner it has ever had is such a student. Each answer about a student is audited.
    /// </summary>
    private static async ValueTask<object?> OnlyVisibleStudentsAsync(EndpointFilterInvocationContext context, EndpointFilterDelegate next)
    {
        var http = context.HttpContext;
        var db = http.RequestServices.GetRequiredService<RegistryDbContext>();
        var ct = http.RequestAborted;
        // The handler binds ids more loosely ("+5", " 5"): an id this check cannot read exactly is refused, never let by.
        if (!TryId(http.Request.Query["ownerId"], out int? ownerId) || !TryId(http.Request.Query["deviceId"], out int? deviceId))
        {
            return Problems.Of(StatusCodes.Status400BadRequest, "Bad id", "ownerId and deviceId are whole numbers written with digits only, given once.");
        }

        List<int> owners = [];
        if (ownerId is not null)
        {
            owners.Add(ownerId.Value);
        }
        else if (deviceId is not null)
        {
            owners = await db.Assignments.Where(a => a.DeviceId == deviceId).Select(a => a.OwnerId).Distinct().ToListAsync(ct);
        }

        if (!Dashboard.DashboardAccess.IsAdmin(http.User))
        {
            foreach (int owner in owners)
            {
                if (!await Dashboard.DashboardAccess.CanSeeStudentAsync(db, http.User, owner, ct))
                {
                    return Problems.Of(StatusCodes.Status403Forbidden, "Not your student",
                        "Teachers and aides read the readings of students on the classes they are listed on (a device: only if each of its owners is such a student).");
                }
            }

            if (owners.Count == 0 && deviceId is not null)
            {
                return Problems.Of(StatusCodes.Status403Forbidden, "Not your student", "This device was never assigned to a student of yours: only admins read it.");
            }
        }

        var result = await next(context);
        // A view is an answer that showed readings: the handler's own 400s and 403s showed none.
        if (result is not IStatusCodeHttpResult { StatusCode: < 200 or >= 300 })
        {
            http.RequestServices.GetRequiredService<Dashboard.VitalsAudit>().Viewed(Dashboard.DashboardAccess.UserName(http.User), owners, Dashboard.VitalsAudit.ReadingsApi);
        }

        return result;
    }

    /// <summary>Absent is fine (null); present, it must be one value of digits only.</summary>
    private static bool TryId(Microsoft.Extensions.Primitives.StringValues value, out int? id)
    {
        id = null;
        if (value.Count == 0)
        {
            return true;
        }

        if (value.Count == 1 && int.TryParse(value[0], System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out int parsed))
        {
            id = parsed;
            return true;
        }

        return false;
    }

    private static async Task<IResult> RangeAsync(string kind, [AsParameters] ReadingQuery query, ClaimsPrincipal user, DashboardAccess access, RegistryDbContext db,
        IReadingQueries queries, TimeProvider time, CancellationToken cancellationToken)
    {
        var (readingKind, _, _, intervals, fields, error) = await ResolveAsync(kind, query, access.SeesBloodPressure(user), db, time, cancellationToken);
        if (error is not null)
        {
            return error;
        }

        var readings = intervals.Count == 0 ? [] : await queries.ReadRangeAsync(readingKind, intervals, query.Limit ?? 10_000, fields, cancellationToken);
        return TypedResults.Ok(readings.Select(r => View(r, fields)).ToList());
    }

    private static async Task<IResult> LatestAsync(string kind, int? deviceId, int? ownerId, string? fields, ClaimsPrincipal user, DashboardAccess access,
        RegistryDbContext db, IReadingQueries queries, TimeProvider time, CancellationToken cancellationToken)
    {
        if (!ReadingKinds.TryParse(kind, out var readingKind))
        {
            return BadKind(kind);
        }

        var (asked, fieldsError) = Fields(kind, readingKind, fields, access.SeesBloodPressure(user));
        if (fieldsError is not null)
        {
            return fieldsError;
        }

        // Each device with the moment from which its readings are the answer's: a device's whole history, or an owner's
        // devices since each was assigned to them (the newest reading of a device handed over a minute ago may be the
        // previous owner's).
        Dictionary<int, DateTime> since;
        if (deviceId is { } device && ownerId is null)
        {
            since = new() { [device] = DateTime.MinValue };
        }
        else if (ownerId is { } owner && deviceId is null)
        {
            var now = time.GetUtcNow();
            since = (await db.Assignments.Where(a => a.OwnerId == owner && a.From <= now && (a.To == null || a.To > now)).Select(a => new { a.DeviceId, a.From }).ToListAsync(cancellationToken))
                .GroupBy(a => a.DeviceId).ToDictionary(g => g.Key, g => g.Min(a => a.From).UtcDateTime);
        }
        else
        {
            return Problems.Invalid("deviceId", "Give deviceId or ownerId (one of them).");
        }

        var readings = since.Count == 0 ? [] : await queries.LatestAsync(readingKind, [.. since.Keys], asked, cancellationToken);
        return TypedResults.Ok(readings.Where(r => r.Timestamp >= since[r.DeviceId]).Select(r => View(r, asked)).ToList());
    }

    private static async Task<IResult> SeriesAsync(string kind, [AsParameters] ReadingQuery query, ClaimsPrincipal user, DashboardAccess access, RegistryDbContext db,
        IReadingQueries queries, TimeProvider time, CancellationToken cancellationToken)
    {
        var (readingKind, from, to, intervals, fields, error) = await ResolveAsync(kind, query, access.SeesBloodPressure(user), db, time, cancellationToken);
        if (error is not null)
        {
            return error;
        }

        var bucket = TimeSpan.FromSeconds(query.BucketSeconds ?? 60);
        // Counted as the store counts them (epoch-aligned: a range that starts inside a bucket touches one more), so
        // a range the store would refuse is a 400 here, not a 500 there.
        if (ReadingQueryLimits.BucketsSpanned(from.UtcDateTime, to.UtcDateTime, (long)bucket.TotalMicroseconds) > ReadingQueryLimits.MaxBuckets)
        {
            return Problems.Invalid("bucketSeconds", $"[from, to) would touch more than {ReadingQueryLimits.MaxBuckets} buckets: widen the bucket or narrow the range.");
        }

        var buckets = intervals.Count == 0 ? [] : await queries.DownsampleAsync(readingKind, intervals, from.UtcDateTime, to.UtcDateTime, bucket, fields, cancellationToken);
        return TypedResults.Ok(buckets.Select(b => new SeriesBucket(b.DeviceId, b.Channel, Utc(b.Start), b.Count,
            b.Fields.ToDictionary(f => ReadingFields.NameOf(f.Field), f => new FieldSummary(f.Count, f.Min, f.Avg, f.Max)))).ToList());
    }

    /// <summary>
    /// The fields a request asks for (<c>fields=hr,temp</c>), or the 400 or 403 that says why not. Null when it names
    /// none and the caller sees every field; for a caller who does not see blood pressure, the fields they do see, so
    /// blood pressure is never asked of the store for them, and a reading that carried only blood pressure is not
    /// answered either (an empty row would still tell them it was measured).
    /// </summary>
    private static (List<ValueField>? Fields, IResult? Error) Fields(string kind, ReadingKind readingKind, string? text, bool seesBloodPressure)
    {
        List<ValueField>? fields = null;
        if (text is { Length: > ReadingQuery.MaxFieldsLength })
        {
            return (null, Problems.Invalid("fields", $"At most {ReadingQuery.MaxFieldsLength} characters."));
        }

        if (!string.IsNullOrWhiteSpace(text))
        {
            fields = [];
            string[] names = text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
            if (names.Length == 0)
            {
                return (null, Problems.Invalid("fields", "Name at least one field, or leave fields out for all of them."));
            }

            foreach (string name in names)
            {
                if (!ReadingFields.TryParseName(Encoding.UTF8.GetBytes(name), out var field) || ReadingFields.KindOf(field) != readingKind)
                {
                    return (null, Problems.Invalid("fields", $"'{name}' is not a field of {kind}; its fields are {ReadingFields.NamesOf(readingKind)}."));
                }

                if (!fields.Contains(field))
                {
                    fields.Add(field);
                }
            }
        }

        if (!seesBloodPressure)
        {
            // Asked for by name, leaving it out would read as "no blood pressure was measured": say it is withheld.
            if (fields is not null && fields.Exists(DashboardAccess.IsBloodPressure))
            {
                return (null, Problems.Of(StatusCodes.Status403Forbidden, "No blood pressure",
                    "Aides see blood pressure (sys, dia) only when Dashboard:AidesSeeBloodPressure is true. Ask for the other fields, " +
                    "or leave fields out: the answer then has every field you may see."));
            }

            fields ??= [.. ReadingFields.FieldsOf(readingKind).Where(f => !DashboardAccess.IsBloodPressure(f))];
        }

        return (fields, null);
    }

    /// <summary>The kind, the range (default: the last hour) and the device intervals a query covers; or the 400 that says why not.</summary>
    /// <summary>What a range or series request asks for: its kind, range and devices (<see cref="IntervalsAsync"/>), then its fields (<see cref="Fields"/>); or the answer that says why not.</summary>
    private static async Task<(ReadingKind Kind, DateTimeOffset From, DateTimeOffset To, List<DeviceInterval> Intervals, List<ValueField>? Fields, IResult? Error)> ResolveAsync(
        string kind, ReadingQuery query, bool seesBloodPressure, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        var (readingKind, from, to, intervals, error) = await IntervalsAsync(kind, query, db, time, cancellationToken);
        if (error is not null)
        {
            return (readingKind, from, to, intervals, null, error);
        }

        var (fields, fieldsError) = Fields(kind, readingKind, query.Fields, seesBloodPressure);
        return (readingKind, from, to, intervals, fields, fieldsError);
    }

    private static async Task<(ReadingKind Kind, DateTimeOffset From, DateTimeOffset To, List<DeviceInterval> Intervals, IResult? Error)> IntervalsAsync(
        string kind, ReadingQuery query, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (!ReadingKinds.TryParse(kind, out var readingKind))
        {
            return (default, default, default, [], BadKind(kind));
        }

        // Checked before any arithmetic on them: an hour before 0001-01-01 is not a date, and must be a 400, not a 500.
        if (query.To < DateTimeOffset.UnixEpoch || query.From < DateTimeOffset.UnixEpoch)
        {
            return (readingKind, default, default, [], Problems.BadRange());
        }

        var to = query.To ?? time.GetUtcNow();
        var from = query.From ?? to.AddHours(-1);
        if (to <= from || from < DateTimeOffset.UnixEpoch)
        {
            return (readingKind, from, to, [], Problems.BadRange());
        }

        if (query.DeviceId is { } deviceId && query.OwnerId is null)
        {
            return (readingKind, from, to, [new DeviceInterval(deviceId, from.UtcDateTime, to.UtcDateTime)], null);
        }

        if (query.OwnerId is not { } ownerId || query.DeviceId is not null)
        {
            return (readingKind, from, to, [], Problems.Invalid("deviceId", "Give deviceId or ownerId (one of them)."));
        }

        var assignments = await db.Assignments.AsNoTracking()
            .Where(a => a.OwnerId == ownerId && a.From < to && (a.To == null || a.To > from))
            .OrderBy(a => a.From).Take(ReadingQueryLimits.MaxIntervals)
            .Select(a => new { a.DeviceId, a.From, a.To }).ToListAsync(cancellationToken);
        var intervals = assignments.ConvertAll(a => new DeviceInterval(a.DeviceId,
            (a.From > from ? a.From : from).UtcDateTime, (a.To is { } end && end < to ? end : to).UtcDateTime));
        return (readingKind, from, to, intervals, null);
    }

    /// <summary>
    /// A reading as the API answers it: each of <paramref name="fields"/> (every field of its kind when null), null where
    /// the reading carried none. A field not asked for, or withheld (blood pressure for those who do not see it, see
    /// <see cref="Fields"/>), is absent, not null, so a withheld value never looks like one that was not measured.
    /// </summary>
    private static ReadingView View(Reading r, List<ValueField>? fields)
    {
        var values = new Dictionary<string, double?>(StringComparer.Ordinal);
        foreach (var field in fields ?? (IEnumerable<ValueField>)ReadingFields.FieldsOf(r.Kind))
        {
            values[ReadingFields.NameOf(field)] = ReadingFields.SlotOf(field) switch
            {
                0 => r.V0,
                1 => r.V1,
                2 => r.V2,
                _ => r.V3,
            };
        }

        return new ReadingView(r.DeviceId, r.Channel, Utc(r.Timestamp), Utc(r.ReceivedAt), values);
    }

    private static DateTimeOffset Utc(DateTime value) => new(DateTime.SpecifyKind(value, DateTimeKind.Utc));

    private static IResult BadKind(string kind) => Problems.Invalid("kind", $"'{kind}' is not a kind of reading; kinds are {string.Join(", ", ReadingKinds.All.Select(ReadingKinds.Name))}.");
}

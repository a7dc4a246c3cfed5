using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Microsoft.AspNetCore.Identity;
using Microsoft.EntityFrameworkCore;
using Saito.Live.Alerts;
using Saito.Registry.Model;
using Saito.Server.Dashboard;

namespace Saito.Server.Api;

public sealed record ClassStaffView(int UserId, string UserName, string? DisplayName, IReadOnlyList<string> Roles, DateTimeOffset AddedAt);

public sealed record AlertRow(Guid Id, int OwnerId, string StudentName, int? ClassId, string Kind, int Level, double? Value, string Detail,
    DateTimeOffset RaisedAt, DateTimeOffset? EscalatedAt, DateTimeOffset? AcknowledgedAt, string? AcknowledgedBy, DateTimeOffset? ClearedAt);

public sealed record VitalsViewRow(long Id, int OwnerId, string StudentName, string UserName, DateTimeOffset At, string Via);

public sealed record ThresholdsView(int OwnerId, double? RestingHeartRate, double? TachycardiaFactor, double? HeartRateMax, double? HeartRateMin,
    double? OverheatCelsius, string? Note, string? SetBy, DateTimeOffset? SetAt, int Version);

public sealed record ThresholdsRequest(
    [property: Range(30, 220)] double? RestingHeartRate,
    [property: Range(1.1, 5)] double? TachycardiaFactor,
    [property: Range(60, 300)] double? HeartRateMax,
    [property: Range(20, 120)] double? HeartRateMin,
    [property: Range(34, 42)] double? OverheatCelsius,
    [property: StringLength(RegistryDbContext.NoteLength)] string? Note);

public sealed class AlertQuery
{
    public DateTimeOffset? From { get; set; }

    public DateTimeOffset? To { get; set; }

    public int? ClassId { get; set; }

    public int? OwnerId { get; set; }
}

public sealed class AuditQuery
{
    public DateTimeOffset? From { get; set; }

    public DateTimeOffset? To { get; set; }

    public int? OwnerId { get; set; }

    [StringLength(256)]
    public string? UserName { get; set; }
}

/// <summary>
/// What the dashboard adds to the API: who works with a class (teachers and aides see only those classes), the
/// alert history, the audit of vitals views, and clinicians' alert thresholds per student.
/// </summary>
internal static class DashboardEndpoints
{
    public static void MapDashboardEndpoints(this RouteGroupBuilder api)
    {
        var staff = api.MapGroup("/classes/{id:int}/staff").WithTags("Classes and sessions");
        staff.MapGet("/", StaffAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("The teachers and aides listed on a class (they see its live dashboard)");
        staff.MapPut("/{userId:int}", AddStaffAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("List a teacher or an aide on a class");
        staff.MapDelete("/{userId:int}", RemoveStaffAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Take a teacher or an aide off a class");

        var alerts = api.MapGroup("/alerts").WithTags("Alerts").RequireAuthorization(ApiPolicies.ViewLive);
        alerts.MapGet("/", AlertsAsync).WithSummary("Alerts, newest first, of the students one may see (admins: all; teachers and aides: their classes)");

        api.MapGet("/audit/vitals-views", AuditAsync).WithTags("Alerts").RequireAuthorization(ApiPolicies.ReadAudit)
            .WithSummary("Who viewed whose vital signs, when and where, newest first");

        var thresholds = api.MapGroup("/owners/{id:int}/alert-thresholds").WithTags("Alerts");
        thresholds.MapGet("/", GetThresholdsAsync).RequireAuthorization(ApiPolicies.ViewLive).WithSummary("A student's alert thresholds (unset: the Alerts:* defaults)");
        thresholds.MapPut("/", PutThresholdsAsync).RequireAuthorization(ApiPolicies.ManageThresholds).WithSummary("Set a student's alert thresholds, as a clinician decided");
    }

    private static async Task<IResult> StaffAsync(int id, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (!await db.Classes.AnyAsync(c => c.Id == id, cancellationToken))
        {
            return Problems.NotFound("class", id);
        }

        var rows = await (from s in db.ClassStaff.AsNoTracking()
                          join u in db.Users.AsNoTracking() on s.UserId equals u.Id
                          where s.ClassId == id
                          orderby u.UserName
                          select new { s.UserId, u.UserName, u.DisplayName, s.AddedAt }).ToListAsync(cancellationToken);
        var ids = rows.Select(r => r.UserId).ToList();
        var roles = await (from ur in db.UserRoles.AsNoTracking()
                           join r in db.Roles.AsNoTracking() on ur.RoleId equals r.Id
                           where ids.Contains(ur.UserId)
                           select new { ur.UserId, r.Name }).ToListAsync(cancellationToken);
        return TypedResults.Ok(rows.Select(r => new ClassStaffView(r.UserId, r.UserName!, r.DisplayName,
            [.. roles.Where(x => x.UserId == r.UserId).Select(x => x.Name!)], r.AddedAt)).ToList());
    }

    private static async Task<IResult> AddStaffAsync(int id, int userId, RegistryDbContext db, UserManager<StaffUser> users, TimeProvider time, CancellationToken cancellationToken)
    {
        if (!await db.Classes.AnyAsync(c => c.Id == id, cancellationToken))
        {
            return Problems.NotFound("class", id);
        }

        if (await users.FindByIdAsync(userId.ToString(System.Globalization.CultureInfo.InvariantCulture)) is not { } user)
        {
            return Problems.NotFound("user", userId);
        }

        var roles = await users.GetRolesAsync(user);
        if (!roles.Contains(StaffRoles.Teacher) && !roles.Contains(StaffRoles.Aide))
        {
            return Problems.Invalid("userId", $"{user.UserName} is not a teacher or an aide: admins see every class already, and ops see no vitals.");
        }

        if (!await db.ClassStaff.AnyAsync(s => s.ClassId == id && s.UserId == userId, cancellationToken))
        {
            db.ClassStaff.Add(new ClassStaff { ClassId = id, UserId = userId, AddedAt = time.GetUtcNow() });
            await db.SaveChangesAsync(cancellationToken);
        }

        return TypedResults.NoContent();
    }

    private static async Task<IResult> RemoveStaffAsync(int id, int userId, RegistryDbContext db, CancellationToken cancellationToken)
    {
        int removed = await db.ClassStaff.Where(s => s.ClassId == id && s.UserId == userId).ExecuteDeleteAsync(cancellationToken);
        return removed == 0 ? Problems.NotFound("class staff entry", $"{id}/{userId}") : TypedResults.NoContent();
    }

    private static async Task<IResult> AlertsAsync([AsParameters] AlertQuery query, [AsParameters] PageQuery page, ClaimsPrincipal user, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var alerts = Visible(db, user, db.Alerts.AsNoTracking()).Within(a => a.RaisedAt, query.From, query.To);

        if (query.ClassId is { } classId)
        {
            alerts = alerts.Where(a => a.ClassId == classId);
        }

        if (query.OwnerId is { } ownerId)
        {
            alerts = alerts.Where(a => a.OwnerId == ownerId);
        }

        var names = db.Owners.AsNoTracking();
        var rows = alerts.OrderByDescending(a => a.RaisedAt).Join(names, a => a.OwnerId, o => o.Id, (a, o) => new { Alert = a, o.DisplayName });
        return TypedResults.Ok(await rows.PageAsync(page, r => Row(r.Alert, r.DisplayName), cancellationToken));
    }

    /// <summary>Alerts of students the user may see: all for admins, else students on the rosters of their classes.</summary>
    internal static IQueryable<AlertRecord> Visible(RegistryDbContext db, ClaimsPrincipal user, IQueryable<AlertRecord> alerts)
    {
        if (DashboardAccess.IsAdmin(user))
        {
            return alerts;
        }

        int? id = DashboardAccess.UserId(user);
        return alerts.Where(a => db.RosterEntries.Any(r => r.OwnerId == a.OwnerId && db.ClassStaff.Any(s => s.ClassId == r.ClassId && s.UserId == id)));
    }

    internal static AlertRow Row(AlertRecord a, string studentName) => new(a.Id, a.OwnerId, studentName, a.ClassId, a.Kind, a.Level, a.Value, a.Detail,
        a.RaisedAt, a.EscalatedAt, a.AcknowledgedAt, a.AcknowledgedBy, a.ClearedAt);

    private static async Task<IResult> AuditAsync([AsParameters] AuditQuery query, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var views = db.VitalsViews.AsNoTracking().Within(v => v.At, query.From, query.To);

        if (query.OwnerId is { } ownerId)
        {
            views = views.Where(v => v.OwnerId == ownerId);
        }

        if (!string.IsNullOrWhiteSpace(query.UserName))
        {
            views = views.Where(v => v.UserName == query.UserName);
        }

        var rows = views.OrderByDescending(v => v.Id).Join(db.Owners.AsNoTracking(), v => v.OwnerId, o => o.Id, (v, o) => new { View = v, o.DisplayName });
        return TypedResults.Ok(await rows.PageAsync(page, r => new VitalsViewRow(r.View.Id, r.View.OwnerId, r.DisplayName, r.View.UserName, r.View.At, r.View.Via), cancellationToken));
    }

    private static async Task<IResult> GetThresholdsAsync(int id, ClaimsPrincipal user, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (!await db.Owners.AnyAsync(o => o.Id == id, cancellationToken))
        {
            return Problems.NotFound("owner", id);
        }

        if (!await DashboardAccess.CanSeeStudentAsync(db, user, id, cancellationToken))
        {
            return Problems.Of(StatusCodes.Status403Forbidden, "Not your student", "You may see the thresholds of students on the classes you are listed on.");
        }

        var t = await db.AlertThresholds.AsNoTracking().SingleOrDefaultAsync(x => x.OwnerId == id, cancellationToken);
        return TypedResults.Ok(t is null ? new ThresholdsView(id, null, null, null, null, null, null, null, null, 0) : View(t));
    }

    private static async Task<IResult> PutThresholdsAsync(int id, ThresholdsRequest request, ClaimsPrincipal user, RegistryDbContext db, LiveSignal signal, TimeProvider time, CancellationToken cancellationToken)
    {
        if (!await db.Owners.AnyAsync(o => o.Id == id, cancellationToken))
        {
            return Problems.NotFound("owner", id);
        }

        var thresholds = new AlertThresholds
        {
            RestingHeartRate = request.RestingHeartRate,
            TachycardiaFactor = request.TachycardiaFactor,
            HeartRateMax = request.HeartRateMax,
            HeartRateMin = request.HeartRateMin,
            OverheatCelsius = request.OverheatCelsius,
        };
        if (thresholds.Validate().FirstOrDefault() is { } problem)
        {
            return Problems.Invalid("thresholds", problem);
        }

        var row = await db.AlertThresholds.SingleOrDefaultAsync(x => x.OwnerId == id, cancellationToken);
        if (row is null)
        {
            row = new OwnerAlertThreshold { OwnerId = id, SetBy = "" };
            db.AlertThresholds.Add(row);
        }

        row.RestingHeartRate = request.RestingHeartRate;
        row.TachycardiaFactor = request.TachycardiaFactor;
        row.HeartRateMax = request.HeartRateMax;
        row.HeartRateMin = request.HeartRateMin;
        row.OverheatCelsius = request.OverheatCelsius;
        row.Note = request.Note;
        row.SetBy = DashboardAccess.UserName(user);
        row.SetAt = time.GetUtcNow();
        row.Version++;
        await db.SaveChangesAsync(cancellationToken);
        signal.RegistryChanged();
        return TypedResults.Ok(View(row));
    }

    private static ThresholdsView View(OwnerAlertThreshold t) =>
        new(t.OwnerId, t.RestingHeartRate, t.TachycardiaFactor, t.HeartRateMax, t.HeartRateMin, t.OverheatCelsius, t.Note, t.SetBy, t.SetAt, t.Version);
}

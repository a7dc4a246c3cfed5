using System.ComponentModel.DataAnnotations;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Registry.Timetable;

namespace Saito.Server.Api;

public sealed record SlotDto([property: Required] DayOfWeek? Day, [property: Required] TimeOnly? Start, [property: Range(1, 720)] int DurationMinutes);

public sealed record ClassView(int Id, string Name, string? Room, IReadOnlyList<SlotDto> Slots, int RosterSize, int Version);

public sealed record ClassRequest(
    [property: Required, StringLength(RegistryDbContext.NameLength, MinimumLength = 1)] string Name,
    [property: StringLength(RegistryDbContext.NameLength)] string? Room,
    [property: Required] SlotDto[] Slots);

public sealed record SessionView(int Id, int ClassId, string ClassName, DateOnly SchoolDate, DateTimeOffset StartsAt, DateTimeOffset EndsAt);

public sealed record AttendanceRow(int OwnerId, string DisplayName, DateTimeOffset? CheckedInAt, DateTimeOffset? CheckedOutAt);

public sealed record SessionDetail(SessionView Session, IReadOnlyList<AttendanceRow> Roster);

public sealed class SessionQuery
{
    public DateOnly? From { get; set; }

    public DateOnly? To { get; set; }

    public int? ClassId { get; set; }
}

public sealed record PlanRequest([property: Required] DateOnly? From, [property: Required] DateOnly? To);

public sealed record PlanAnswer(int Added, IReadOnlyList<RejectedTimetable> Rejected);

/// <summary>Classes with their weekly timetable and roster; sessions (planned from the timetable) with who arrived.</summary>
internal static class ClassEndpoints
{
    public static void MapClassEndpoints(this RouteGroupBuilder api)
    {
        var classes = api.MapGroup("/classes").WithTags("Classes and sessions");
        classes.MapGet("/", ListAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("Classes and their timetables");
        classes.MapGet("/{id:int}", GetAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("One class, with its ETag");
        classes.MapPost("/", CreateAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Add a class with its weekly slots (school time zone)");
        classes.MapPut("/{id:int}", UpdateAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Change a class and replace its slots (If-Match required)");
        classes.MapGet("/{id:int}/roster", RosterAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("The students on a class's roster");
        classes.MapPut("/{id:int}/roster/{ownerId:int}", AddToRosterAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Put a student on the roster");
        classes.MapDelete("/{id:int}/roster/{ownerId:int}", RemoveFromRosterAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Take a student off the roster");

        var sessions = api.MapGroup("/sessions").WithTags("Classes and sessions");
        sessions.MapGet("/", ListSessionsAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("Sessions between two school dates (default: today)");
        sessions.MapGet("/{id:int}", GetSessionAsync).RequireAuthorization(ApiPolicies.ReadPeople).WithSummary("A session and who on its roster has arrived");
        sessions.MapPost("/plan", PlanAsync).RequireAuthorization(ApiPolicies.ManagePeople).WithSummary("Make the sessions of every class's timetable for a range of dates (Saito also does, hourly)");
    }

    private static IQueryable<ClassView> Views(IQueryable<SchoolClass> classes) =>
        classes.AsNoTracking().Select(c => new ClassView(c.Id, c.Name, c.Room,
            c.Slots.OrderBy(s => s.Id).Select(s => new SlotDto(s.Day, s.Start, s.DurationMinutes)).ToList(), c.Roster.Count, c.Version));

    private static async Task<IResult> ListAsync([AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken) =>
        TypedResults.Ok(await Views(db.Classes.OrderBy(c => c.Name)).PageAsync(page, v => v, cancellationToken));

    private static async Task<IResult> GetAsync(int id, HttpContext http, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (await Views(db.Classes.Where(c => c.Id == id)).SingleOrDefaultAsync(cancellationToken) is not { } view)
        {
            return Problems.NotFound("class", id);
        }

        http.Response.Headers.ETag = Versions.ETag(view.Version);
        return TypedResults.Ok(view);
    }

    private static async Task<IResult> CreateAsync(ClassRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        var slots = Slots(request);
        if (Timetable.Problems(slots) is { Count: > 0 } problems)
        {
            return TypedResults.ValidationProblem(new Dictionary<string, string[]> { ["slots"] = [.. problems] });
        }

        if (await db.Classes.AnyAsync(c => c.Name == request.Name, cancellationToken))
        {
            return Problems.Conflict($"A class named {request.Name} exists already.");
        }

        var now = time.GetUtcNow();
        var schoolClass = new SchoolClass { Name = request.Name.Trim(), Room = request.Room, CreatedAt = now, UpdatedAt = now, Version = 1 };
        schoolClass.Slots.AddRange(slots);
        db.Classes.Add(schoolClass);
        await db.SaveChangesAsync(cancellationToken);
        http.Response.Headers.ETag = Versions.ETag(schoolClass);
        return TypedResults.Created($"/api/classes/{schoolClass.Id}", await Views(db.Classes.Where(c => c.Id == schoolClass.Id)).SingleAsync(cancellationToken));
    }

    private static async Task<IResult> UpdateAsync(int id, ClassRequest request, HttpContext http, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Classes.Include(c => c.Slots).SingleOrDefaultAsync(c => c.Id == id, cancellationToken) is not { } schoolClass)
        {
            return Problems.NotFound("class", id);
        }

        var slots = Slots(request);
        if (Timetable.Problems(slots) is { Count: > 0 } problems)
        {
            return TypedResults.ValidationProblem(new Dictionary<string, string[]> { ["slots"] = [.. problems] });
        }

        if (Versions.CheckAndBump(http, schoolClass) is { } refused)
        {
            return refused;
        }

        if (await db.Classes.AnyAsync(c => c.Name == request.Name && c.Id != id, cancellationToken))
        {
            return Problems.Conflict($"Another class is named {request.Name}.");
        }

        schoolClass.Name = request.Name.Trim();
        schoolClass.Room = request.Room;
        schoolClass.UpdatedAt = time.GetUtcNow();
        db.TimetableSlots.RemoveRange(schoolClass.Slots);
        schoolClass.Slots.Clear();
        schoolClass.Slots.AddRange(slots);
        if (await Versions.SaveAsync(db, schoolClass, cancellationToken) is { } stale)
        {
            return stale;
        }

        http.Response.Headers.ETag = Versions.ETag(schoolClass);
        return TypedResults.Ok(await Views(db.Classes.Where(c => c.Id == id)).SingleAsync(cancellationToken));
    }

    private static async Task<IResult> RosterAsync(int id, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (!await db.Classes.AnyAsync(c => c.Id == id, cancellationToken))
        {
            return Problems.NotFound("class", id);
        }

        return TypedResults.Ok(await db.RosterEntries.AsNoTracking().Where(r => r.ClassId == id).OrderBy(r => r.Owner!.DisplayName)
            .Select(r => new OwnerRef(r.OwnerId, r.Owner!.DisplayName)).PageAsync(page, v => v, cancellationToken));
    }

    private static async Task<IResult> AddToRosterAsync(int id, int ownerId, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (!await db.Classes.AnyAsync(c => c.Id == id, cancellationToken))
        {
            return Problems.NotFound("class", id);
        }

        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == ownerId, cancellationToken) is not { } owner)
        {
            return Problems.NotFound("owner", ownerId);
        }

        if (owner.Kind != OwnerKind.Student || !owner.Active)
        {
            return Problems.Conflict($"Owner {ownerId} is not an active student.");
        }

        if (!await db.RosterEntries.AnyAsync(r => r.ClassId == id && r.OwnerId == ownerId, cancellationToken))
        {
            db.RosterEntries.Add(new RosterEntry { ClassId = id, OwnerId = ownerId, AddedAt = time.GetUtcNow() });
            await db.SaveChangesAsync(cancellationToken);
        }

        return TypedResults.NoContent();
    }

    private static async Task<IResult> RemoveFromRosterAsync(int id, int ownerId, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (await db.RosterEntries.SingleOrDefaultAsync(r => r.ClassId == id && r.OwnerId == ownerId, cancellationToken) is not { } entry)
        {
            return Problems.NotFound("roster place of owner", ownerId);
        }

        db.RosterEntries.Remove(entry);
        await db.SaveChangesAsync(cancellationToken);
        return TypedResults.NoContent();
    }

    private static async Task<IResult> ListSessionsAsync([AsParameters] SessionQuery query, [AsParameters] PageQuery page, RegistryDbContext db,
        IOptions<SchoolOptions> school, TimeProvider time, CancellationToken cancellationToken)
    {
        var today = school.Value.SchoolDate(time.GetUtcNow());
        var from = query.From ?? today;
        var to = query.To ?? from;
        if (to < from || to.DayNumber - from.DayNumber > 366)
        {
            return Problems.Invalid("to", "to must be on or after from, at most 366 days later.");
        }

        var sessions = db.Sessions.AsNoTracking().Where(s => s.SchoolDate >= from && s.SchoolDate <= to);
        if (query.ClassId is { } classId)
        {
            sessions = sessions.Where(s => s.ClassId == classId);
        }

        return TypedResults.Ok(await sessions.OrderBy(s => s.StartsAt).ThenBy(s => s.ClassId)
            .Select(s => new SessionView(s.Id, s.ClassId, s.Class!.Name, s.SchoolDate, s.StartsAt, s.EndsAt)).PageAsync(page, v => v, cancellationToken));
    }

    private static async Task<IResult> GetSessionAsync(int id, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (await db.Sessions.AsNoTracking().Where(s => s.Id == id)
                .Select(s => new SessionView(s.Id, s.ClassId, s.Class!.Name, s.SchoolDate, s.StartsAt, s.EndsAt)).SingleOrDefaultAsync(cancellationToken) is not { } session)
        {
            return Problems.NotFound("session", id);
        }

        var roster = await db.RosterEntries.AsNoTracking().Where(r => r.ClassId == session.ClassId).OrderBy(r => r.Owner!.DisplayName)
            .Select(r => new
            {
                r.OwnerId,
                r.Owner!.DisplayName,
                CheckIn = db.CheckIns.Where(c => c.OwnerId == r.OwnerId && c.SchoolDate == session.SchoolDate).Select(c => new { c.CheckedInAt, c.CheckedOutAt }).FirstOrDefault(),
            })
            .ToListAsync(cancellationToken);
        return TypedResults.Ok(new SessionDetail(session, [.. roster.Select(r => new AttendanceRow(r.OwnerId, r.DisplayName, r.CheckIn?.CheckedInAt, r.CheckIn?.CheckedOutAt))]));
    }

    private static async Task<IResult> PlanAsync(PlanRequest request, RegistryDbContext db, SessionPlanner planner, CancellationToken cancellationToken)
    {
        if (request.To < request.From || request.To!.Value.DayNumber - request.From!.Value.DayNumber > 366)
        {
            return Problems.Invalid("to", "to must be on or after from, at most 366 days later.");
        }

        try
        {
            var plan = await planner.PlanAsync(db, request.From.Value, request.To.Value, cancellationToken);
            return TypedResults.Ok(new PlanAnswer(plan.Added.Count, plan.Rejected));
        }
        catch (DbUpdateException)
        {
            return Problems.Conflict("Sessions were being planned at the same moment (Saito plans hourly); send the request again.");
        }
    }

    private static List<TimetableSlot> Slots(ClassRequest request) =>
        [.. request.Slots.Select(s => new TimetableSlot { Day = s.Day!.Value, Start = s.Start!.Value, DurationMinutes = s.DurationMinutes })];
}

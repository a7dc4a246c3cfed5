using System.ComponentModel.DataAnnotations;
using System.Security.Claims;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Ingestion;
using Saito.Ingestion.Pipeline;
using Saito.Registry.Model;

namespace Saito.Server.Api;

public sealed record OwnerRef(int Id, string DisplayName);

public sealed record DeviceView(
    int Id, string Serial, string? Kind, int? Channels, string? Firmware, string? Hub, DeviceStatus Status,
    DateTimeOffset FirstSeen, DateTimeOffset? LastHello, DateTimeOffset? LastSeen, DateTimeOffset? RetiredAt, OwnerRef? AssignedTo);

public sealed class DeviceQuery
{
    /// <summary><c>new</c> (to sort out), <c>assigned</c> or <c>retired</c>.</summary>
    [StringLength(16)]
    public string? Status { get; set; }

    /// <summary>Devices that have sent nothing since this time (or never).</summary>
    public DateTimeOffset? SilentSince { get; set; }

    [StringLength(32)]
    public string? Kind { get; set; }

    [StringLength(64)]
    public string? Hub { get; set; }

    /// <summary>Part of the serial.</summary>
    [StringLength(128)]
    public string? Q { get; set; }
}

public sealed record NewDeviceRequest(
    [property: Required, StringLength(128, MinimumLength = 1), RegularExpression("^[^+#/\\s]+$", ErrorMessage = "a serial has no spaces, '/', '+' or '#' (it is an MQTT topic level)")] string Serial,
    [property: Required] string Kind,
    [property: Range(1, 65536)] int? Channels);

public sealed record DeviceRequest([property: Required] string Kind, [property: Range(1, 65536)] int? Channels);

/// <summary>Where a device moved: the hub it is bound to from now on (and so that hub's site).</summary>
public sealed record DeviceMoveRequest(
    [property: Required, RegularExpression("^[A-Za-z0-9._-]{1,64}$", ErrorMessage = "a hub's name has 1 to 64 letters, digits, '.', '_' or '-'")] string Hub);

public sealed record AssignmentView(int Id, int DeviceId, string Serial, int OwnerId, string OwnerName, DateTimeOffset From, DateTimeOffset? To, string AssignedBy, string? Note);

public sealed record AssignRequest([property: Required] int? DeviceId, [property: Required] int? OwnerId, DateTimeOffset? From, [property: StringLength(RegistryDbContext.NoteLength)] string? Note);

public sealed record EndAssignmentRequest(DateTimeOffset? To);

public sealed class AssignmentQuery
{
    public int? DeviceId { get; set; }

    public int? OwnerId { get; set; }

    /// <summary>Only assignments in force at this moment.</summary>
    public DateTimeOffset? At { get; set; }
}

/// <summary>Devices (ingestion registers them on first sight; staff sort them out) and their assignments to owners.</summary>
internal static class DeviceEndpoints
{
    public static void MapDeviceEndpoints(this RouteGroupBuilder api)
    {
        var devices = api.MapGroup("/devices").WithTags("Devices");
        devices.MapGet("/", ListAsync).RequireAuthorization(ApiPolicies.ReadDevices).WithSummary("Devices; filter by status (new = to sort out), silentSince, kind, hub, q");
        devices.MapGet("/{id:int}", GetAsync).RequireAuthorization(ApiPolicies.ReadDevices).WithSummary("One device and who has it");
        devices.MapPost("/", CreateAsync).RequireAuthorization(ApiPolicies.ManageDevices).WithSummary("Add a device by hand (before it is first seen)");
        devices.MapPut("/{id:int}", UpdateAsync).RequireAuthorization(ApiPolicies.ManageDevices).WithSummary("Set a device's kind and channels");
        devices.MapPost("/{id:int}/move", MoveAsync).RequireAuthorization(ApiPolicies.ManageDevices)
            .WithSummary("Bind a device to another hub, and so to that hub's site (a device moved between sites; docs/security.md)");
        devices.MapPost("/{id:int}/retire", RetireAsync).RequireAuthorization(ApiPolicies.ManageDevices).WithSummary("Take a device out of use (ends its assignment)");

        var assignments = api.MapGroup("/assignments").WithTags("Devices");
        assignments.MapGet("/", ListAssignmentsAsync).RequireAuthorization(ApiPolicies.ReadDevices).WithSummary("Assignment history; filter by device, owner, at");
        assignments.MapPost("/", AssignAsync).RequireAuthorization(ApiPolicies.AssignDevices).WithSummary("Give a device to an owner (ends its previous assignment)");
        assignments.MapPost("/{id:int}/end", EndAsync).RequireAuthorization(ApiPolicies.AssignDevices).WithSummary("End an assignment");
    }

    private static IQueryable<DeviceView> Views(IQueryable<Device> devices) =>
        devices.AsNoTracking().Select(d => new DeviceView(
            d.Id, d.Serial, d.Kind, d.Channels, d.Firmware, d.Hub,
            d.RetiredAt != null ? DeviceStatus.Retired : d.Assignments.Any(a => a.To == null) ? DeviceStatus.Assigned : DeviceStatus.New,
            d.FirstSeen, d.LastHello, d.LastSeen, d.RetiredAt,
            d.Assignments.Where(a => a.To == null).Select(a => new OwnerRef(a.OwnerId, a.Owner!.DisplayName)).FirstOrDefault()));

    private static async Task<IResult> ListAsync([AsParameters] DeviceQuery query, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var (status, error) = ApiEnums.Parse<DeviceStatus>(query.Status, "status");
        if (error is not null)
        {
            return error;
        }

        var devices = db.Devices.AsNoTracking();
        switch (status)
        {
            case DeviceStatus.Retired:
                devices = devices.Where(d => d.RetiredAt != null);
                break;
            case DeviceStatus.Assigned:
                devices = devices.Where(d => d.RetiredAt == null && d.Assignments.Any(a => a.To == null));
                break;
            case DeviceStatus.New:
                devices = devices.Where(d => d.RetiredAt == null && !d.Assignments.Any(a => a.To == null));
                break;
        }

        if (query.SilentSince is { } since)
        {
            devices = devices.Where(d => d.LastSeen == null || d.LastSeen < since);
        }

        if (!string.IsNullOrEmpty(query.Kind))
        {
            devices = devices.Where(d => d.Kind == query.Kind);
        }

        if (!string.IsNullOrEmpty(query.Hub))
        {
            devices = devices.Where(d => d.Hub == query.Hub);
        }

        if (!string.IsNullOrEmpty(query.Q))
        {
            devices = devices.Where(d => d.Serial.Contains(query.Q));
        }

        var ids = devices.OrderBy(d => d.Serial).Select(d => d.Id);
        int offset = page.Offset ?? 0;
        int limit = page.Limit ?? PageQuery.DefaultLimit;
        int total = await ids.CountAsync(cancellationToken);
        var pageIds = await ids.Skip(offset).Take(limit).ToListAsync(cancellationToken);
        var items = await Views(db.Devices.Where(d => pageIds.Contains(d.Id))).ToListAsync(cancellationToken);
        return TypedResults.Ok(new Page<DeviceView>([.. items.OrderBy(v => v.Serial, StringComparer.Ordinal)], offset, limit, total));
    }

    private static async Task<IResult> GetAsync(int id, RegistryDbContext db, CancellationToken cancellationToken) =>
        await Views(db.Devices.Where(d => d.Id == id)).SingleOrDefaultAsync(cancellationToken) is { } view ? TypedResults.Ok(view) : Problems.NotFound("device", id);

    private static async Task<IResult> CreateAsync(NewDeviceRequest request, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (BadKind(request.Kind) is { } bad)
        {
            return bad;
        }

        if (await db.Devices.AnyAsync(d => d.Serial == request.Serial, cancellationToken))
        {
            return Problems.Conflict($"Device {request.Serial} exists already (ingestion registers a serial when it first sees it).");
        }

        var device = new Device { Serial = request.Serial, Kind = request.Kind, Channels = request.Channels, FirstSeen = time.GetUtcNow() };
        db.Devices.Add(device);
        await db.SaveChangesAsync(cancellationToken);
        return TypedResults.Created($"/api/devices/{device.Id}", await Views(db.Devices.Where(d => d.Id == device.Id)).SingleAsync(cancellationToken));
    }

    private static async Task<IResult> UpdateAsync(int id, DeviceRequest request, RegistryDbContext db, CancellationToken cancellationToken)
    {
        if (BadKind(request.Kind) is { } bad)
        {
            return bad;
        }

        if (await db.Devices.SingleOrDefaultAsync(d => d.Id == id, cancellationToken) is not { } device)
        {
            return Problems.NotFound("device", id);
        }

        device.Kind = request.Kind;
        device.Channels = request.Channels ?? device.Channels;
        await db.SaveChangesAsync(cancellationToken);
        return TypedResults.Ok(await Views(db.Devices.Where(d => d.Id == id)).SingleAsync(cancellationToken));
    }

    /// <summary>
    /// The device is bound to <see cref="DeviceMoveRequest.Hub"/>: hubs of that hub's site may send for it from now on
    /// (this Saito at once; another instance sharing the database within <c>Ingestion:DeviceHubRecheckSeconds</c>). While
    /// some hub has a site, the hub must be one in the credentials file.
    /// </summary>
    private static async Task<IResult> MoveAsync(int id, DeviceMoveRequest request, RegistryDbContext db, HubSiteRules sites, CancellationToken cancellationToken)
    {
        if (await db.Devices.SingleOrDefaultAsync(d => d.Id == id, cancellationToken) is not { } device)
        {
            return Problems.NotFound("device", id);
        }

        if (sites.MoveRefusal(request.Hub) is { } refusal)
        {
            return Problems.Invalid("hub", refusal);
        }

        device.Hub = request.Hub;
        await db.SaveChangesAsync(cancellationToken);
        sites.Moved(device.Serial, request.Hub);
        return TypedResults.Ok(await Views(db.Devices.Where(d => d.Id == id)).SingleAsync(cancellationToken));
    }

    private static async Task<IResult> RetireAsync(int id, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        if (await db.Devices.Include(d => d.Assignments.Where(a => a.To == null)).SingleOrDefaultAsync(d => d.Id == id, cancellationToken) is not { } device)
        {
            return Problems.NotFound("device", id);
        }

        if (device.RetiredAt is null)
        {
            var now = time.GetUtcNow();
            device.RetiredAt = now;
            foreach (var open in device.Assignments)
            {
                open.To = now < open.From ? open.From : now;
            }

            await db.SaveChangesAsync(cancellationToken);
        }

        return TypedResults.Ok(await Views(db.Devices.Where(d => d.Id == id)).SingleAsync(cancellationToken));
    }

    private static async Task<Page<AssignmentView>> ListAssignmentsAsync([AsParameters] AssignmentQuery query, [AsParameters] PageQuery page, RegistryDbContext db, CancellationToken cancellationToken)
    {
        var assignments = db.Assignments.AsNoTracking();
        if (query.DeviceId is { } deviceId)
        {
            assignments = assignments.Where(a => a.DeviceId == deviceId);
        }

        if (query.OwnerId is { } ownerId)
        {
            assignments = assignments.Where(a => a.OwnerId == ownerId);
        }

        if (query.At is { } at)
        {
            assignments = assignments.Where(a => a.From <= at && (a.To == null || a.To > at));
        }

        return await assignments.OrderByDescending(a => a.From).ThenByDescending(a => a.Id)
            .Select(a => new AssignmentView(a.Id, a.DeviceId, a.Device!.Serial, a.OwnerId, a.Owner!.DisplayName, a.From, a.To, a.AssignedBy, a.Note))
            .PageAsync(page, v => v, cancellationToken);
    }

    private static async Task<IResult> AssignAsync(AssignRequest request, ClaimsPrincipal user, RegistryDbContext db, TimeProvider time,
        IOptions<IngestionOptions> ingestion, CancellationToken cancellationToken)
    {
        var result = await DeviceAssignments.AssignAsync(db, AssignmentCaller.Of(user), request.DeviceId!.Value, request.OwnerId!.Value, request.From, time.GetUtcNow(),
            TimeSpan.FromSeconds(ingestion.Value.MaxFutureSkewSeconds), request.Note, cancellationToken);
        if (result is not { Assignment: { } assignment, Device: { } device, Owner: { } owner })
        {
            return result.ToProblem();
        }

        return TypedResults.Created($"/api/assignments/{assignment.Id}",
            new AssignmentView(assignment.Id, device.Id, device.Serial, owner.Id, owner.DisplayName, assignment.From, null, assignment.AssignedBy, assignment.Note));
    }

    private static async Task<IResult> EndAsync(int id, EndAssignmentRequest? request, ClaimsPrincipal user, RegistryDbContext db, TimeProvider time, CancellationToken cancellationToken)
    {
        var result = await DeviceAssignments.EndAsync(db, AssignmentCaller.Of(user), id, request?.To, time.GetUtcNow(), cancellationToken);
        if (result is not { Assignment: { } assignment, Device: { } device, Owner: { } owner })
        {
            return result.ToProblem();
        }

        return TypedResults.Ok(new AssignmentView(assignment.Id, assignment.DeviceId, device.Serial, assignment.OwnerId, owner.DisplayName,
            assignment.From, assignment.To, assignment.AssignedBy, assignment.Note));
    }

    private static IResult? BadKind(string kind) =>
        DeviceKinds.All.Contains(kind) ? null : Problems.Invalid("kind", $"'{kind}' is not a device kind; kinds are {string.Join(", ", DeviceKinds.All)}.");
}

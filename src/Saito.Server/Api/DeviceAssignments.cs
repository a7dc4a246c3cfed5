using Microsoft.EntityFrameworkCore;
using Saito.Registry.Model;

namespace Saito.Server.Api;

/// <summary>What <see cref="DeviceAssignments"/> did: the assignment with its device and owner, or why not (403, 404 or 409).</summary>
public sealed record AssignResult(Assignment? Assignment, Device? Device, Owner? Owner, int Status, string? Problem)
{
    public static AssignResult Refused(int status, string problem) => new(null, null, null, status, problem);

    /// <summary>The refusal as the API answers it.</summary>
    public IResult ToProblem() => Status switch
    {
        StatusCodes.Status404NotFound => Problems.Of(Status, "Not found", Problem!),
        StatusCodes.Status403Forbidden => Problems.Of(Status, "Forbidden", Problem!),
        StatusCodes.Status400BadRequest => Problems.Invalid("to", Problem!),
        _ => Problems.Conflict(Problem!),
    };
}

/// <summary>
/// Giving a device to an owner and ending an assignment, for the API and the devices page alike: the device exists and
/// is not retired, the owner exists and is active, history after the start is not rewritten, the open assignment is
/// closed first (one open assignment per device, by a unique index), of two at the same moment one loses cleanly, and
/// the caller may make the change (<see cref="AssignmentRule"/>, checked inside the same transaction as the change).
/// </summary>
public static class DeviceAssignments
{
    /// <summary>
    /// Gives <paramref name="deviceId"/> to <paramref name="ownerId"/> from <paramref name="from"/> (null: from
    /// <paramref name="now"/>); <paramref name="skew"/> is how far ahead of the clock a reading may be stamped
    /// (<c>Ingestion:MaxFutureSkewSeconds</c>).
    /// </summary>
    public static async Task<AssignResult> AssignAsync(RegistryDbContext db, AssignmentCaller caller, int deviceId, int ownerId, DateTimeOffset? from,
        DateTimeOffset now, TimeSpan skew, string? note, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(caller);
        var start = from ?? now;
        await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken);
        if (await db.Devices.SingleOrDefaultAsync(d => d.Id == deviceId, cancellationToken) is not { } device)
        {
            return AssignResult.Refused(StatusCodes.Status404NotFound, $"There is no device {deviceId}.");
        }

        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == ownerId, cancellationToken) is not { } owner)
        {
            return AssignResult.Refused(StatusCodes.Status404NotFound, $"There is no owner {ownerId}.");
        }

        // The other owners whose assignment of this device is open or ended so recently that its readings may still reach the new one.
        var since = start - skew;
        var recent = await db.Assignments.AsNoTracking()
            .Where(a => a.DeviceId == device.Id && a.OwnerId != owner.Id && (a.To == null || a.To > since))
            .Select(a => new { a.OwnerId, a.To }).ToListAsync(cancellationToken);
        var parties = await PartiesAsync(db, caller, [owner.Id, .. recent.Select(r => r.OwnerId)], cancellationToken);
        if (AssignmentRule.MayStart(caller, now, skew, start, parties[owner.Id], [.. recent.Select(r => new PreviousAssignment(parties[r.OwnerId], r.To))]) is { } forbidden)
        {
            return AssignResult.Refused(StatusCodes.Status403Forbidden, forbidden);
        }

        if (device.RetiredAt is not null)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict, $"Device {device.Serial} is retired.");
        }

        if (!owner.Active)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict, $"Owner {owner.Id} is no longer active.");
        }

        if (await db.Assignments.AnyAsync(a => a.DeviceId == device.Id && ((a.To != null && a.To > start) || a.From > start), cancellationToken))
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict,
                $"Device {device.Serial} has an assignment after {start:O}: history is not rewritten. Assign from a later time.");
        }

        if (await db.Assignments.SingleOrDefaultAsync(a => a.DeviceId == device.Id && a.To == null, cancellationToken) is { } open)
        {
            if (open.OwnerId == owner.Id)
            {
                return AssignResult.Refused(StatusCodes.Status409Conflict, $"Device {device.Serial} is already assigned to owner {owner.Id} (assignment {open.Id}).");
            }

            open.To = start;
            // The open assignment is closed first: the unique index allows one open assignment per device.
            await db.SaveChangesAsync(cancellationToken);
        }

        var assignment = new Assignment { DeviceId = device.Id, OwnerId = owner.Id, From = start, AssignedBy = caller.Name, Note = note };
        db.Assignments.Add(assignment);
        try
        {
            await db.SaveChangesAsync(cancellationToken);
        }
        catch (DbUpdateException)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict,
                $"Device {device.Serial} was assigned by someone else at the same moment; read its assignments again.");
        }

        await transaction.CommitAsync(cancellationToken);
        return new AssignResult(assignment, device, owner, StatusCodes.Status201Created, null);
    }

    /// <summary>Ends assignment <paramref name="id"/> at <paramref name="to"/> (null: <paramref name="now"/>).</summary>
    public static async Task<AssignResult> EndAsync(RegistryDbContext db, AssignmentCaller caller, int id, DateTimeOffset? to, DateTimeOffset now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(caller);
        if (await db.Assignments.Include(a => a.Device).Include(a => a.Owner).SingleOrDefaultAsync(a => a.Id == id, cancellationToken) is not { } assignment)
        {
            return AssignResult.Refused(StatusCodes.Status404NotFound, $"There is no assignment {id}.");
        }

        var end = to ?? now;
        var parties = await PartiesAsync(db, caller, [assignment.OwnerId], cancellationToken);
        if (AssignmentRule.MayEnd(caller, now, end, parties[assignment.OwnerId]) is { } forbidden)
        {
            return AssignResult.Refused(StatusCodes.Status403Forbidden, forbidden);
        }

        if (assignment.To is not null)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict, $"Assignment {id} ended already at {assignment.To:O}.");
        }

        if (end < assignment.From)
        {
            return AssignResult.Refused(StatusCodes.Status400BadRequest, "An assignment cannot end before it began.");
        }

        assignment.To = end;
        await db.SaveChangesAsync(cancellationToken);
        return new AssignResult(assignment, assignment.Device, assignment.Owner, StatusCodes.Status200OK, null);
    }

    /// <summary>Each owner with whether <paramref name="caller"/> may act for them and the classes they are on.</summary>
    private static async Task<Dictionary<int, AssignmentParty>> PartiesAsync(RegistryDbContext db, AssignmentCaller caller, List<int> owners, CancellationToken cancellationToken)
    {
        var roster = await db.RosterEntries.AsNoTracking().Where(r => owners.Contains(r.OwnerId)).Select(r => new { r.OwnerId, r.ClassId }).ToListAsync(cancellationToken);
        var mine = caller.Kind == AssignmentCallerKind.Roster
            ? (await db.ClassStaff.AsNoTracking().Where(s => s.UserId == caller.UserId).Select(s => s.ClassId).ToListAsync(cancellationToken)).ToHashSet()
            : [];
        return owners.Distinct().ToDictionary(o => o, o =>
        {
            var classes = roster.Where(r => r.OwnerId == o).Select(r => r.ClassId).ToList();
            return new AssignmentParty(o, caller.Kind != AssignmentCallerKind.Roster || classes.Exists(mine.Contains), classes);
        });
    }
}

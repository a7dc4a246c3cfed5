using Microsoft.EntityFrameworkCore;
using Saito.Registry.Data;
using Saito.Registry.Model;

namespace Saito.Server.Api;

/// <summary>What <see cref="DeviceAssignments.AssignAsync"/> did: the new assignment with its device and owner, or why not (404 or 409).</summary>
public sealed record AssignResult(Assignment? Assignment, Device? Device, Owner? Owner, int Status, string? Problem)
{
    public static AssignResult Refused(int status, string problem) => new(null, null, null, status, problem);
}

/// <summary>
/// Giving a device to an owner, for <c>POST /api/assignments</c> and the devices page alike: the device exists and is
/// not retired, the owner exists and is active, history after the start is not rewritten, the open assignment is
/// closed first (one open assignment per device, by a unique index), and of two at the same moment one loses cleanly.
/// </summary>
public static class DeviceAssignments
{
    public static async Task<AssignResult> AssignAsync(RegistryDbContext db, int deviceId, int ownerId, DateTimeOffset from, string by, string? note,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        await using var transaction = await db.Database.BeginTransactionAsync(cancellationToken);
        if (await db.Devices.SingleOrDefaultAsync(d => d.Id == deviceId, cancellationToken) is not { } device)
        {
            return AssignResult.Refused(StatusCodes.Status404NotFound, $"There is no device {deviceId}.");
        }

        if (device.RetiredAt is not null)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict, $"Device {device.Serial} is retired.");
        }

        if (await db.Owners.SingleOrDefaultAsync(o => o.Id == ownerId, cancellationToken) is not { } owner)
        {
            return AssignResult.Refused(StatusCodes.Status404NotFound, $"There is no owner {ownerId}.");
        }

        if (!owner.Active)
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict, $"Owner {owner.Id} is no longer active.");
        }

        if (await db.Assignments.AnyAsync(a => a.DeviceId == device.Id && ((a.To != null && a.To > from) || a.From > from), cancellationToken))
        {
            return AssignResult.Refused(StatusCodes.Status409Conflict,
                $"Device {device.Serial} has an assignment after {from:O}: history is not rewritten. Assign from a later time.");
        }

        if (await db.Assignments.SingleOrDefaultAsync(a => a.DeviceId == device.Id && a.To == null, cancellationToken) is { } open)
        {
            if (open.OwnerId == owner.Id)
            {
                return AssignResult.Refused(StatusCodes.Status409Conflict, $"Device {device.Serial} is already assigned to owner {owner.Id} (assignment {open.Id}).");
            }

            open.To = from;
            // The open assignment is closed first: the unique index allows one open assignment per device.
            await db.SaveChangesAsync(cancellationToken);
        }

        var assignment = new Assignment { DeviceId = device.Id, OwnerId = owner.Id, From = from, AssignedBy = by, Note = note };
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
}

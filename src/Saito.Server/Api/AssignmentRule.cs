using System.Security.Claims;
using Saito.Server.Dashboard;

namespace Saito.Server.Api;

/// <summary>Who changes an assignment, as <see cref="AssignmentRule"/> sees them.</summary>
public enum AssignmentCallerKind
{
    /// <summary>May do anything, back-dating included (correcting history is theirs).</summary>
    Admin,

    /// <summary>Sees vitals by roster (a teacher): acts only for students on the classes they are listed on.</summary>
    Roster,

    /// <summary>Sees no vitals (ops): acts for any owner, but like a teacher never in the past nor across classes back to back.</summary>
    Ops,
}

/// <summary>The caller of an assignment change: their kind, account id (for rosters) and name (for the record).</summary>
public sealed record AssignmentCaller(AssignmentCallerKind Kind, int? UserId, string Name)
{
    public static AssignmentCaller Of(ClaimsPrincipal user) => new(
        DashboardAccess.IsAdmin(user) ? AssignmentCallerKind.Admin : DashboardAccess.SeesVitals(user) ? AssignmentCallerKind.Roster : AssignmentCallerKind.Ops,
        DashboardAccess.UserId(user), DashboardAccess.UserName(user));
}

/// <summary>An owner an assignment change touches: whether the caller may act for them, and the classes they are on.</summary>
public sealed record AssignmentParty(int OwnerId, bool CallerMayActFor, IReadOnlyCollection<int> Classes);

/// <summary>An earlier assignment of the device that a new one would follow: its owner, and when it ended (null: open, ended by the new one).</summary>
public sealed record PreviousAssignment(AssignmentParty Owner, DateTimeOffset? To);

/// <summary>
/// The one rule for who may give a device to an owner or end an assignment, for <c>POST /api/assignments</c>,
/// <c>POST /api/assignments/{id}/end</c> and the devices page alike. An owner's readings are those of each device while
/// it was assigned to them, so whoever moves an assignment's bounds moves readings between students: the rule makes sure
/// that a non-admin's change never gives an owner readings taken while the device was another student's whom the caller,
/// or the new owner's class, may not see (issue 32, item 1). Pure: <see cref="DeviceAssignments"/> gathers the facts.
/// <list type="bullet">
/// <item>Admins may do anything (history is theirs to correct).</item>
/// <item>No one else starts or ends an assignment before now: the past's readings keep the owner they had.</item>
/// <item>A teacher acts only for students on the rosters of their classes: the new owner, and the owner whose
/// assignment ends (closed by the new one, or ended by hand). Ops, who see no vitals, act for any owner.</item>
/// <item>A device does not pass back to back between owners who share no class unless an admin does it: a new
/// assignment starts at least <c>Ingestion:MaxFutureSkewSeconds</c> after the device's last assignment to an owner of
/// another class ended, because readings stamped up to that far ahead of the clock may still be that owner's.</item>
/// </list>
/// </summary>
public static class AssignmentRule
{
    /// <summary>
    /// Why <paramref name="caller"/> may not give the device to <paramref name="owner"/> from <paramref name="from"/>, or
    /// null when they may. <paramref name="recent"/>: the device's assignments to other owners that are open or ended
    /// less than <paramref name="skew"/> (<c>Ingestion:MaxFutureSkewSeconds</c>) before <paramref name="from"/>.
    /// </summary>
    public static string? MayStart(AssignmentCaller caller, DateTimeOffset now, TimeSpan skew, DateTimeOffset from, AssignmentParty owner, IReadOnlyList<PreviousAssignment> recent)
    {
        ArgumentNullException.ThrowIfNull(caller);
        ArgumentNullException.ThrowIfNull(owner);
        ArgumentNullException.ThrowIfNull(recent);
        if (caller.Kind == AssignmentCallerKind.Admin)
        {
            return null;
        }

        if (from < now)
        {
            return $"Only an admin starts an assignment in the past ({from:O}): it would give owner {owner.OwnerId} the readings the device took before. Leave from out to start now.";
        }

        if (!owner.CallerMayActFor)
        {
            return NotYours(owner.OwnerId);
        }

        foreach (var previous in recent)
        {
            if (!previous.Owner.CallerMayActFor)
            {
                return NotYours(previous.Owner.OwnerId);
            }

            if (!previous.Owner.Classes.Intersect(owner.Classes).Any())
            {
                // An open assignment stays in the way whatever the start: say to end it first, not a time that fails too.
                string then = previous.To is { } ended
                    ? $"assign it from {ended + skew:O} on"
                    : "end that assignment first, then assign it from its end plus Ingestion:MaxFutureSkewSeconds";
                return $"The device is (or was until {previous.To:O}) owner {previous.Owner.OwnerId}'s, who shares no class with owner {owner.OwnerId}: " +
                    $"an admin hands it over between classes, or {then} (readings stamped up to Ingestion:MaxFutureSkewSeconds ahead may still be the other student's).";
            }
        }

        return null;
    }

    /// <summary>Why <paramref name="caller"/> may not end <paramref name="owner"/>'s assignment at <paramref name="to"/>, or null when they may.</summary>
    public static string? MayEnd(AssignmentCaller caller, DateTimeOffset now, DateTimeOffset to, AssignmentParty owner)
    {
        ArgumentNullException.ThrowIfNull(caller);
        ArgumentNullException.ThrowIfNull(owner);
        if (caller.Kind == AssignmentCallerKind.Admin)
        {
            return null;
        }

        if (to < now)
        {
            return $"Only an admin ends an assignment in the past ({to:O}): the readings after it would belong to no one, or to whoever is given the device next. Leave to out to end it now.";
        }

        return owner.CallerMayActFor ? null : NotYours(owner.OwnerId);
    }

    private static string NotYours(int ownerId) => $"Owner {ownerId} is not on the roster of a class you are listed on: an admin assigns this device.";
}

using System.Globalization;
using System.Security.Claims;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Readings;
using Saito.Registry.Model;

namespace Saito.Server.Dashboard;

/// <summary>
/// Who may see which class and student (docs/dashboard.md, "Who sees what"): admins every class; teachers and aides
/// the classes they are listed on (<c>class_staff</c>); ops no vitals at all. Blood pressure: admins and teachers,
/// aides only with <see cref="DashboardOptions.AidesSeeBloodPressure"/>.
/// </summary>
public sealed class DashboardAccess(IOptions<DashboardOptions> options)
{
    public static bool IsAdmin(ClaimsPrincipal user) => user.IsInRole(StaffRoles.Admin);

    /// <summary>Whether this user sees vitals at all (admin, teacher, aide).</summary>
    public static bool SeesVitals(ClaimsPrincipal user) =>
        user.IsInRole(StaffRoles.Admin) || user.IsInRole(StaffRoles.Teacher) || user.IsInRole(StaffRoles.Aide);

    public bool SeesBloodPressure(ClaimsPrincipal user)
    {
        ArgumentNullException.ThrowIfNull(user);
        return user.IsInRole(StaffRoles.Admin) || user.IsInRole(StaffRoles.Teacher)
            || (user.IsInRole(StaffRoles.Aide) && options.Value.AidesSeeBloodPressure);
    }

    /// <summary>The values <see cref="SeesBloodPressure"/> governs, wherever readings are sent.</summary>
    public static bool IsBloodPressure(ValueField field) => field is ValueField.Systolic or ValueField.Diastolic;

    public static int? UserId(ClaimsPrincipal user) =>
        int.TryParse(user.FindFirstValue(ClaimTypes.NameIdentifier), NumberStyles.None, CultureInfo.InvariantCulture, out int id) ? id : null;

    public static string UserName(ClaimsPrincipal user) => user.Identity?.Name ?? "?";

    /// <summary>The classes this user may watch: all for admins, else the ones they are listed on.</summary>
    public static async Task<List<int>> ClassesAsync(RegistryDbContext db, ClaimsPrincipal user, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        if (!SeesVitals(user))
        {
            return [];
        }

        if (IsAdmin(user))
        {
            return await db.Classes.Select(c => c.Id).ToListAsync(cancellationToken);
        }

        int? id = UserId(user);
        return await db.ClassStaff.Where(s => s.UserId == id).Select(s => s.ClassId).ToListAsync(cancellationToken);
    }

    public static async Task<bool> CanSeeClassAsync(RegistryDbContext db, ClaimsPrincipal user, int classId, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        if (!SeesVitals(user))
        {
            return false;
        }

        if (IsAdmin(user))
        {
            return await db.Classes.AnyAsync(c => c.Id == classId, cancellationToken);
        }

        int? id = UserId(user);
        return await db.ClassStaff.AnyAsync(s => s.UserId == id && s.ClassId == classId, cancellationToken);
    }

    /// <summary>Whether <paramref name="ownerId"/> is on the roster of a class <paramref name="user"/> is listed on (as staff).</summary>
    public static async Task<bool> IsOnCallersRosterAsync(RegistryDbContext db, ClaimsPrincipal user, int ownerId, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        int? id = UserId(user);
        return await db.RosterEntries.AnyAsync(r => r.OwnerId == ownerId && db.ClassStaff.Any(s => s.ClassId == r.ClassId && s.UserId == id), cancellationToken);
    }

    /// <summary>A student's vitals: admins any student; teachers and aides those on the roster of a class they are listed on.</summary>
    public static async Task<bool> CanSeeStudentAsync(RegistryDbContext db, ClaimsPrincipal user, int ownerId, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        if (!SeesVitals(user))
        {
            return false;
        }

        if (IsAdmin(user))
        {
            return await db.Owners.AnyAsync(o => o.Id == ownerId, cancellationToken);
        }

        return await IsOnCallersRosterAsync(db, user, ownerId, cancellationToken);
    }
}

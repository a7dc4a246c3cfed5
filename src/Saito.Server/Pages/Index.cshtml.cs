using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Saito.Live.Classroom;
using Saito.Registry.Model;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages;

/// <summary>The start page: the classes this member of staff may watch. Ops (no vitals) go to the devices page.</summary>
[Authorize(AuthenticationSchemes = PageAuth.Scheme)]
public sealed class IndexModel(RegistryDbContext db, LiveClassroom live) : PageModel
{
    public IReadOnlyList<LiveClass> Classes { get; private set; } = [];

    /// <summary>Open alerts escalated to this user's role (teachers: level 1 and up in their classes; admins: level 2, every class).</summary>
    public IReadOnlyList<AlertView> Escalated { get; private set; } = [];

    public async Task<IActionResult> OnGetAsync(CancellationToken cancellationToken)
    {
        if (!DashboardAccess.SeesVitals(User))
        {
            return User.IsInRole(StaffRoles.Ops) ? Redirect("/devices") : Redirect("/denied");
        }

        var ids = await DashboardAccess.ClassesAsync(db, User, cancellationToken);
        var registry = live.Registry;
        Classes = [.. ids.Select(id => registry.Classes.GetValueOrDefault(id)).OfType<LiveClass>().OrderBy(c => c.Name, StringComparer.Ordinal)];
        int level = User.IsInRole(StaffRoles.Admin) ? Saito.Live.Alerts.AlertLevels.Admin
            : User.IsInRole(StaffRoles.Teacher) ? Saito.Live.Alerts.AlertLevels.Teacher : int.MaxValue;
        var mine = Classes.SelectMany(c => c.Roster).ToHashSet();
        Escalated = [.. live.ActiveAlerts.Where(a => a.Level >= level && a.AcknowledgedBy is null && mine.Contains(a.OwnerId))];
        return Page();
    }
}

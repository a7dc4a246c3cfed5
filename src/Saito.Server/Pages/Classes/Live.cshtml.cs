using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Saito.Live.Classroom;
using Saito.Server.Api;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages.Classes;

/// <summary>The live class: a tile per student and the alert banner (admins; teachers and aides listed on the class).</summary>
[Authorize(Policy = ApiPolicies.ViewLive, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class LiveModel(RegistryDbContext db, LiveClassroom live) : PageModel
{
    public LiveClass Class { get; private set; } = null!;

    public async Task<IActionResult> OnGetAsync(int id, CancellationToken cancellationToken)
    {
        if (!await DashboardAccess.CanSeeClassAsync(db, User, id, cancellationToken))
        {
            return Redirect("/denied");
        }

        if (!live.Registry.Classes.TryGetValue(id, out var c))
        {
            return NotFound();
        }

        Class = c;
        return Page();
    }
}

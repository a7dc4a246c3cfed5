using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Microsoft.EntityFrameworkCore;
using Saito.Server.Api;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages.Students;

/// <summary>
/// A student's page: charts of heart rate, skin temperature, sway and seat pressure (blood pressure for those who see
/// it) over the session running now or one picked from the recent sessions of their classes, with the alerts marked.
/// The charts come from <c>GET /api/students/{id}/chart</c> (<see cref="StudentCharts"/>), which audits the view.
/// </summary>
[Authorize(Policy = ApiPolicies.ViewLive, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class StudentModel(RegistryDbContext db, LiveClassroom live, DashboardAccess access, TimeProvider time) : PageModel
{
    /// <summary>Recent sessions listed, at most.</summary>
    public const int RecentSessions = 20;

    public int OwnerId { get; private set; }

    public string Name { get; private set; } = "";

    public string? ExternalRef { get; private set; }

    public bool SeesBloodPressure { get; private set; }

    public DateTimeOffset From { get; private set; }

    public DateTimeOffset To { get; private set; }

    /// <summary>The session charted, if one is (picked, or running now).</summary>
    public int? SessionId { get; private set; }

    public string RangeLabel { get; private set; } = "";

    public IReadOnlyList<SessionLink> Sessions { get; private set; } = [];

    public async Task<IActionResult> OnGetAsync(int id, int? session, CancellationToken cancellationToken)
    {
        if (!await DashboardAccess.CanSeeStudentAsync(db, User, id, cancellationToken))
        {
            return Redirect("/denied");
        }

        var owner = await db.Owners.AsNoTracking().Where(o => o.Id == id).Select(o => new { o.DisplayName, o.ExternalRef }).FirstOrDefaultAsync(cancellationToken);
        if (owner is null)
        {
            return NotFound();
        }

        OwnerId = id;
        Name = owner.DisplayName;
        ExternalRef = owner.ExternalRef;
        SeesBloodPressure = access.SeesBloodPressure(User);
        var classes = db.RosterEntries.Where(r => r.OwnerId == id).Select(r => r.ClassId);
        var recent = await db.Sessions.AsNoTracking().Where(s => classes.Contains(s.ClassId))
            .OrderByDescending(s => s.StartsAt).Take(RecentSessions)
            .Select(s => new { s.Id, s.StartsAt, s.EndsAt, s.SchoolDate, ClassName = s.Class!.Name }).ToListAsync(cancellationToken);
        Sessions = recent.ConvertAll(s => new SessionLink(s.Id, s.ClassName, s.SchoolDate, s.StartsAt, s.EndsAt));

        var now = time.GetUtcNow();
        if (session is { } picked)
        {
            var chosen = Sessions.FirstOrDefault(s => s.Id == picked)
                ?? await db.Sessions.AsNoTracking().Where(s => s.Id == picked && classes.Contains(s.ClassId))
                    .Select(s => new SessionLink(s.Id, s.Class!.Name, s.SchoolDate, s.StartsAt, s.EndsAt)).FirstOrDefaultAsync(cancellationToken);
            if (chosen is null)
            {
                return NotFound();
            }

            (From, To, SessionId) = (chosen.StartsAt, chosen.EndsAt, chosen.Id);
            RangeLabel = $"{chosen.ClassName}, {chosen.SchoolDate:yyyy-MM-dd}";
        }
        else
        {
            (From, To) = StudentCharts.DefaultRangeOf(live.Registry, id, now);
            var running = live.Registry.Classes.Values.FirstOrDefault(c => c.Session is { } s && s.StartsAt == From && s.EndsAt == To && c.Roster.Contains(id));
            SessionId = running?.Session?.Id;
            RangeLabel = running is null ? "the last 2 hours" : $"{running.Name}, the session running now";
        }

        return Page();
    }
}

/// <summary>A session in the student's list: which class, which day, when.</summary>
public sealed record SessionLink(int Id, string ClassName, DateOnly SchoolDate, DateTimeOffset StartsAt, DateTimeOffset EndsAt);

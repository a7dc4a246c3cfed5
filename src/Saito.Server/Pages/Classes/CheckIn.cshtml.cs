using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.CheckIns;
using Saito.Registry.Hosting;
using Saito.Server.Api;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages.Classes;

/// <summary>
/// The check-in board for the start of class: the roster with each student's state today (checked in, left, not yet),
/// a large "Check in" or "Check out" button each, refreshed every 10 s by /static/checkin.js from <c>?handler=state</c>
/// so fingerprint check-ins appear without a reload.
/// </summary>
[Authorize(Policy = ApiPolicies.ViewLive, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class CheckInModel(RegistryDbContext db, CheckInService checkIns, LiveSignal signal, TimeProvider time, IOptions<SchoolOptions> school) : PageModel
{
    public int ClassId { get; private set; }

    public string ClassName { get; private set; } = "";

    public string? Room { get; private set; }

    public DateOnly Today { get; private set; }

    public IReadOnlyList<BoardRow> Rows { get; private set; } = [];

    /// <summary>What the last tap did (shown once, after its redirect; kept in TempData, not the URL, so no link can forge it).</summary>
    [TempData]
    public string? Done { get; set; }

    public SchoolTime Clock { get; private set; } = null!;

    public async Task<IActionResult> OnGetAsync(int id, CancellationToken cancellationToken)
    {
        if (!await LoadAsync(id, cancellationToken))
        {
            return Redirect("/denied");
        }

        return Page();
    }

    /// <summary>The board's state as JSON, for the 10 s refresh.</summary>
    public async Task<IActionResult> OnGetStateAsync(int id, CancellationToken cancellationToken)
    {
        if (!await LoadAsync(id, cancellationToken))
        {
            return StatusCode(StatusCodes.Status403Forbidden);
        }

        return new JsonResult(new BoardState(Today, Rows.Select(r => new BoardStateRow(r.OwnerId, r.State, r.StateText)).ToList()));
    }

    public Task<IActionResult> OnPostCheckInAsync(int id, int ownerId, CancellationToken cancellationToken) =>
        ChangeAsync(id, ownerId, checkIn: true, cancellationToken);

    public Task<IActionResult> OnPostCheckOutAsync(int id, int ownerId, CancellationToken cancellationToken) =>
        ChangeAsync(id, ownerId, checkIn: false, cancellationToken);

    private async Task<IActionResult> ChangeAsync(int id, int ownerId, bool checkIn, CancellationToken cancellationToken)
    {
        if (!await DashboardAccess.CanSeeClassAsync(db, User, id, cancellationToken))
        {
            return Redirect("/denied");
        }

        var name = await db.RosterEntries.AsNoTracking().Where(r => r.ClassId == id && r.OwnerId == ownerId).Select(r => r.Owner!.DisplayName).FirstOrDefaultAsync(cancellationToken);
        if (name is null)
        {
            Done = "⚠ That student is not on this class's roster.";
            return RedirectToPage(new { id });
        }

        var now = time.GetUtcNow();
        var result = checkIn
            ? await checkIns.CheckInAsync(ownerId, now, "staff:" + DashboardAccess.UserName(User), cancellationToken)
            : await checkIns.CheckOutAsync(ownerId, now, cancellationToken);
        signal.RegistryChanged();
        var clock = new SchoolTime(school.Value);
        string message = result.Outcome switch
        {
            CheckInOutcome.Recorded => $"✔ {name} checked in at {clock.Time(now)}.",
            CheckInOutcome.Returned => $"✔ {name} is back ({clock.Time(now)}).",
            CheckInOutcome.AlreadyCheckedIn => $"✔ {name} was already checked in.",
            CheckInOutcome.CheckedOut => $"↩ {name} checked out at {clock.Time(now)}.",
            CheckInOutcome.NotCheckedIn => $"ℹ {name} was not checked in, or has left already.",
            _ => $"⚠ {name} is no longer an active student.",
        };
        Done = message;
        return RedirectToPage(new { id });
    }

    private async Task<bool> LoadAsync(int id, CancellationToken cancellationToken)
    {
        if (!await DashboardAccess.CanSeeClassAsync(db, User, id, cancellationToken))
        {
            return false;
        }

        var c = await db.Classes.AsNoTracking().Where(x => x.Id == id).Select(x => new { x.Name, x.Room }).SingleAsync(cancellationToken);
        (ClassId, ClassName, Room) = (id, c.Name, c.Room);
        Clock = new SchoolTime(school.Value);
        Today = school.Value.SchoolDate(time.GetUtcNow());
        var today = Today;
        var roster = await db.RosterEntries.AsNoTracking().Where(r => r.ClassId == id && r.Owner!.Active)
            .Select(r => new { r.OwnerId, r.Owner!.DisplayName, r.Owner.ExternalRef }).ToListAsync(cancellationToken);
        var ids = roster.ConvertAll(r => r.OwnerId);
        var day = await db.CheckIns.AsNoTracking().Where(x => x.SchoolDate == today && ids.Contains(x.OwnerId))
            .Select(x => new { x.OwnerId, x.CheckedInAt, x.CheckedOutAt, x.Source }).ToListAsync(cancellationToken);
        Rows = [.. roster.OrderBy(r => r.DisplayName, StringComparer.CurrentCulture).Select(r =>
        {
            var x = day.FirstOrDefault(d => d.OwnerId == r.OwnerId);
            var (state, text) = x switch
            {
                null => (BoardRow.NotYet, "✖ Not yet"),
                { CheckedOutAt: { } left } => (BoardRow.Left, $"↩ Left at {Clock.Time(left)}"),
                _ => (BoardRow.In, $"✔ Checked in at {Clock.Time(x.CheckedInAt)}{(x.Source.StartsWith("reader:", StringComparison.Ordinal) ? " (fingerprint)" : "")}"),
            };
            return new BoardRow(r.OwnerId, r.DisplayName, r.ExternalRef, state, text);
        })];
        return true;
    }
}

/// <summary>A student on the board: <see cref="State"/> is <c>in</c>, <c>left</c> or <c>not-yet</c>; the text carries an icon and words.</summary>
public sealed record BoardRow(int OwnerId, string Name, string? ExternalRef, string State, string StateText)
{
    public const string In = "in";
    public const string Left = "left";
    public const string NotYet = "not-yet";
}

public sealed record BoardStateRow(int OwnerId, string State, string StateText);

public sealed record BoardState(DateOnly SchoolDate, IReadOnlyList<BoardStateRow> Students);

using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Live.Alerts;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Server.Api;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages;

/// <summary>
/// The alert history, newest first, of the students this user may see (<see cref="DashboardEndpoints.Visible"/>):
/// filters by class, student and school day; 100 a page.
/// </summary>
[Authorize(Policy = ApiPolicies.ViewLive, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class AlertsModel(RegistryDbContext db, IOptions<SchoolOptions> school) : HistoryPageModel(school)
{
    [BindProperty(SupportsGet = true, Name = "class")]
    public int? ClassId { get; set; }

    [BindProperty(SupportsGet = true, Name = "student")]
    public int? OwnerId { get; set; }

    public IReadOnlyList<Choice> Classes { get; private set; } = [];

    public IReadOnlyList<Choice> Students { get; private set; } = [];

    public IReadOnlyList<AlertLine> Alerts { get; private set; } = [];

    public async Task OnGetAsync(CancellationToken cancellationToken)
    {
        var classIds = await DashboardAccess.ClassesAsync(db, User, cancellationToken);
        Classes = await db.Classes.AsNoTracking().Where(c => classIds.Contains(c.Id)).OrderBy(c => c.Name)
            .Select(c => new Choice(c.Id, c.Name)).ToListAsync(cancellationToken);
        if (ClassId is { } picked && !classIds.Contains(picked))
        {
            ClassId = null;
        }

        var students = db.Owners.AsNoTracking().Where(o => o.Kind == OwnerKind.Student);
        if (!DashboardAccess.IsAdmin(User))
        {
            students = students.Where(o => db.RosterEntries.Any(r => r.OwnerId == o.Id && classIds.Contains(r.ClassId)));
        }

        if (ClassId is { } shown)
        {
            students = students.Where(o => db.RosterEntries.Any(r => r.OwnerId == o.Id && r.ClassId == shown));
        }

        Students = await students.OrderBy(o => o.DisplayName).Select(o => new Choice(o.Id, o.DisplayName)).ToListAsync(cancellationToken);

        var alerts = DashboardEndpoints.Visible(db, User, db.Alerts.AsNoTracking());
        if (ClassId is { } classId)
        {
            alerts = alerts.Where(a => a.ClassId == classId);
        }

        if (OwnerId is { } ownerId)
        {
            alerts = alerts.Where(a => a.OwnerId == ownerId);
        }

        alerts = alerts.Within(a => a.RaisedAt, Day?.From, Day?.To);

        await CountAsync(alerts, cancellationToken);
        var rows = await alerts.OrderByDescending(a => a.RaisedAt).ThenBy(a => a.Id)
            .Skip((PageNumber - 1) * PageSize).Take(PageSize)
            .Join(db.Owners.AsNoTracking(), a => a.OwnerId, o => o.Id, (a, o) => new { Alert = a, o.DisplayName })
            .ToListAsync(cancellationToken);
        var names = await db.Classes.AsNoTracking().Select(c => new { c.Id, c.Name }).ToDictionaryAsync(c => c.Id, c => c.Name, cancellationToken);
        Alerts = [.. rows.OrderByDescending(r => r.Alert.RaisedAt).Select(r => new AlertLine(r.Alert, r.DisplayName,
            r.Alert.ClassId is { } c ? names.GetValueOrDefault(c) : null))];
    }

    protected override IEnumerable<string> Filters()
    {
        if (ClassId is { } c)
        {
            yield return FormattableString.Invariant($"class={c}");
        }

        if (OwnerId is { } o)
        {
            yield return FormattableString.Invariant($"student={o}");
        }
    }

    /// <summary>Who an alert is for at a level (<see cref="AlertLevels"/>).</summary>
    public static string LevelName(int level) => level switch
    {
        AlertLevels.Aide => "aide (in the room)",
        AlertLevels.Teacher => "teacher",
        AlertLevels.Admin => "admin",
        _ => FormattableString.Invariant($"level {level}"),
    };
}

public sealed record Choice(int Id, string Name);

/// <summary>A history page (alerts, audit): a school day to filter by, 100 rows a page, and links to the other pages with the same filters.</summary>
public abstract class HistoryPageModel(IOptions<SchoolOptions> school) : PageModel
{
    public const int PageSize = 100;

    [BindProperty(SupportsGet = true)]
    public DateOnly? Date { get; set; }

    [BindProperty(SupportsGet = true, Name = "p")]
    public int PageNumber { get; set; } = 1;

    public int Total { get; private set; }

    public int Pages => Math.Max(1, (Total + PageSize - 1) / PageSize);

    public SchoolTime Clock { get; } = new(school.Value);

    /// <summary>The instants the picked school day begins and ends, if one is picked.</summary>
    protected (DateTimeOffset From, DateTimeOffset To)? Day => Date is { } d ? (Clock.StartOf(d), Clock.StartOf(d.AddDays(1))) : null;

    /// <summary>Counts the rows and keeps the page number in range.</summary>
    protected async Task CountAsync<T>(IQueryable<T> rows, CancellationToken cancellationToken)
    {
        Total = await rows.CountAsync(cancellationToken);
        PageNumber = Math.Clamp(PageNumber, 1, Pages);
    }

    /// <summary>The filters other than the day, as query-string pairs.</summary>
    protected abstract IEnumerable<string> Filters();

    /// <summary>The query string of page <paramref name="page"/> with the same filters.</summary>
    public string PageLink(int page)
    {
        var query = Filters().ToList();
        if (Date is { } d)
        {
            query.Add("date=" + d.ToString("yyyy-MM-dd", System.Globalization.CultureInfo.InvariantCulture));
        }

        query.Add(FormattableString.Invariant($"p={page}"));
        return "?" + string.Join("&", query);
    }
}

public sealed record AlertLine(AlertRecord Alert, string StudentName, string? ClassName);

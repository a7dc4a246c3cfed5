using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Server.Api;

namespace Saito.Server.Pages;

/// <summary>Who viewed whose vital signs (<c>vitals_view</c>), newest first; filters by student, member of staff and school day; 100 a page. Admins only.</summary>
[Authorize(Policy = ApiPolicies.ReadAudit, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class AuditModel(RegistryDbContext db, IOptions<SchoolOptions> school) : PageModel
{
    public const int PageSize = 100;

    [BindProperty(SupportsGet = true, Name = "student")]
    public int? OwnerId { get; set; }

    [BindProperty(SupportsGet = true, Name = "user")]
    public string? UserName { get; set; }

    [BindProperty(SupportsGet = true)]
    public DateOnly? Date { get; set; }

    [BindProperty(SupportsGet = true, Name = "p")]
    public int PageNumber { get; set; } = 1;

    public IReadOnlyList<Choice> Students { get; private set; } = [];

    public IReadOnlyList<string> Users { get; private set; } = [];

    public IReadOnlyList<AuditLine> Views { get; private set; } = [];

    public int Total { get; private set; }

    public int Pages => Math.Max(1, (Total + PageSize - 1) / PageSize);

    public SchoolTime Clock { get; private set; } = null!;

    public async Task OnGetAsync(CancellationToken cancellationToken)
    {
        Clock = new SchoolTime(school.Value);
        PageNumber = Math.Max(1, PageNumber);
        UserName = string.IsNullOrWhiteSpace(UserName) || UserName.Length > 256 ? null : UserName.Trim();
        var viewed = db.VitalsViews.AsNoTracking().Select(v => v.OwnerId).Distinct();
        Students = await db.Owners.AsNoTracking().Where(o => viewed.Contains(o.Id)).OrderBy(o => o.DisplayName)
            .Select(o => new Choice(o.Id, o.DisplayName)).ToListAsync(cancellationToken);
        Users = await db.VitalsViews.AsNoTracking().Select(v => v.UserName).Distinct().OrderBy(u => u).ToListAsync(cancellationToken);

        var views = db.VitalsViews.AsNoTracking();
        if (OwnerId is { } ownerId)
        {
            views = views.Where(v => v.OwnerId == ownerId);
        }

        if (UserName is { } user)
        {
            views = views.Where(v => v.UserName == user);
        }

        if (Date is { } date)
        {
            var from = Clock.StartOf(date);
            var to = Clock.StartOf(date.AddDays(1));
            views = views.Where(v => v.At >= from && v.At < to);
        }

        Total = await views.CountAsync(cancellationToken);
        PageNumber = Math.Min(PageNumber, Pages);
        var rows = await views.OrderByDescending(v => v.Id).Skip((PageNumber - 1) * PageSize).Take(PageSize)
            .Join(db.Owners.AsNoTracking(), v => v.OwnerId, o => o.Id, (v, o) => new AuditLine(v.Id, v.At, v.UserName, v.OwnerId, o.DisplayName, v.Via))
            .ToListAsync(cancellationToken);
        Views = [.. rows.OrderByDescending(r => r.Id)];
    }

    /// <summary>The query string of page <paramref name="page"/> with the same filters.</summary>
    public string PageLink(int page)
    {
        var query = new List<string>();
        if (OwnerId is { } o)
        {
            query.Add(FormattableString.Invariant($"student={o}"));
        }

        if (UserName is { } u)
        {
            query.Add("user=" + Uri.EscapeDataString(u));
        }

        if (Date is { } d)
        {
            query.Add("date=" + d.ToString("yyyy-MM-dd", System.Globalization.CultureInfo.InvariantCulture));
        }

        query.Add(FormattableString.Invariant($"p={page}"));
        return "?" + string.Join("&", query);
    }

    /// <summary>Where a view happened, in words.</summary>
    public static string ViaName(string via) => via switch
    {
        Dashboard.VitalsAudit.LiveClass => "live class",
        Dashboard.VitalsAudit.StudentPage => "student page",
        Dashboard.VitalsAudit.ReadingsApi => "readings API",
        _ => via,
    };
}

public sealed record AuditLine(long Id, DateTimeOffset At, string UserName, int OwnerId, string StudentName, string Via);

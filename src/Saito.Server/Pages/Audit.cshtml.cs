using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;
using Saito.Server.Api;

namespace Saito.Server.Pages;

/// <summary>Who viewed whose vital signs (<c>vitals_view</c>), newest first; filters by student, member of staff and school day; 100 a page. Admins only.</summary>
[Authorize(Policy = ApiPolicies.ReadAudit, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class AuditModel(RegistryDbContext db, IOptions<SchoolOptions> school) : HistoryPageModel(school)
{
    [BindProperty(SupportsGet = true, Name = "student")]
    public int? OwnerId { get; set; }

    [BindProperty(SupportsGet = true, Name = "user")]
    public string? UserName { get; set; }

    public IReadOnlyList<Choice> Students { get; private set; } = [];

    public IReadOnlyList<string> Users { get; private set; } = [];

    public IReadOnlyList<AuditLine> Views { get; private set; } = [];

    public async Task OnGetAsync(CancellationToken cancellationToken)
    {
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

        views = views.Within(v => v.At, Day?.From, Day?.To);

        await CountAsync(views, cancellationToken);
        var rows = await views.OrderByDescending(v => v.Id).Skip((PageNumber - 1) * PageSize).Take(PageSize)
            .Join(db.Owners.AsNoTracking(), v => v.OwnerId, o => o.Id, (v, o) => new AuditLine(v.Id, v.At, v.UserName, v.OwnerId, o.DisplayName, v.Via))
            .ToListAsync(cancellationToken);
        Views = [.. rows.OrderByDescending(r => r.Id)];
    }

    protected override IEnumerable<string> Filters()
    {
        if (OwnerId is { } o)
        {
            yield return FormattableString.Invariant($"student={o}");
        }

        if (UserName is { } u)
        {
            yield return "user=" + Uri.EscapeDataString(u);
        }
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

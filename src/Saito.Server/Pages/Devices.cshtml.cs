using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Mvc;
using Microsoft.AspNetCore.Mvc.RazorPages;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Ingestion;
using Saito.Registry.Hosting;
using Saito.Registry.Model;
using Saito.Server.Api;
using Saito.Server.Dashboard;

namespace Saito.Server.Pages;

/// <summary>
/// Devices to sort out: new devices (not retired, no open assignment) assigned to a student in two taps ("Assign…",
/// then the student's name), and assigned devices gone silent. Admins, teachers (students of their classes) and ops
/// (no vitals are shown here).
/// </summary>
[Authorize(Policy = ApiPolicies.AssignDevices, AuthenticationSchemes = PageAuth.Scheme)]
public sealed class DevicesModel(RegistryDbContext db, LiveSignal signal, TimeProvider time, IOptions<SchoolOptions> school, IOptions<IngestionOptions> ingestion) : PageModel
{
    /// <summary>New devices listed, at most.</summary>
    public const int MaxNew = 200;

    /// <summary>Silent devices listed, at most.</summary>
    public const int MaxSilent = 50;

    /// <summary>An assigned device that has sent nothing for this long is listed as silent.</summary>
    public static readonly TimeSpan SilentAfter = TimeSpan.FromMinutes(2);

    public IReadOnlyList<NewDevice> NewDevices { get; private set; } = [];

    public int NewTotal { get; private set; }

    public IReadOnlyList<SilentDevice> Silent { get; private set; } = [];

    public int SilentTotal { get; private set; }

    /// <summary>The device being assigned (after "Assign…"), and the students to pick from.</summary>
    public NewDevice? Assigning { get; private set; }

    public IReadOnlyList<StudentChoice> Students { get; private set; } = [];

    /// <summary>What the last POST did (shown once, after its redirect; kept in TempData, not the URL, so no link can forge it).</summary>
    [TempData]
    public string? Done { get; set; }

    [TempData]
    public string? Problem { get; set; }

    public SchoolTime Clock { get; private set; } = null!;

    public async Task<IActionResult> OnGetAsync(int? assign, CancellationToken cancellationToken)
    {
        Clock = new SchoolTime(school.Value);
        var now = time.GetUtcNow();
        var fresh = db.Devices.AsNoTracking().Where(d => d.RetiredAt == null && !d.Assignments.Any(a => a.To == null));
        NewTotal = await fresh.CountAsync(cancellationToken);
        NewDevices = await fresh.OrderByDescending(d => d.FirstSeen).ThenBy(d => d.Serial).Take(MaxNew)
            .Select(d => new NewDevice(d.Id, d.Serial, d.Kind, d.Hub, d.FirstSeen, d.LastSeen)).ToListAsync(cancellationToken);

        var since = now - SilentAfter;
        var silent = db.Assignments.AsNoTracking()
            .Where(a => a.To == null && a.Device!.RetiredAt == null && (a.Device.LastSeen == null || a.Device.LastSeen < since));
        SilentTotal = await silent.CountAsync(cancellationToken);
        Silent = await silent.OrderByDescending(a => a.Device!.LastSeen).ThenBy(a => a.Device!.Serial).Take(MaxSilent)
            .Select(a => new SilentDevice(a.DeviceId, a.Device!.Serial, a.Device.Kind, a.Device.Hub, a.Device.LastSeen, a.OwnerId, a.Owner!.DisplayName))
            .ToListAsync(cancellationToken);

        if (assign is { } deviceId)
        {
            Assigning = NewDevices.FirstOrDefault(d => d.Id == deviceId)
                ?? await fresh.Where(d => d.Id == deviceId).Select(d => new NewDevice(d.Id, d.Serial, d.Kind, d.Hub, d.FirstSeen, d.LastSeen)).FirstOrDefaultAsync(cancellationToken);
            if (Assigning is null)
            {
                Problem ??= "That device is no longer waiting to be sorted out (assigned or retired meanwhile).";
            }
            else
            {
                Students = await StudentsAsync(cancellationToken);
            }
        }

        return Page();
    }

    /// <summary>
    /// The second tap: assign the device to the student from now, by the API's rule (<see cref="AssignmentRule"/>): a
    /// teacher may not take a device from a student of another class, whatever the form posted.
    /// </summary>
    public async Task<IActionResult> OnPostAssignAsync(int deviceId, int ownerId, CancellationToken cancellationToken)
    {
        var outcome = await DeviceAssignments.AssignAsync(db, AssignmentCaller.Of(User), deviceId, ownerId, null, time.GetUtcNow(),
            TimeSpan.FromSeconds(ingestion.Value.MaxFutureSkewSeconds), null, cancellationToken);
        if (outcome is not { Device: { } device, Owner: { } owner })
        {
            Problem = outcome.Problem;
            return RedirectToPage();
        }

        signal.RegistryChanged();
        Done = $"{device.Serial} is now {owner.DisplayName}'s.";
        return RedirectToPage();
    }

    private IQueryable<Owner> Eligible()
    {
        var students = db.Owners.AsNoTracking().Where(o => o.Active && o.Kind == OwnerKind.Student);
        // The students offered are those AssignmentRule lets this caller assign to.
        if (AssignmentCaller.Of(User).Kind != AssignmentCallerKind.Roster)
        {
            return students;
        }

        int? id = DashboardAccess.UserId(User);
        return students.Where(o => db.RosterEntries.Any(r => r.OwnerId == o.Id && db.ClassStaff.Any(s => s.ClassId == r.ClassId && s.UserId == id)));
    }

    private async Task<List<StudentChoice>> StudentsAsync(CancellationToken cancellationToken)
    {
        var owners = await Eligible().OrderBy(o => o.DisplayName).Select(o => new { o.Id, o.DisplayName, o.ExternalRef }).ToListAsync(cancellationToken);
        var ids = owners.ConvertAll(o => o.Id);
        var classes = await db.RosterEntries.AsNoTracking().Where(r => ids.Contains(r.OwnerId))
            .Join(db.Classes.AsNoTracking(), r => r.ClassId, c => c.Id, (r, c) => new { r.OwnerId, c.Name }).ToListAsync(cancellationToken);
        var devices = await db.Assignments.AsNoTracking().Where(a => a.To == null && ids.Contains(a.OwnerId))
            .Select(a => new { a.OwnerId, a.Device!.Serial }).ToListAsync(cancellationToken);
        return owners.ConvertAll(o => new StudentChoice(o.Id, o.DisplayName, o.ExternalRef,
            string.Join(", ", classes.Where(c => c.OwnerId == o.Id).Select(c => c.Name).Order(StringComparer.Ordinal)),
            string.Join(", ", devices.Where(d => d.OwnerId == o.Id).Select(d => d.Serial).Order(StringComparer.Ordinal))));
    }
}

public sealed record NewDevice(int Id, string Serial, string? Kind, string? Hub, DateTimeOffset FirstSeen, DateTimeOffset? LastSeen);

public sealed record SilentDevice(int Id, string Serial, string? Kind, string? Hub, DateTimeOffset? LastSeen, int OwnerId, string OwnerName);

/// <summary>A student to tap: name, reference, classes and the devices they already have.</summary>
public sealed record StudentChoice(int Id, string Name, string? ExternalRef, string Classes, string Devices);

/// <summary>Times on the staff pages, in the school's time zone.</summary>
public sealed class SchoolTime(SchoolOptions school)
{
    private readonly TimeZoneInfo _zone = school.Zone;

    public string ZoneName { get; } = school.TimeZone;

    public DateTimeOffset Local(DateTimeOffset t) => TimeZoneInfo.ConvertTime(t, _zone);

    public string Time(DateTimeOffset t) => Local(t).ToString("HH:mm", System.Globalization.CultureInfo.InvariantCulture);

    public string Full(DateTimeOffset t) => Local(t).ToString("yyyy-MM-dd HH:mm:ss", System.Globalization.CultureInfo.InvariantCulture);

    public string Full(DateTimeOffset? t, string none) => t is { } v ? Full(v) : none;

    public static string Iso(DateTimeOffset t) => t.UtcDateTime.ToString("yyyy-MM-ddTHH:mm:ssZ", System.Globalization.CultureInfo.InvariantCulture);

    /// <summary>The instant a school-local date begins.</summary>
    public DateTimeOffset StartOf(DateOnly date)
    {
        var local = date.ToDateTime(TimeOnly.MinValue, DateTimeKind.Unspecified);
        return new DateTimeOffset(local, _zone.GetUtcOffset(local));
    }
}

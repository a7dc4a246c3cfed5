using Microsoft.EntityFrameworkCore;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Server.Dashboard;

public sealed record LiveClass(int Id, string Name, string? Room, IReadOnlyList<int> Roster, ClassSession? Session);

public sealed record LiveStudent(int OwnerId, string Name, string? ExternalRef, IReadOnlyList<int> Classes, CheckIn? CheckIn, OwnerAlertThreshold? Thresholds);

/// <summary>A device a student has now, since <paramref name="From"/> (UTC): readings taken before then are not theirs.</summary>
public sealed record LiveDevice(int DeviceId, string Serial, string? Kind, int OwnerId, DateTime From);

/// <summary>
/// Who is where, read from the registry: the classes, their rosters and the session running now, today's
/// check-ins, the devices each student has now, and clinicians' thresholds. Small tables: read whole, again every
/// <see cref="DashboardOptions.RefreshSeconds"/> and at once after a change made through Saito.
/// </summary>
public sealed class LiveRegistry
{
    public static LiveRegistry Empty { get; } = new([], [], []);

    private LiveRegistry(Dictionary<int, LiveClass> classes, Dictionary<int, LiveStudent> students, Dictionary<int, LiveDevice> devices)
    {
        Classes = classes;
        Students = students;
        Devices = devices;
    }

    public IReadOnlyDictionary<int, LiveClass> Classes { get; }

    public IReadOnlyDictionary<int, LiveStudent> Students { get; }

    /// <summary>Devices assigned now to a student on some roster, by device id.</summary>
    public IReadOnlyDictionary<int, LiveDevice> Devices { get; }

    public static async Task<LiveRegistry> LoadAsync(RegistryDbContext db, SchoolOptions school, DateTimeOffset now, CancellationToken cancellationToken)
    {
        var classes = await db.Classes.AsNoTracking().Select(c => new { c.Id, c.Name, c.Room }).ToListAsync(cancellationToken);
        var roster = await db.RosterEntries.AsNoTracking().Select(r => new { r.ClassId, r.OwnerId }).ToListAsync(cancellationToken);
        var sessions = await db.Sessions.AsNoTracking().Where(s => s.StartsAt <= now && s.EndsAt > now).ToListAsync(cancellationToken);
        var studentIds = roster.Select(r => r.OwnerId).Distinct().ToList();
        var owners = await db.Owners.AsNoTracking().Where(o => studentIds.Contains(o.Id) && o.Active)
            .Select(o => new { o.Id, o.DisplayName, o.ExternalRef }).ToListAsync(cancellationToken);
        var today = school.SchoolDate(now);
        var checkIns = await db.CheckIns.AsNoTracking().Where(c => c.SchoolDate == today).ToListAsync(cancellationToken);
        var thresholds = await db.AlertThresholds.AsNoTracking().ToListAsync(cancellationToken);
        var devices = await db.Assignments.AsNoTracking().Where(a => a.To == null && studentIds.Contains(a.OwnerId))
            .Select(a => new { a.DeviceId, a.OwnerId, a.From, a.Device!.Serial, a.Device.Kind, a.Device.RetiredAt }).ToListAsync(cancellationToken);

        var rosterByClass = roster.GroupBy(r => r.ClassId).ToDictionary(g => g.Key, g => (IReadOnlyList<int>)[.. g.Select(r => r.OwnerId)]);
        var classesByStudent = roster.GroupBy(r => r.OwnerId).ToDictionary(g => g.Key, g => (IReadOnlyList<int>)[.. g.Select(r => r.ClassId)]);
        var checkInByOwner = checkIns.ToDictionary(c => c.OwnerId);
        var thresholdByOwner = thresholds.ToDictionary(t => t.OwnerId);
        var live = new Dictionary<int, LiveClass>();
        foreach (var c in classes)
        {
            var session = sessions.Where(s => s.ClassId == c.Id).OrderBy(s => s.StartsAt).FirstOrDefault();
            live[c.Id] = new LiveClass(c.Id, c.Name, c.Room, rosterByClass.GetValueOrDefault(c.Id) ?? [], session);
        }

        var students = owners.ToDictionary(o => o.Id, o => new LiveStudent(o.Id, o.DisplayName, o.ExternalRef,
            classesByStudent.GetValueOrDefault(o.Id) ?? [], checkInByOwner.GetValueOrDefault(o.Id), thresholdByOwner.GetValueOrDefault(o.Id)));
        var byDevice = devices.Where(d => d.RetiredAt == null && students.ContainsKey(d.OwnerId))
            .ToDictionary(d => d.DeviceId, d => new LiveDevice(d.DeviceId, d.Serial, d.Kind, d.OwnerId, d.From.UtcDateTime));
        return new LiveRegistry(live, students, byDevice);
    }
}

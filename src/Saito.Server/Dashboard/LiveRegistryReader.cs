using Microsoft.EntityFrameworkCore;
using Saito.Live.Alerts;
using Saito.Live.Classroom;
using Saito.Registry.Hosting;

namespace Saito.Server.Dashboard;

/// <summary>
/// Reads <see cref="LiveRegistry"/> from the registry: small tables, read whole, again every
/// <see cref="DashboardOptions.RefreshSeconds"/> and at once after a change made through Saito.
/// </summary>
public static class LiveRegistryReader
{
    public static async Task<LiveRegistry> LoadAsync(RegistryDbContext db, SchoolOptions school, DateTimeOffset now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(school);
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
        var checkInByOwner = checkIns.ToDictionary(c => c.OwnerId, c => new LiveCheckIn(c.CheckedInAt, c.CheckedOutAt));
        var thresholdByOwner = thresholds.ToDictionary(t => t.OwnerId, t => new AlertThresholds
        {
            RestingHeartRate = t.RestingHeartRate,
            TachycardiaFactor = t.TachycardiaFactor,
            HeartRateMax = t.HeartRateMax,
            HeartRateMin = t.HeartRateMin,
            OverheatCelsius = t.OverheatCelsius,
        });
        var live = new Dictionary<int, LiveClass>();
        foreach (var c in classes)
        {
            var session = sessions.Where(s => s.ClassId == c.Id).OrderBy(s => s.StartsAt).FirstOrDefault();
            live[c.Id] = new LiveClass(c.Id, c.Name, c.Room, rosterByClass.GetValueOrDefault(c.Id) ?? [],
                session is null ? null : new LiveSession(session.Id, session.StartsAt, session.EndsAt));
        }

        var students = owners.ToDictionary(o => o.Id, o => new LiveStudent(o.Id, o.DisplayName, o.ExternalRef,
            classesByStudent.GetValueOrDefault(o.Id) ?? [], checkInByOwner.GetValueOrDefault(o.Id), thresholdByOwner.GetValueOrDefault(o.Id) ?? AlertThresholds.None));
        var byDevice = devices.Where(d => d.RetiredAt == null && students.ContainsKey(d.OwnerId))
            .ToDictionary(d => d.DeviceId, d => new LiveDevice(d.DeviceId, d.Serial, d.Kind, d.OwnerId, d.From.UtcDateTime));
        return new LiveRegistry(live, students, byDevice);
    }
}

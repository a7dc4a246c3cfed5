using Microsoft.EntityFrameworkCore;
using Saito.Registry.Data;
using Saito.Registry.Model;

namespace Saito.Registry.Timetable;

/// <summary>A class whose timetable could not be planned, and why (the slots need fixing by staff).</summary>
public sealed record RejectedTimetable(int ClassId, string ClassName, IReadOnlyList<string> Problems);

/// <summary>What one planning round did: the sessions it added, and the classes it left alone because their slots are invalid.</summary>
public sealed record SessionPlan(IReadOnlyList<ClassSession> Added, IReadOnlyList<RejectedTimetable> Rejected);

/// <summary>
/// Turns every class's timetable into <see cref="ClassSession"/> rows for a range of school-local dates. Idempotent:
/// a session already stored for the same class and start is kept as it is (so running twice adds nothing, and a
/// session staff moved or added by hand is not touched), and sessions are never deleted (a slot removed later leaves
/// the sessions already planned from it; removing those is a decision for staff).
/// </summary>
public sealed class SessionPlanner(TimeZoneInfo zone)
{
    public TimeZoneInfo Zone { get; } = zone ?? throw new ArgumentNullException(nameof(zone));

    /// <summary>Adds the missing sessions of every class for <paramref name="from"/> to <paramref name="to"/> (both included) and saves them.</summary>
    public async Task<SessionPlan> PlanAsync(RegistryDbContext db, DateOnly from, DateOnly to, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        var classes = await db.Classes.AsNoTracking().Include(c => c.Slots).OrderBy(c => c.Id).ToListAsync(cancellationToken);
        var planned = new List<PlannedSession>();
        var rejected = new List<RejectedTimetable>();
        foreach (var schoolClass in classes)
        {
            var problems = Timetable.Problems(schoolClass.Slots);
            if (problems.Count > 0)
            {
                rejected.Add(new RejectedTimetable(schoolClass.Id, schoolClass.Name, problems));
                continue;
            }

            planned.AddRange(Timetable.Sessions(schoolClass.Slots, from, to, Zone));
        }

        if (planned.Count == 0)
        {
            return new SessionPlan([], rejected);
        }

        var first = planned.Min(p => p.StartsAt);
        var last = planned.Max(p => p.StartsAt);
        var stored = await db.Sessions.AsNoTracking()
            .Where(s => s.StartsAt >= first && s.StartsAt <= last)
            .Select(s => new { s.ClassId, s.StartsAt })
            .ToListAsync(cancellationToken);
        var taken = stored.Select(s => (s.ClassId, s.StartsAt.UtcTicks)).ToHashSet();

        var added = planned
            .Where(p => !taken.Contains((p.ClassId, p.StartsAt.UtcTicks)))
            .Select(p => new ClassSession { ClassId = p.ClassId, SchoolDate = p.SchoolDate, StartsAt = p.StartsAt, EndsAt = p.EndsAt })
            .ToList();
        if (added.Count > 0)
        {
            db.Sessions.AddRange(added);
            await db.SaveChangesAsync(cancellationToken);
        }

        return new SessionPlan(added, rejected);
    }
}

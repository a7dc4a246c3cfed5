using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Registry.Notices;

/// <summary>
/// Every <c>Notices:PollSeconds</c>, finds the sessions whose absence check is due (started at least
/// <c>Notices:AbsenceGraceMinutes</c> ago, not checked yet) and, for each student on the roster with no check-in on
/// the session's school day, queues a not-arrived notice to each contact who wants one. The notices and the
/// session's <see cref="ClassSession.AbsencesCheckedAt"/> are saved together, so a session is checked once.
/// A session that had already ended when Saito got to it (Saito was down) is marked checked without notices:
/// families are never told about yesterday after a restart.
/// </summary>
public sealed partial class AbsenceWatcher(
    RegistryContextFactory contexts,
    RegistryMigrator migrator,
    GuardianNotices notices,
    NoticeSignal signal,
    IOptions<NoticeOptions> options,
    TimeProvider time,
    ILogger<AbsenceWatcher> logger) : NoticeLoop(migrator, time, logger)
{
    /// <summary>Sessions checked per pass at most (the next pass takes the rest).</summary>
    internal const int BatchSize = 100;

    private readonly NoticeOptions _options = options.Value;

    protected override string Name => "Absence watcher";

    internal override async Task<int> RunOnceAsync(CancellationToken cancellationToken)
    {
        var now = Time.GetUtcNow();
        var dueBefore = now - TimeSpan.FromMinutes(_options.AbsenceGraceMinutes);
        await using var db = contexts.Create();
        var sessions = await db.Sessions
            .Where(s => s.AbsencesCheckedAt == null && s.StartsAt <= dueBefore)
            .OrderBy(s => s.StartsAt)
            .Take(BatchSize)
            .ToListAsync(cancellationToken);
        if (sessions.Count == 0)
        {
            return 0;
        }

        int queued = 0;
        foreach (var session in sessions)
        {
            session.AbsencesCheckedAt = now;
            if (session.EndsAt <= now)
            {
                LogSessionEnded(Logger, session.Id, session.EndsAt);
                continue;
            }

            var roster = await db.RosterEntries
                .Where(r => r.ClassId == session.ClassId && r.Owner!.Kind == OwnerKind.Student && r.Owner.Active)
                .Select(r => r.OwnerId)
                .ToListAsync(cancellationToken);
            var arrived = await db.CheckIns
                .Where(c => c.SchoolDate == session.SchoolDate && roster.Contains(c.OwnerId))
                .Select(c => c.OwnerId)
                .ToListAsync(cancellationToken);
            var missing = roster.Except(arrived).ToList();
            if (missing.Count == 0)
            {
                continue;
            }

            var contacts = await db.Contacts.AsNoTracking()
                .Where(c => missing.Contains(c.OwnerId) && c.NotifyAbsence)
                .OrderBy(c => c.OwnerId).ThenBy(c => c.Id)
                .ToListAsync(cancellationToken);
            int added = await notices.QueueNotArrivedAsync(db, session, contacts, now, cancellationToken);
            LogSessionChecked(Logger, session.Id, missing.Count, added);
            queued += added;
        }

        await db.SaveChangesAsync(cancellationToken);
        if (queued > 0)
        {
            signal.Notify();
        }

        return sessions.Count;
    }

    protected override Task WaitAsync(int handled, CancellationToken cancellationToken) =>
        handled == BatchSize ? Task.CompletedTask : Task.Delay(TimeSpan.FromSeconds(_options.PollSeconds), Time, cancellationToken);

    [LoggerMessage(3112, LogLevel.Information, "Session {SessionId}: {Missing} student(s) not arrived after the grace period; {Queued} notice(s) queued")]
    private static partial void LogSessionChecked(ILogger logger, int sessionId, int missing, int queued);

    [LoggerMessage(3113, LogLevel.Information, "Session {SessionId} ended at {EndsAt} before its absence check ran (Saito was not running); marked checked without notices")]
    private static partial void LogSessionEnded(ILogger logger, int sessionId, DateTimeOffset endsAt);
}

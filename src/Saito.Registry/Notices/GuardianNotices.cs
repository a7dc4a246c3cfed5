using System.Globalization;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Options;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Registry.Notices;

/// <summary>
/// Queues guardian notices into the outbox (the <c>notice</c> table) in the caller's unit of work: it adds rows and
/// never saves, so the notices commit with what caused them (a check-in, a session's absence check) or not at all.
/// Each notice has a <see cref="Notice.DedupKey"/> that names the event and the contact; a key already in the
/// table (or already added to this context) is skipped, so the same event never queues the same contact twice.
/// </summary>
public sealed class GuardianNotices(IOptions<SchoolOptions> school)
{
    /// <summary>The outbox key of a contact's arrival notice: one per student, school day and contact.</summary>
    public static string ArrivalKey(int ownerId, DateOnly schoolDate, int contactId) =>
        string.Create(CultureInfo.InvariantCulture, $"arrived:{ownerId}:{schoolDate:yyyy-MM-dd}:{contactId}");

    /// <summary>The outbox key of a contact's not-arrived notice: one per session, student and contact.</summary>
    public static string NotArrivedKey(int sessionId, int ownerId, int contactId) =>
        string.Create(CultureInfo.InvariantCulture, $"not-arrived:{sessionId}:{ownerId}:{contactId}");

    /// <summary>
    /// Adds an arrival notice for each of <paramref name="student"/>'s contacts who want one (<see cref="Contact.NotifyArrival"/>)
    /// and returns how many it added; the caller saves them with the check-in. <see cref="Notice.CheckInId"/> is filled
    /// when the check-in already has its id (saved earlier in the caller's transaction), and left null otherwise: the
    /// notice is keyed by student and school day, not by the row.
    /// </summary>
    public async Task<int> QueueArrivalAsync(RegistryDbContext db, CheckIn checkIn, Owner student, DateTimeOffset now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(checkIn);
        ArgumentNullException.ThrowIfNull(student);
        if (student.Kind != OwnerKind.Student)
        {
            return 0;
        }

        var contacts = await db.Contacts.AsNoTracking()
            .Where(c => c.OwnerId == student.Id && c.NotifyArrival)
            .OrderBy(c => c.Id)
            .ToListAsync(cancellationToken);
        var notices = contacts.Select(c => NewNotice(
            NoticeKind.Arrived, c, ArrivalKey(student.Id, checkIn.SchoolDate, c.Id), now,
            sessionId: null, checkInId: checkIn.Id == 0 ? null : checkIn.Id));
        return await AddNewAsync(db, notices.ToList(), cancellationToken);
    }

    /// <summary>
    /// Adds a not-arrived notice for <paramref name="session"/> to each of the given contacts who want one
    /// (<see cref="Contact.NotifyAbsence"/>) and returns how many it added; the caller saves them.
    /// </summary>
    public async Task<int> QueueNotArrivedAsync(RegistryDbContext db, ClassSession session, IEnumerable<Contact> contacts, DateTimeOffset now, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(db);
        ArgumentNullException.ThrowIfNull(session);
        ArgumentNullException.ThrowIfNull(contacts);
        var notices = contacts
            .Where(c => c.NotifyAbsence)
            .Select(c => NewNotice(NoticeKind.NotArrived, c, NotArrivedKey(session.Id, c.OwnerId, c.Id), now, session.Id, checkInId: null));
        return await AddNewAsync(db, notices.ToList(), cancellationToken);
    }

    private Notice NewNotice(NoticeKind kind, Contact contact, string dedupKey, DateTimeOffset now, int? sessionId, long? checkInId) => new()
    {
        Kind = kind,
        OwnerId = contact.OwnerId,
        ContactId = contact.Id,
        SessionId = sessionId,
        CheckInId = checkInId,
        DedupKey = dedupKey,
        ToAddress = contact.Email,
        Language = LanguageOf(contact),
        State = NoticeState.Pending,
        Attempts = 0,
        CreatedAt = now,
        NextAttemptAt = now,
        // Chosen once, here: every attempt (and a resend after a crash) carries the same Message-ID.
        MessageId = $"<notice-{Guid.NewGuid():N}@saito>",
    };

    private string LanguageOf(Contact contact) =>
        contact.Language is { Length: > 0 } own && SchoolOptions.Languages.Contains(own.ToLowerInvariant()) ? own.ToLowerInvariant() : school.Value.Language;

    /// <summary>Adds the notices whose key is neither in the table nor already added to this context.</summary>
    private static async Task<int> AddNewAsync(RegistryDbContext db, List<Notice> notices, CancellationToken cancellationToken)
    {
        if (notices.Count == 0)
        {
            return 0;
        }

        var keys = notices.Select(n => n.DedupKey).ToList();
        var taken = (await db.Notices.AsNoTracking().Where(n => keys.Contains(n.DedupKey)).Select(n => n.DedupKey).ToListAsync(cancellationToken)).ToHashSet(StringComparer.Ordinal);
        taken.UnionWith(db.ChangeTracker.Entries<Notice>().Where(e => e.State == EntityState.Added).Select(e => e.Entity.DedupKey));
        int added = 0;
        foreach (var notice in notices)
        {
            if (taken.Add(notice.DedupKey))
            {
                db.Notices.Add(notice);
                added++;
            }
        }

        return added;
    }
}

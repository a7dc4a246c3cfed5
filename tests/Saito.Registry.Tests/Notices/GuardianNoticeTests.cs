using System.Net;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Saito.Registry.Model;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Notices;

/// <summary>
/// Guardian notices end to end on SQLite and a real PostgreSQL, through a real SMTP server (aiosmtpd): what is
/// queued, to whom, what the email says, and how the outbox behaves when the mail server refuses or rejects.
/// The background services are driven one pass at a time (<c>RunOnceAsync</c>) on a fake clock, except where the
/// running loop itself is under test.
/// </summary>
public sealed class GuardianNoticeTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static readonly TimeSpan s_mailTimeout = TimeSpan.FromSeconds(15);

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task An_arrival_notice_reaches_each_contact_who_wants_it_in_their_language(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, SmtpTestServerMode.Accept);
        var student = await harness.AddOwnerAsync("Léa <Martin>", OwnerKind.Student,
            NoticeHarness.Contact("mum@example.org"),
            NoticeHarness.Contact("papa@example.fr", language: "fr"),
            NoticeHarness.Contact("opted-out@example.org", arrival: false));

        var checkIn = await harness.CheckInAsync(student);
        int sent = await harness.Sender.RunOnceAsync(Ct);

        sent.ShouldBe(2);
        var messages = await harness.Smtp.WaitForMessagesAsync(2, s_mailTimeout);
        messages.Select(m => m.To.Mailboxes.Single().Address).Order().ShouldBe(["mum@example.org", "papa@example.fr"]);
        var english = messages.Single(m => m.To.Mailboxes.Single().Address == "mum@example.org");
        var french = messages.Single(m => m.To.Mailboxes.Single().Address == "papa@example.fr");

        english.Subject.ShouldBe($"Léa <Martin> has arrived at {NoticeHarness.SchoolName}");
        english.From.Mailboxes.Single().Address.ShouldBe("office@hillside.example");
        english.TextBody.ShouldNotBeNull().ShouldContain("Léa <Martin> was checked in at Hillside School at 09:05 (UTC+01:00) on Thursday 26 November 2026.");
        english.HtmlBody.ShouldNotBeNull().ShouldContain(WebUtility.HtmlEncode("Léa <Martin>"));
        english.HtmlBody.ShouldNotBeNull().ShouldNotContain("<Martin>"); // encoded, never markup
        english.HtmlBody.ShouldNotBeNull().ShouldContain(NoticeHarness.SchoolName);

        french.Subject.ShouldBe($"Léa <Martin> est arrivé(e) à {NoticeHarness.SchoolName}");
        french.TextBody.ShouldNotBeNull().ShouldContain("à 09:05 (UTC+01:00) le jeudi 26 novembre 2026.");
        french.HtmlBody.ShouldNotBeNull().ShouldContain("lang=\"fr\"");

        await using var db = harness.Open();
        var notices = await db.Notices.OrderBy(n => n.Id).ToListAsync(Ct);
        notices.Count.ShouldBe(2); // none for the contact who opted out
        notices.ShouldAllBe(n => n.State == NoticeState.Sent && n.Attempts == 1 && n.SentAt == NoticeHarness.Start && n.CheckInId == checkIn.Id);
        notices.Select(n => n.Language).ShouldBe(["en", "fr"]);
        messages.Select(m => $"<{m.MessageId}>").Order().ShouldBe(notices.Select(n => n.MessageId).Order());
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Queuing_the_same_arrival_twice_gives_one_notice_per_contact(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, mail: null);
        var student = await harness.AddOwnerAsync("Sam", OwnerKind.Student, NoticeHarness.Contact("a@example.org"), NoticeHarness.Contact("b@example.org"));
        var checkIn = await harness.CheckInAsync(student);
        var now = harness.Time.GetUtcNow();

        await using (var db = harness.Open())
        {
            // The same context twice before saving, then a redelivered check-in after the first was saved.
            (await harness.Notices.QueueArrivalAsync(db, checkIn, student, now, Ct)).ShouldBe(0);
            await db.SaveChangesAsync(Ct);
        }

        await using (var db = harness.Open())
        {
            var other = await harness.AddOwnerAsync("Kim", OwnerKind.Student, NoticeHarness.Contact("c@example.org"));
            var unsaved = new CheckIn { OwnerId = other.Id, SchoolDate = checkIn.SchoolDate, CheckedInAt = now, Source = "staff:test", RecordedAt = now };
            db.CheckIns.Add(unsaved);
            (await harness.Notices.QueueArrivalAsync(db, unsaved, other, now, Ct)).ShouldBe(1);
            (await harness.Notices.QueueArrivalAsync(db, unsaved, other, now, Ct)).ShouldBe(0);
            await db.SaveChangesAsync(Ct);
        }

        await using var check = harness.Open();
        var keys = await check.Notices.OrderBy(n => n.Id).Select(n => n.DedupKey).ToListAsync(Ct);
        keys.Count.ShouldBe(3);
        keys.ShouldBeUnique();
        keys[0].ShouldBe($"arrived:{student.Id}:2026-11-26:{student.Contacts[0].Id}");
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_session_past_its_grace_period_queues_not_arrived_for_the_missing_student_only_once(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, SmtpTestServerMode.Accept);
        var present = await harness.AddOwnerAsync("Present Pat", OwnerKind.Student, NoticeHarness.Contact("pat@example.org"));
        var missing = await harness.AddOwnerAsync("Missing Max", OwnerKind.Student,
            NoticeHarness.Contact("max-home@example.org"), NoticeHarness.Contact("max-quiet@example.org", absence: false));
        var aide = await harness.AddOwnerAsync("Aide Ada", OwnerKind.Aide, NoticeHarness.Contact("ada@example.org"));
        // 09:00-11:00 in Paris; the clock is at 09:05.
        int sessionId = await AddSessionAsync(harness, "Maths 3B", new DateTimeOffset(2026, 11, 26, 8, 0, 0, TimeSpan.Zero), [present, missing, aide]);
        await harness.CheckInAsync(present);
        await ClearSentAsync(harness); // Pat's arrival notice is not what this test is about

        (await harness.Watcher.RunOnceAsync(Ct)).ShouldBe(0); // within the grace period
        (await NotArrivedAsync(harness)).ShouldBeEmpty();

        harness.Time.Advance(TimeSpan.FromMinutes(11)); // 09:16, 16 minutes after the start
        (await harness.Watcher.RunOnceAsync(Ct)).ShouldBe(1);
        harness.Time.Advance(TimeSpan.FromMinutes(1));
        (await harness.Watcher.RunOnceAsync(Ct)).ShouldBe(0);

        var notices = await NotArrivedAsync(harness);
        notices.Count.ShouldBe(1);
        notices[0].OwnerId.ShouldBe(missing.Id);
        notices[0].ToAddress.ShouldBe("max-home@example.org");
        notices[0].DedupKey.ShouldBe($"not-arrived:{sessionId}:{missing.Id}:{missing.Contacts[0].Id}");
        await using (var db = harness.Open())
        {
            (await db.Sessions.SingleAsync(s => s.Id == sessionId, Ct)).AbsencesCheckedAt.ShouldBe(NoticeHarness.Start.AddMinutes(11));
        }

        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(1);
        var message = (await harness.Smtp.WaitForMessagesAsync(1, s_mailTimeout)).Single();
        message.Subject.ShouldBe($"Missing Max has not arrived at {NoticeHarness.SchoolName}");
        message.TextBody.ShouldNotBeNull().ShouldContain("15 minutes after Maths 3B started at 09:00 (UTC+01:00) on Thursday 26 November 2026");
        message.HtmlBody.ShouldNotBeNull().ShouldContain("Missing Max");
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_session_that_ended_before_the_watcher_ran_queues_nothing(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, mail: null);
        var student = await harness.AddOwnerAsync("Absent Yesterday", OwnerKind.Student, NoticeHarness.Contact("family@example.org"));
        // Yesterday 09:00-11:00 in Paris: Saito was not running then.
        int sessionId = await AddSessionAsync(harness, "History", new DateTimeOffset(2026, 11, 25, 8, 0, 0, TimeSpan.Zero), [student]);

        (await harness.Watcher.RunOnceAsync(Ct)).ShouldBe(1);

        (await NotArrivedAsync(harness)).ShouldBeEmpty();
        await using var db = harness.Open();
        (await db.Sessions.SingleAsync(s => s.Id == sessionId, Ct)).AbsencesCheckedAt.ShouldBe(NoticeHarness.Start); // checked, never again
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_notice_the_server_refuses_twice_is_sent_on_the_third_attempt(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, SmtpTestServerMode.RefuseFirst, refuseFirst: 2);
        var student = await harness.AddOwnerAsync("Robin", OwnerKind.Student, NoticeHarness.Contact("robin-home@example.org"));
        await harness.CheckInAsync(student);

        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(1);
        var first = await SingleNoticeAsync(harness);
        first.State.ShouldBe(NoticeState.Pending);
        first.Attempts.ShouldBe(1);
        first.LastError.ShouldNotBeNull().ShouldContain("451");
        first.NextAttemptAt.ShouldBe(NoticeHarness.Start.AddSeconds(1)); // RetryBaseSeconds

        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(0); // not due yet
        harness.Time.Advance(TimeSpan.FromSeconds(1));
        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(1);
        var second = await SingleNoticeAsync(harness);
        second.Attempts.ShouldBe(2);
        second.LastError.ShouldNotBeNull().ShouldContain("451");
        second.NextAttemptAt.ShouldBe(harness.Time.GetUtcNow().AddSeconds(2)); // doubled

        harness.Time.Advance(TimeSpan.FromSeconds(2));
        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(1);
        var sent = await SingleNoticeAsync(harness);
        sent.State.ShouldBe(NoticeState.Sent);
        sent.Attempts.ShouldBe(3);
        sent.LastError.ShouldBeNull();
        sent.SentAt.ShouldBe(harness.Time.GetUtcNow());
        var message = (await harness.Smtp.WaitForMessagesAsync(1, s_mailTimeout)).Single();
        $"<{message.MessageId}>".ShouldBe(first.MessageId); // the same Message-ID on every attempt
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_notice_the_server_rejects_is_failed_with_the_reason(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, SmtpTestServerMode.RejectAll);
        var student = await harness.AddOwnerAsync("Noor", OwnerKind.Student, NoticeHarness.Contact("noor@example.org"));
        await harness.CheckInAsync(student);

        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(1);

        var notice = await SingleNoticeAsync(harness);
        notice.State.ShouldBe(NoticeState.Failed); // a 5xx is permanent: no retry
        notice.Attempts.ShouldBe(1);
        notice.LastError.ShouldNotBeNull().ShouldContain("550");
        notice.LastError.ShouldContain("rejected");
        notice.SentAt.ShouldBeNull();
        harness.Logs.Entries.ShouldContain(e => e.EventId == 3123 && e.Level == LogLevel.Error);
        (await harness.Smtp.MessagesAsync()).ShouldBeEmpty();
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task With_no_mail_server_notices_stay_pending_and_a_warning_says_why(StorageProvider provider)
    {
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, mail: null);
        var student = await harness.AddOwnerAsync("Ari", OwnerKind.Student, NoticeHarness.Contact("ari@example.org"));
        await harness.CheckInAsync(student);

        await harness.StartHostedServicesAsync(Ct);
        harness.Signal.Notify();
        (await harness.Sender.RunOnceAsync(Ct)).ShouldBe(0);
        await harness.WaitForLogAsync(3120, s_mailTimeout);
        await harness.StopHostedServicesAsync(Ct);

        var notice = await SingleNoticeAsync(harness);
        notice.State.ShouldBe(NoticeState.Pending);
        notice.Attempts.ShouldBe(0);
        harness.Logs.Entries.Count(e => e.EventId == 3120 && e.Level == LogLevel.Warning).ShouldBe(1);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task The_running_sender_sends_what_is_due_at_start_and_wakes_on_the_signal(StorageProvider provider)
    {
        // An hour between polls on a clock that does not move: only the signal can wake the sender.
        await using var harness = await NoticeHarness.CreateAsync(provider, postgres, SmtpTestServerMode.Accept, pollSeconds: 3600);
        var early = await harness.AddOwnerAsync("Early Eve", OwnerKind.Student, NoticeHarness.Contact("eve@example.org"));
        var later = await harness.AddOwnerAsync("Later Lou", OwnerKind.Student, NoticeHarness.Contact("lou@example.org"));
        await harness.CheckInAsync(early); // queued while Saito was down

        await harness.StartHostedServicesAsync(Ct);
        (await harness.Smtp.WaitForMessagesAsync(1, s_mailTimeout)).Single().To.Mailboxes.Single().Address.ShouldBe("eve@example.org");

        await harness.CheckInAsync(later);
        harness.Signal.Notify();
        var messages = await harness.Smtp.WaitForMessagesAsync(2, s_mailTimeout);

        messages[1].To.Mailboxes.Single().Address.ShouldBe("lou@example.org");
        await harness.StopHostedServicesAsync(Ct).WaitAsync(TimeSpan.FromSeconds(10), Ct); // honours the stopping token
    }

    private static async Task<int> AddSessionAsync(NoticeHarness harness, string className, DateTimeOffset startsAt, Owner[] roster)
    {
        var now = harness.Time.GetUtcNow();
        await using var db = harness.Open();
        var schoolClass = new SchoolClass { Name = className, CreatedAt = now, UpdatedAt = now };
        foreach (var owner in roster)
        {
            schoolClass.Roster.Add(new RosterEntry { OwnerId = owner.Id, AddedAt = now });
        }

        var session = new ClassSession { Class = schoolClass, StartsAt = startsAt, EndsAt = startsAt.AddHours(2), SchoolDate = harness.School.SchoolDate(startsAt) };
        db.Sessions.Add(session);
        await db.SaveChangesAsync(Ct);
        return session.Id;
    }

    private static async Task<List<Notice>> NotArrivedAsync(NoticeHarness harness)
    {
        await using var db = harness.Open();
        return await db.Notices.Where(n => n.Kind == NoticeKind.NotArrived).ToListAsync(Ct);
    }

    private static async Task<Notice> SingleNoticeAsync(NoticeHarness harness)
    {
        await using var db = harness.Open();
        return await db.Notices.SingleAsync(Ct);
    }

    /// <summary>Marks what is queued as sent, so a test sees only the notices it causes next.</summary>
    private static async Task ClearSentAsync(NoticeHarness harness)
    {
        await using var db = harness.Open();
        await db.Notices.ExecuteUpdateAsync(s => s.SetProperty(n => n.State, NoticeState.Sent), Ct);
    }
}

using System.Net.Sockets;
using MailKit;
using MailKit.Net.Smtp;
using MailKit.Security;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using MimeKit;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Registry.Notices;

/// <summary>
/// Sends the outbox: takes due pending notices (oldest first, <see cref="BatchSize"/> at a time), writes each email at
/// send time from the current names (<see cref="NoticeTemplates"/>), sends it through <c>Notices:Smtp</c> with
/// MailKit, and records the outcome on the row before the next one. It runs when woken by
/// <see cref="NoticeSignal"/> (a check-in) and otherwise every <c>Notices:PollSeconds</c>.
/// <para>
/// A failure counts an attempt, keeps a short reason in <see cref="Notice.LastError"/>, and schedules the next
/// attempt after an exponential backoff (<see cref="NoticeOptions.RetryDelay"/>). A permanent refusal (a 5xx reply)
/// or the last allowed attempt makes the notice failed.
/// </para>
/// <para>
/// Delivery is at least once, not exactly once: if Saito stops after the mail server accepted a message and before
/// the row says sent (a crash, <c>kill -9</c>, the database unreachable at that moment), the notice is still
/// pending and is sent again at the next start, with the same Message-ID so a mail system or a reader can recognise
/// the duplicate. The window is one SMTP reply and one row update long; it cannot be closed without the mail
/// server taking part in the transaction.
/// </para>
/// With no <c>Notices:Smtp:Host</c> the sender is off: it logs a warning once at start and notices stay pending
/// (visible, and sent once a host is configured).
/// </summary>
public sealed partial class NoticeSender(
    RegistryContextFactory contexts,
    RegistryMigrator migrator,
    NoticeSignal signal,
    IOptions<NoticeOptions> options,
    IOptions<SchoolOptions> school,
    TimeProvider time,
    ILogger<NoticeSender> logger) : NoticeLoop(migrator, time, logger)
{
    /// <summary>Notices taken per pass at most; a full batch is followed by another pass at once.</summary>
    internal const int BatchSize = 50;

    /// <summary>Longest <see cref="Notice.LastError"/> kept.</summary>
    internal const int ErrorLength = 300;

    private readonly NoticeOptions _options = options.Value;
    private readonly SchoolOptions _school = school.Value;

    protected override string Name => "Notice sender";

    protected override Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (!_options.SenderEnabled)
        {
            LogDisabled(Logger);
            return Task.CompletedTask;
        }

        return base.ExecuteAsync(stoppingToken);
    }

    internal override async Task<int> RunOnceAsync(CancellationToken cancellationToken)
    {
        if (!_options.SenderEnabled)
        {
            return 0;
        }

        await using var db = contexts.Create();
        var now = Time.GetUtcNow();
        var due = await db.Notices
            .Where(n => n.State == NoticeState.Pending && n.NextAttemptAt <= now)
            .OrderBy(n => n.NextAttemptAt).ThenBy(n => n.Id)
            .Take(BatchSize)
            .ToListAsync(cancellationToken);
        if (due.Count == 0)
        {
            return 0;
        }

        var facts = await NoticeFacts.LoadAsync(db, due, cancellationToken);
        using var smtp = new SmtpClient();
        try
        {
            foreach (var notice in due)
            {
                await SendAsync(smtp, notice, facts, cancellationToken);
                // Saved one by one: a crash resends at most the notice in flight, not the batch.
                await db.SaveChangesAsync(cancellationToken);
            }
        }
        finally
        {
            await DisconnectAsync(smtp);
        }

        return due.Count;
    }

    protected override async Task WaitAsync(int handled, CancellationToken cancellationToken)
    {
        if (handled < BatchSize)
        {
            await signal.WaitAsync(TimeSpan.FromSeconds(_options.PollSeconds), Time, cancellationToken);
        }
    }

    private async Task SendAsync(SmtpClient smtp, Notice notice, NoticeFacts facts, CancellationToken cancellationToken)
    {
        notice.Attempts++;
        try
        {
            var message = Compose(notice, facts);
            if (!smtp.IsConnected)
            {
                await ConnectAsync(smtp, cancellationToken);
            }

            await smtp.SendAsync(message, cancellationToken);
            notice.State = NoticeState.Sent;
            notice.SentAt = Time.GetUtcNow();
            notice.LastError = null;
            LogSent(Logger, notice.Id, notice.Kind, notice.Attempts);
        }
        catch (Exception ex) when (IsDeliveryFailure(ex, cancellationToken))
        {
            notice.LastError = NoticeErrors.Redact(Describe(ex), notice.ToAddress);
            bool permanent = ex is SmtpCommandException { StatusCode: >= (SmtpStatusCode)500 } or ParseException;
            if (permanent || notice.Attempts >= _options.MaxAttempts)
            {
                notice.State = NoticeState.Failed;
                LogFailed(Logger, notice.Id, notice.Attempts, notice.LastError);
            }
            else
            {
                var delay = _options.RetryDelay(notice.Attempts);
                notice.NextAttemptAt = Time.GetUtcNow() + delay;
                LogRetry(Logger, notice.Id, notice.Attempts, delay, notice.LastError);
            }

            if (ex is not SmtpCommandException)
            {
                // The connection is in an unknown state after anything but a reply: start afresh for the next notice.
                await DisconnectAsync(smtp);
            }
        }
    }

    private MimeMessage Compose(Notice notice, NoticeFacts facts)
    {
        var text = NoticeTemplates.Render(facts.ContentOf(notice, _school, _options.AbsenceGraceMinutes));
        var message = new MimeMessage
        {
            Subject = text.Subject,
            MessageId = notice.MessageId.Trim('<', '>'),
            Date = Time.GetUtcNow(),
            Body = new BodyBuilder { TextBody = text.PlainText, HtmlBody = text.Html }.ToMessageBody(),
        };
        message.From.Add(MailboxAddress.Parse(_options.From ?? throw new InvalidOperationException("Notices:From is not set")));
        message.To.Add(MailboxAddress.Parse(notice.ToAddress));
        message.Headers.Add("Auto-Submitted", "auto-generated");
        return message;
    }

    private async Task ConnectAsync(SmtpClient smtp, CancellationToken cancellationToken)
    {
        var settings = _options.Smtp;
        var security = settings.Security switch
        {
            SmtpSecurity.StartTls => SecureSocketOptions.StartTls,
            SmtpSecurity.SslOnConnect => SecureSocketOptions.SslOnConnect,
            _ => SecureSocketOptions.None,
        };
        await smtp.ConnectAsync(settings.Host ?? throw new InvalidOperationException("Notices:Smtp:Host is not set"), settings.Port, security, cancellationToken);
        if (!string.IsNullOrEmpty(settings.User))
        {
            await smtp.AuthenticateAsync(settings.User, settings.Password ?? string.Empty, cancellationToken);
        }
    }

    private async Task DisconnectAsync(SmtpClient smtp)
    {
        if (!smtp.IsConnected)
        {
            return;
        }

        try
        {
            // Not the stopping token: a polite QUIT is quick, and skipping it on shutdown would only leave a socket behind.
            await smtp.DisconnectAsync(quit: true, CancellationToken.None);
        }
        catch (Exception ex) when (ex is IOException or SocketException or ProtocolException or CommandException)
        {
            LogDisconnectFailed(Logger, ex.Message);
        }
    }

    /// <summary>What counts as this notice's delivery failing (recorded on the row), as opposed to a bug or Saito stopping.</summary>
    private static bool IsDeliveryFailure(Exception ex, CancellationToken cancellationToken) => ex switch
    {
        OperationCanceledException => !cancellationToken.IsCancellationRequested, // MailKit's own timeout
        CommandException or ProtocolException or AuthenticationException or SslHandshakeException or IOException or SocketException or TimeoutException
            or ServiceNotConnectedException or ParseException => true,
        _ => false,
    };

    /// <summary>A short reason for <see cref="Notice.LastError"/>: the server's reply when there is one; never settings or credentials (nor, once through <see cref="NoticeErrors.Redact"/>, addresses).</summary>
    internal static string Describe(Exception ex)
    {
        string reason = ex switch
        {
            SmtpCommandException smtp => $"{(int)smtp.StatusCode} {smtp.Message} ({smtp.ErrorCode})",
            ParseException => $"not an email address: {ex.Message}",
            _ => $"{ex.GetType().Name}: {ex.Message}",
        };
        reason = reason.ReplaceLineEndings(" ");
        return reason.Length <= ErrorLength ? reason : reason[..(ErrorLength - 3)] + "...";
    }

    [LoggerMessage(3120, LogLevel.Warning, "Notices:Smtp:Host is not set: guardian notices are queued but not sent (they stay pending until a mail server is configured)")]
    private static partial void LogDisabled(ILogger logger);

    [LoggerMessage(3121, LogLevel.Information, "Notice {NoticeId} ({Kind}) sent on attempt {Attempt}")]
    private static partial void LogSent(ILogger logger, long noticeId, NoticeKind kind, int attempt);

    [LoggerMessage(3122, LogLevel.Warning, "Notice {NoticeId}: attempt {Attempt} failed, next in {Delay}: {Reason}")]
    private static partial void LogRetry(ILogger logger, long noticeId, int attempt, TimeSpan delay, string reason);

    [LoggerMessage(3123, LogLevel.Error, "Notice {NoticeId} failed after {Attempts} attempt(s): {Reason}")]
    private static partial void LogFailed(ILogger logger, long noticeId, int attempts, string reason);

    [LoggerMessage(3124, LogLevel.Debug, "Closing the SMTP connection failed: {Reason}")]
    private static partial void LogDisconnectFailed(ILogger logger, string reason);
}

/// <summary>What a batch of notices needs from the registry at send time: names and times, read once per batch.</summary>
internal sealed class NoticeFacts
{
    private readonly Dictionary<int, string> _students;
    private readonly Dictionary<long, DateTimeOffset> _checkIns;
    private readonly Dictionary<int, (DateTimeOffset StartsAt, string ClassName)> _sessions;

    private NoticeFacts(Dictionary<int, string> students, Dictionary<long, DateTimeOffset> checkIns, Dictionary<int, (DateTimeOffset, string)> sessions)
    {
        _students = students;
        _checkIns = checkIns;
        _sessions = sessions;
    }

    public static async Task<NoticeFacts> LoadAsync(RegistryDbContext db, IReadOnlyCollection<Notice> notices, CancellationToken cancellationToken)
    {
        var ownerIds = notices.Select(n => n.OwnerId).Distinct().ToList();
        var checkInIds = notices.Where(n => n.CheckInId is not null).Select(n => n.CheckInId!.Value).Distinct().ToList();
        var sessionIds = notices.Where(n => n.SessionId is not null).Select(n => n.SessionId!.Value).Distinct().ToList();
        var students = await db.Owners.Where(o => ownerIds.Contains(o.Id)).ToDictionaryAsync(o => o.Id, o => o.DisplayName, cancellationToken);
        var checkIns = await db.CheckIns.Where(c => checkInIds.Contains(c.Id)).ToDictionaryAsync(c => c.Id, c => c.CheckedInAt, cancellationToken);
        var sessions = await db.Sessions.Where(s => sessionIds.Contains(s.Id))
            .Select(s => new { s.Id, s.StartsAt, ClassName = s.Class!.Name })
            .ToDictionaryAsync(s => s.Id, s => (s.StartsAt, s.ClassName), cancellationToken);
        return new NoticeFacts(students, checkIns, sessions);
    }

    /// <summary>
    /// The content of <paramref name="notice"/>. An arrival's time is the check-in's when the notice names it, else
    /// when the notice was queued (the check-in's moment); a not-arrived notice's time is the session's start.
    /// </summary>
    public NoticeContent ContentOf(Notice notice, SchoolOptions school, int graceMinutes)
    {
        string student = _students.GetValueOrDefault(notice.OwnerId) ?? $"#{notice.OwnerId}";
        if (notice.Kind == NoticeKind.NotArrived && notice.SessionId is { } sessionId && _sessions.TryGetValue(sessionId, out var session))
        {
            return new NoticeContent(notice.Kind, notice.Language, school.Name, student, session.StartsAt, school.Zone, session.ClassName, graceMinutes);
        }

        var at = notice.CheckInId is { } checkInId && _checkIns.TryGetValue(checkInId, out var checkedInAt) ? checkedInAt : notice.CreatedAt;
        return new NoticeContent(notice.Kind, notice.Language, school.Name, student, at, school.Zone, null, graceMinutes);
    }
}

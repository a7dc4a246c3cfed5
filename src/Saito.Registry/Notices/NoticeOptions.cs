using System.ComponentModel;
using Microsoft.Extensions.Options;
using MimeKit;
using Saito.Readings.Configuration;

namespace Saito.Registry.Notices;

/// <summary>The <c>Notices</c> section: the mail server guardian notices go through, retries, and the absence check.</summary>
public sealed class NoticeOptions
{
    public const string SectionName = "Notices";

    /// <summary>The mail server; with no <see cref="NoticeSmtpOptions.Host"/> nothing is sent and notices stay pending.</summary>
    public NoticeSmtpOptions Smtp { get; set; } = new();

    /// <summary>The sender of every notice, <c>school@example.org</c> or <c>Our school &lt;school@example.org&gt;</c>; required when a host is set.</summary>
    public string? From { get; set; }

    /// <summary>Attempts at most per notice; then it is failed.</summary>
    public int MaxAttempts { get; set; } = 8;

    /// <summary>Wait after the first failed attempt; doubled after each further one...</summary>
    public int RetryBaseSeconds { get; set; } = 30;

    /// <summary>... up to this.</summary>
    public int RetryMaxSeconds { get; set; } = 3600;

    /// <summary>Minutes after a session starts before a student on its roster who has not arrived is reported.</summary>
    public int AbsenceGraceMinutes { get; set; } = 15;

    /// <summary>How often the absence check runs and the sender looks for due notices (a check-in wakes the sender at once).</summary>
    public int PollSeconds { get; set; } = 10;

    /// <summary>Whether a mail server is configured (otherwise notices are queued and stay pending).</summary>
    public bool SenderEnabled => !string.IsNullOrWhiteSpace(Smtp.Host);

    /// <summary>The wait before the next attempt after <paramref name="attempts"/> failed ones: base, 2 x base, 4 x base... capped.</summary>
    public TimeSpan RetryDelay(int attempts)
    {
        double seconds = RetryBaseSeconds * Math.Pow(2, Math.Clamp(attempts - 1, 0, 30));
        return TimeSpan.FromSeconds(Math.Min(seconds, RetryMaxSeconds));
    }
}

/// <summary>How the connection to the mail server is secured.</summary>
[TypeConverter(typeof(KebabCaseEnumConverter<SmtpSecurity>))]
public enum SmtpSecurity
{
    /// <summary>Plain SMTP (a relay on the same host or network).</summary>
    None,

    /// <summary>Plain connect, then STARTTLS; fails if the server does not offer it (usually port 587).</summary>
    StartTls,

    /// <summary>TLS from the first byte (usually port 465).</summary>
    SslOnConnect,
}

public sealed class NoticeSmtpOptions
{
    /// <summary>The mail server's host name; unset disables sending.</summary>
    public string? Host { get; set; }

    public int Port { get; set; } = 25;

    /// <summary><c>none</c>, <c>starttls</c> or <c>ssl-on-connect</c>.</summary>
    public SmtpSecurity Security { get; set; } = SmtpSecurity.None;

    /// <summary>Sign in with this user (and <see cref="Password"/>) when set.</summary>
    public string? User { get; set; }

    public string? Password { get; set; }
}

internal sealed class NoticeOptionsValidator : IValidateOptions<NoticeOptions>
{
    public ValidateOptionsResult Validate(string? name, NoticeOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        var smtp = options.Smtp ?? new NoticeSmtpOptions();
        if (!Enum.IsDefined(smtp.Security))
        {
            failures.Add("Notices:Smtp:Security must be none, starttls or ssl-on-connect.");
        }

        if (smtp.Port is < 1 or > 65535)
        {
            failures.Add($"Notices:Smtp:Port must be between 1 and 65535 (was {smtp.Port}).");
        }

        if (string.IsNullOrEmpty(smtp.User) != string.IsNullOrEmpty(smtp.Password))
        {
            failures.Add("Notices:Smtp:User and Notices:Smtp:Password go together: set both to sign in, or neither.");
        }

        if (options.SenderEnabled)
        {
            if (string.IsNullOrWhiteSpace(options.From))
            {
                failures.Add("Notices:From is required when Notices:Smtp:Host is set (the address notices are sent from, e.g. school@example.org).");
            }
            else if (!MailboxAddress.TryParse(options.From, out _))
            {
                failures.Add($"Notices:From '{options.From}' is not an email address (school@example.org or \"Our school <school@example.org>\").");
            }
        }

        OptionFailures.Range(failures, "Notices:MaxAttempts", options.MaxAttempts, 1, 100);

        OptionFailures.Range(failures, "Notices:RetryBaseSeconds", options.RetryBaseSeconds, 1, 86_400);

        if (options.RetryMaxSeconds < options.RetryBaseSeconds || options.RetryMaxSeconds > 7 * 86_400)
        {
            failures.Add($"Notices:RetryMaxSeconds must be at least Notices:RetryBaseSeconds ({options.RetryBaseSeconds}) and at most 604,800 (was {options.RetryMaxSeconds}).");
        }

        OptionFailures.Range(failures, "Notices:AbsenceGraceMinutes", options.AbsenceGraceMinutes, 0, 240);

        OptionFailures.Range(failures, "Notices:PollSeconds", options.PollSeconds, 1, 3600);

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

using System.Globalization;
using System.Net;
using Saito.Registry.Model;

namespace Saito.Registry.Notices;

/// <summary>What a notice says, gathered at send time (the outbox row keeps only who, what and when it was queued).</summary>
/// <param name="Kind">Arrived or not arrived.</param>
/// <param name="Language"><c>en</c> or <c>fr</c>; anything else is written in English.</param>
/// <param name="School">The school's name (<c>School:Name</c>).</param>
/// <param name="Student">The student's display name.</param>
/// <param name="At">Arrived: when the student was checked in. Not arrived: when the session started.</param>
/// <param name="Zone">The school's time zone: times are written in it, with their UTC offset.</param>
/// <param name="ClassName">Not arrived: the class of the session.</param>
/// <param name="GraceMinutes">Not arrived: how long after the start the student was still missing.</param>
public sealed record NoticeContent(NoticeKind Kind, string Language, string School, string Student, DateTimeOffset At, TimeZoneInfo Zone, string? ClassName, int GraceMinutes);

/// <summary>A rendered notice: the subject and the same text as plain text and as HTML.</summary>
public sealed record NoticeText(string Subject, string PlainText, string Html);

/// <summary>
/// The notices' wording, in English and French. Names are HTML-encoded in the HTML part. Times are the school's
/// local time with its UTC offset (<c>08:05 (UTC+01:00)</c>), so a reader elsewhere is not misled. Day and month
/// names come from here, not from the machine's culture data (Saito runs in invariant-globalization mode).
/// </summary>
public static class NoticeTemplates
{
    private static readonly string[] s_frenchDays = ["dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"];

    private static readonly string[] s_frenchMonths =
        ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"];

    public static NoticeText Render(NoticeContent content)
    {
        ArgumentNullException.ThrowIfNull(content);
        var local = TimeZoneInfo.ConvertTime(content.At, content.Zone);
        bool french = string.Equals(content.Language, "fr", StringComparison.OrdinalIgnoreCase);
        string time = Time(local);
        string date = french ? FrenchDate(local) : local.ToString("dddd d MMMM yyyy", CultureInfo.InvariantCulture);
        string className = content.ClassName ?? (french ? "la classe" : "class");

        // {0} student, {1} school, {2} time, {3} date, {4} class, {5} grace minutes.
        var (subject, body, footer) = (content.Kind, french) switch
        {
            (NoticeKind.Arrived, false) => (
                "{0} has arrived at {1}",
                "{0} was checked in at {1} at {2} on {3}.",
                "This message was sent automatically by {1}'s attendance system; please do not reply to it."),
            (NoticeKind.Arrived, true) => (
                "{0} est arrivé(e) à {1}",
                "{0} a été enregistré(e) à l'arrivée à {1} à {2} le {3}.",
                "Ce message a été envoyé automatiquement par le système de présence de {1} ; merci de ne pas y répondre."),
            (_, false) => (
                "{0} has not arrived at {1}",
                "{0} had not been checked in at {1} {5} minutes after {4} started at {2} on {3}. If you expected this, there is nothing to do; otherwise please contact the school.",
                "This message was sent automatically by {1}'s attendance system; please do not reply to it."),
            (_, true) => (
                "{0} n'est pas arrivé(e) à {1}",
                "{0} n'était pas enregistré(e) à {1} {5} minutes après le début de {4} à {2} le {3}. Si c'était prévu, il n'y a rien à faire ; sinon, merci de contacter l'école.",
                "Ce message a été envoyé automatiquement par le système de présence de {1} ; merci de ne pas y répondre."),
        };

        string[] plain = [content.Student, content.School, time, date, className, content.GraceMinutes.ToString(CultureInfo.InvariantCulture)];
        string[] encoded = [.. plain.Select(v => WebUtility.HtmlEncode(v) ?? string.Empty)];
        string greeting = french ? "Bonjour," : "Hello,";
        string text = $"{greeting}\n\n{Format(body, plain)}\n\n-- \n{Format(footer, plain)}\n";
        string html =
            $"""
            <!DOCTYPE html>
            <html lang="{(french ? "fr" : "en")}">
            <head><meta charset="utf-8"><title>{Format(subject, encoded)}</title></head>
            <body>
            <p>{greeting}</p>
            <p>{Format(body, encoded)}</p>
            <p style="color:#666;font-size:smaller">{Format(footer, encoded)}</p>
            </body>
            </html>
            """;
        return new NoticeText(Format(subject, plain), text, html);
    }

    /// <summary><c>08:05 (UTC+01:00)</c>.</summary>
    internal static string Time(DateTimeOffset local)
    {
        var offset = local.Offset;
        string sign = offset < TimeSpan.Zero ? "-" : "+";
        return string.Create(CultureInfo.InvariantCulture, $"{local:HH:mm} (UTC{sign}{offset.Duration():hh\\:mm})");
    }

    private static string FrenchDate(DateTimeOffset local) =>
        string.Create(CultureInfo.InvariantCulture, $"{s_frenchDays[(int)local.DayOfWeek]} {local.Day} {s_frenchMonths[local.Month - 1]} {local.Year}");

    private static string Format(string template, string[] values) => string.Format(CultureInfo.InvariantCulture, template, values);
}

using System.Diagnostics.CodeAnalysis;
using System.Text.RegularExpressions;

namespace Saito.Registry.Notices;

/// <summary>
/// A notice's failure as Saito keeps and shows it, without email addresses: a mail server's refusal usually names the
/// recipient (<c>550 5.1.1 &lt;parent@example.org&gt;: user unknown</c>), and ops, who run the outbox, may not see
/// families' addresses (issue 32, item 7). The sender stores the reason already redacted (so the log lines that carry
/// it hold no address either); the API redacts again for those who may not see addresses, for rows stored before.
/// </summary>
public static partial class NoticeErrors
{
    /// <summary>What an address is replaced with.</summary>
    public const string Hidden = "(address hidden)";

    /// <summary><paramref name="error"/> with <paramref name="recipient"/> (however it is written) and anything else that looks like an email address replaced.</summary>
    [return: NotNullIfNotNull(nameof(error))]
    public static string? Redact(string? error, string? recipient)
    {
        if (string.IsNullOrEmpty(error))
        {
            return error;
        }

        if (!string.IsNullOrEmpty(recipient))
        {
            error = error.Replace(recipient, Hidden, StringComparison.OrdinalIgnoreCase);
        }

        return EmailLike().Replace(error, Hidden);
    }

    // Anything with an @ between two runs of characters an address may hold: generous on purpose (a false positive
    // hides a word of a server's reply; a false negative shows a family's address).
    [GeneratedRegex(@"[^\s<>()\[\]""',;:]+@[^\s<>()\[\]""',;:]+", RegexOptions.CultureInvariant)]
    private static partial Regex EmailLike();
}

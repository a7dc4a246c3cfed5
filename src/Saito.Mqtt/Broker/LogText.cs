using System.Text;

namespace Saito.Mqtt.Broker;

/// <summary>
/// What a client sent (client id, user name, topic), made safe for a log line: control characters and line and
/// paragraph separators are escaped (<c>\n</c>, <c>\u001b</c>), so a client id with a newline stays one log line and
/// cannot forge another. Long values are cut, marked with their full length.
/// </summary>
public static class LogText
{
    private const int MaxChars = 256;

    public static string Safe(string? text)
    {
        if (text is null)
        {
            return "(none)";
        }

        var span = text.AsSpan(0, Math.Min(text.Length, MaxChars));
        bool clean = text.Length <= MaxChars;
        foreach (char c in span)
        {
            if (NeedsEscape(c))
            {
                clean = false;
                break;
            }
        }

        if (clean)
        {
            return text;
        }

        var builder = new StringBuilder(span.Length + 16);
        foreach (char c in span)
        {
            switch (c)
            {
                case '\n': builder.Append("\\n"); break;
                case '\r': builder.Append("\\r"); break;
                case '\t': builder.Append("\\t"); break;
                default:
                    if (NeedsEscape(c))
                    {
                        builder.Append("\\u").Append(((int)c).ToString("x4", System.Globalization.CultureInfo.InvariantCulture));
                    }
                    else
                    {
                        builder.Append(c);
                    }

                    break;
            }
        }

        if (text.Length > MaxChars)
        {
            builder.Append("...(").Append(text.Length).Append(" chars)");
        }

        return builder.ToString();
    }

    /// <summary>True for characters a log line must not carry raw: C0 and C1 controls, DEL, U+2028 and U+2029.</summary>
    public static bool NeedsEscape(char c) => c < 0x20 || (c >= 0x7F && c <= 0x9F) || c is '\u2028' or '\u2029';

    /// <summary>True when <paramref name="text"/> has a character <see cref="NeedsEscape"/> would escape (a backslash alone is fine).</summary>
    public static bool HasControlCharacters(string text)
    {
        foreach (char c in text)
        {
            if (NeedsEscape(c))
            {
                return true;
            }
        }

        return false;
    }
}

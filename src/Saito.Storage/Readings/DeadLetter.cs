namespace Saito.Storage.Readings;

/// <summary>
/// A message, or one reading of it, that Saito could not store as a reading: kept with its reason so that
/// nothing is lost silently. The payload is truncated to <see cref="MaxPayloadChars"/> characters.
/// Text is made storable in every database: a NUL character (which PostgreSQL's <c>text</c> cannot hold) and
/// an unpaired surrogate (which UTF-8 cannot encode) become U+FFFD, and truncation never splits a surrogate pair.
/// </summary>
public sealed record DeadLetter
{
    public const int MaxPayloadChars = 4096;
    public const int MaxReasonChars = 1024;
    public const int MaxTopicChars = 1024;

    public DeadLetter(DateTime receivedAt, string topic, string? clientId, string reason, string detail, string payload)
    {
        ReceivedAt = ReadingTime.Truncate(receivedAt);
        Topic = Truncate(topic, MaxTopicChars);
        ClientId = clientId is null ? null : Truncate(clientId, 256);
        Reason = Truncate(reason, 64);
        Detail = Truncate(detail, MaxReasonChars);
        Payload = Truncate(payload, MaxPayloadChars);
    }

    /// <summary>
    /// Raw payload bytes as dead-letter text: UTF-8 (invalid bytes become U+FFFD), decoding no more bytes than
    /// <see cref="MaxPayloadChars"/> characters can take; the constructor then cuts and cleans it.
    /// </summary>
    public static string PayloadText(ReadOnlySpan<byte> payload)
    {
        // A character takes at most 3 bytes (a 4-byte sequence is 2 chars), so this many bytes give enough text.
        int take = Math.Min(payload.Length, (MaxPayloadChars * 3) + 3);
        return System.Text.Encoding.UTF8.GetString(payload[..take]);
    }

    public DateTime ReceivedAt { get; }
    public string Topic { get; }
    public string? ClientId { get; }

    /// <summary>A short, stable code (see <c>docs/protocol.md</c>): <c>malformed-json</c>, <c>out-of-range</c>, ...</summary>
    public string Reason { get; }

    /// <summary>What exactly was wrong, for a person.</summary>
    public string Detail { get; }

    /// <summary>The raw payload (or the rejected part of it) as text, truncated.</summary>
    public string Payload { get; }

    private static string Truncate(string value, int max)
    {
        if (value.Length > max)
        {
            value = value[..(char.IsHighSurrogate(value[max - 1]) ? max - 1 : max)];
        }

        return Storable(value);
    }

    /// <summary>The text with NUL and unpaired surrogates replaced by U+FFFD; the same instance when there are none.</summary>
    private static string Storable(string value)
    {
        int first = FirstUnstorable(value);
        if (first < 0)
        {
            return value;
        }

        return string.Create(value.Length, (value, first), static (span, state) =>
        {
            var (text, start) = state;
            text.AsSpan().CopyTo(span);
            for (int i = start; i < span.Length; i++)
            {
                char c = span[i];
                if (c == '\0')
                {
                    span[i] = '\uFFFD';
                }
                else if (char.IsHighSurrogate(c) && i + 1 < span.Length && char.IsLowSurrogate(span[i + 1]))
                {
                    i++;
                }
                else if (char.IsSurrogate(c))
                {
                    span[i] = '\uFFFD';
                }
            }
        });
    }

    private static int FirstUnstorable(string value)
    {
        for (int i = 0; i < value.Length; i++)
        {
            char c = value[i];
            if (c == '\0')
            {
                return i;
            }

            if (char.IsSurrogate(c))
            {
                if (char.IsHighSurrogate(c) && i + 1 < value.Length && char.IsLowSurrogate(value[i + 1]))
                {
                    i++;
                    continue;
                }

                return i;
            }
        }

        return -1;
    }
}

/// <summary>What a device says of itself in its hello message (all optional).</summary>
public sealed record DeviceAnnouncement(string? Kind, int? Channels, string? Firmware, string? Hub);

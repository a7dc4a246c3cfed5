using System.Text;
using System.Text.Unicode;

namespace Saito.Readings;

/// <summary>
/// A message, or one reading of it, that Saito could not store as a reading: kept with its reason so that
/// nothing is lost silently, and with the rejected bytes exactly, so that it can be replayed once the cause is fixed.
/// <para>
/// <see cref="Payload"/> is text for a person; <see cref="PayloadBytes"/> is set only when that text is not exactly
/// the rejected bytes. A dead letter made from bytes (<see cref="FromPayload"/>) whose bytes are UTF-8 without NUL
/// keeps them whole as <see cref="Payload"/> (UTF-8 round-trips, so its bytes are the original) and no
/// <see cref="PayloadBytes"/>. Bytes that are not UTF-8, or hold a NUL (which PostgreSQL's <c>text</c> cannot
/// hold), keep a readable preview of <see cref="MaxPayloadChars"/> characters (U+FFFD for what is not text) as
/// <see cref="Payload"/> and the exact bytes as <see cref="PayloadBytes"/>. <see cref="OriginalPayload"/> gives the
/// bytes back either way: the one place that decodes a stored dead letter.
/// </para>
/// Text is made storable in every database: a NUL character and an unpaired surrogate (which UTF-8 cannot encode)
/// become U+FFFD, and a cut never splits a surrogate pair.
/// </summary>
public sealed record DeadLetter
{
    /// <summary>The length of the text preview of a payload that is not UTF-8 text (its bytes are kept whole).</summary>
    public const int MaxPayloadChars = 4096;
    public const int MaxReasonChars = 1024;
    public const int MaxTopicChars = 1024;

    /// <summary>
    /// A dead letter with <paramref name="payload"/> as its text (made storable, not cut) and, when that text is not
    /// exactly the rejected bytes, the bytes themselves in <paramref name="payloadBytes"/> (as read back from a table).
    /// </summary>
    public DeadLetter(DateTime receivedAt, string topic, string? clientId, string reason, string detail, string payload, byte[]? payloadBytes = null)
    {
        ArgumentNullException.ThrowIfNull(payload);
        ReceivedAt = ReadingTime.Truncate(receivedAt);
        Topic = Truncate(topic, MaxTopicChars);
        ClientId = clientId is null ? null : Truncate(clientId, 256);
        Reason = Truncate(reason, 64);
        Detail = Truncate(detail, MaxReasonChars);
        Payload = Storable(payload);
        PayloadBytes = payloadBytes;
    }

    /// <summary>
    /// A dead letter holding <paramref name="payload"/> exactly: as whole text when it is UTF-8 without NUL, else as
    /// a preview (<see cref="PayloadText"/>) and the bytes. Every dead letter made from raw bytes is made here.
    /// </summary>
    public static DeadLetter FromPayload(DateTime receivedAt, string topic, string? clientId, string reason, string detail, ReadOnlySpan<byte> payload)
    {
        bool text = payload.IndexOf((byte)0) < 0 && Utf8.IsValid(payload);
        return text
            ? new DeadLetter(receivedAt, topic, clientId, reason, detail, Encoding.UTF8.GetString(payload))
            : new DeadLetter(receivedAt, topic, clientId, reason, detail, PayloadText(payload), payload.ToArray());
    }

    /// <summary>
    /// Raw payload bytes as a text preview: UTF-8 (invalid bytes become U+FFFD), at most <see cref="MaxPayloadChars"/>
    /// characters, never splitting a surrogate pair. For a person; <see cref="FromPayload"/> keeps the bytes.
    /// </summary>
    public static string PayloadText(ReadOnlySpan<byte> payload)
    {
        // A character takes at most 3 bytes (a 4-byte sequence is 2 chars), so this many bytes give enough text.
        int take = Math.Min(payload.Length, (MaxPayloadChars * 3) + 3);
        return Truncate(Encoding.UTF8.GetString(payload[..take]), MaxPayloadChars);
    }

    /// <summary>The rejected bytes exactly: <see cref="PayloadBytes"/> when set, else <see cref="Payload"/> as UTF-8.</summary>
    public byte[] OriginalPayload() => PayloadBytes ?? Encoding.UTF8.GetBytes(Payload);

    public DateTime ReceivedAt { get; }
    public string Topic { get; }
    public string? ClientId { get; }

    /// <summary>A short, stable code (see <c>docs/protocol.md</c>): <c>malformed-json</c>, <c>out-of-range</c>, ...</summary>
    public string Reason { get; }

    /// <summary>What exactly was wrong, for a person.</summary>
    public string Detail { get; }

    /// <summary>The payload (or the rejected part of it) as text: exactly, or a preview when <see cref="PayloadBytes"/> is set.</summary>
    public string Payload { get; }

    /// <summary>The rejected bytes, when <see cref="Payload"/> is not exactly them (not UTF-8, or a NUL); else null.</summary>
    public byte[]? PayloadBytes { get; }

    public bool Equals(DeadLetter? other) =>
        other is not null
        && ReceivedAt == other.ReceivedAt
        && Topic == other.Topic
        && ClientId == other.ClientId
        && Reason == other.Reason
        && Detail == other.Detail
        && Payload == other.Payload
        && (PayloadBytes is null ? other.PayloadBytes is null : other.PayloadBytes is not null && PayloadBytes.AsSpan().SequenceEqual(other.PayloadBytes));

    public override int GetHashCode() => HashCode.Combine(ReceivedAt, Topic, ClientId, Reason, Detail, Payload, PayloadBytes?.Length);

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

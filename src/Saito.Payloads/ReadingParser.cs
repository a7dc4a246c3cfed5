using System.Diagnostics.CodeAnalysis;
using System.Text.Json;
using Saito.Readings;

namespace Saito.Payloads;

/// <summary>
/// Turns a payload into readings and dead letters (docs/protocol.md). Thread-safe and allocation-free on the good
/// path (one reused scratch session per thread); one instance serves the whole process.
/// </summary>
public sealed class ReadingParser
{
    /// <summary>
    /// No depth limit beyond the payload's size (<see cref="PayloadLimits.MaxPayloadBytes"/>): the reader keeps one
    /// bit per level and nothing here recurses, while a limit made valid JSON nested deep in one reading's ignored
    /// field reject the whole message, good readings and all. What is too deep for a field is that reading's error.
    /// </summary>
    internal static readonly JsonReaderOptions ReaderOptions = new()
    {
        CommentHandling = JsonCommentHandling.Disallow,
        AllowTrailingCommas = false,
        MaxDepth = int.MaxValue,
    };

    private readonly PayloadLimits _options;
    private readonly TimeProvider _timeProvider;

    public ReadingParser(PayloadLimits options, TimeProvider timeProvider)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(timeProvider);
        _options = options;
        _timeProvider = timeProvider;
    }

    /// <summary>
    /// Parses one message's payload. Never throws on bad input. Appends each valid reading to
    /// <paramref name="readings"/> and, for each rejected reading (or SenML record), one dead letter naming its
    /// index and field, with the offending element's JSON as payload. A payload that cannot be parsed at all (not
    /// JSON, too large, empty) gives one dead letter with the payload text. Valid readings beside bad ones are kept.
    /// Every reading gets <see cref="ReadingParseContext.DeviceId"/>, <see cref="ReadingParseContext.Kind"/> and
    /// <see cref="ReadingParseContext.ReceivedAt"/> (the parser's clock if that is <c>default</c>).
    /// </summary>
    public MessageParseResult Parse(in ReadingParseContext context, ReadOnlySpan<byte> payload,
        ICollection<Reading> readings, ICollection<DeadLetter> deadLetters)
    {
        ArgumentNullException.ThrowIfNull(readings);
        ArgumentNullException.ThrowIfNull(deadLetters);
        if ((byte)context.Kind > (byte)ReadingKind.Pressure)
        {
            throw new ArgumentOutOfRangeException(nameof(context), context.Kind, "The context's reading kind is not defined.");
        }

        var receivedAt = context.ReceivedAt == default
            ? ReadingTime.Truncate(_timeProvider.GetUtcNow().UtcDateTime)
            : ReadingTime.Truncate(context.ReceivedAt);
        var session = ParseSession.Rent();
        try
        {
            session.Begin(context, receivedAt, _options);
            ParseInto(session, context.ContentType, payload);
            session.AddSummary(payload);

            CopyTo(session.Readings, readings);
            CopyTo(session.DeadLetters, deadLetters);
            return new MessageParseResult(session.Readings.Count, session.DeadLetters.Count);
        }
        finally
        {
            ParseSession.Return(session);
        }
    }

    private void ParseInto(ParseSession session, string? contentType, ReadOnlySpan<byte> payload)
    {
        if (payload.Length > _options.MaxPayloadBytes)
        {
            // Only the start is kept: a payload past the limit cannot be replayed as it is, and a client must not
            // be able to write megabytes into dead_letter per message.
            var start = payload[..Math.Min(payload.Length, DeadLetter.MaxPayloadChars)];
            session.Reject(DeadLetterReasons.PayloadTooLarge,
                FormattableString.Invariant($"the payload is {payload.Length} bytes; at most {_options.MaxPayloadBytes} are parsed (Ingestion:MaxPayloadBytes); the payload here is its first {start.Length} bytes"),
                start);
            return;
        }

        if (payload is [0xEF, 0xBB, 0xBF, ..])
        {
            payload = payload[3..]; // a UTF-8 byte order mark, which Utf8JsonReader refuses
        }

        if (IsBlank(payload))
        {
            session.Reject(DeadLetterReasons.Empty, "the payload is empty", payload);
            return;
        }

        var format = DetectFormat(contentType, payload);
        try
        {
            if (format == PayloadFormat.SenML)
            {
                SenMLFormat.Parse(session, payload);
            }
            else
            {
                SaitoJsonFormat.Parse(session, payload);
            }

            if (session.Readings.Count == 0 && session.DeadLetters.Count == 0)
            {
                session.Reject(DeadLetterReasons.Empty, "the payload holds no reading", payload);
            }
        }
        catch (JsonException ex)
        {
            session.ClearOutputs();
            session.Reject(DeadLetterReasons.MalformedJson, "the payload is not valid JSON: " + ex.Message, payload);
        }
    }

    internal enum PayloadFormat
    {
        SaitoJson,
        SenML,
    }

    /// <summary>
    /// The MQTT 5 content type decides when it names a format; otherwise a top-level array whose first element
    /// has a SenML label and no <c>ts</c> is SenML, and everything else is Saito JSON.
    /// </summary>
    internal static PayloadFormat DetectFormat(string? contentType, ReadOnlySpan<byte> payload)
    {
        if (contentType is not null)
        {
            var mediaType = contentType.AsSpan();
            int semicolon = mediaType.IndexOf(';');
            if (semicolon >= 0)
            {
                mediaType = mediaType[..semicolon];
            }

            mediaType = mediaType.Trim();
            if (mediaType.Equals("application/senml+json", StringComparison.OrdinalIgnoreCase))
            {
                return PayloadFormat.SenML;
            }

            if (mediaType.Equals("application/json", StringComparison.OrdinalIgnoreCase))
            {
                return PayloadFormat.SaitoJson;
            }
        }

        return LooksLikeSenML(payload) ? PayloadFormat.SenML : PayloadFormat.SaitoJson;
    }

    private static bool LooksLikeSenML(ReadOnlySpan<byte> payload)
    {
        int first = 0;
        while (first < payload.Length && IsJsonWhiteSpace(payload[first]))
        {
            first++;
        }

        if (first == payload.Length || payload[first] != (byte)'[')
        {
            return false;
        }

        try
        {
            var reader = new Utf8JsonReader(payload, ReaderOptions);
            if (!reader.Read() || !reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                return false;
            }

            bool senml = false;
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (!reader.ValueIsEscaped)
                {
                    var name = reader.ValueSpan;
                    if (name.SequenceEqual("ts"u8))
                    {
                        return false;
                    }

                    senml |= SenMLFormat.IsSenMLLabel(name);
                }

                reader.Read();
                reader.Skip();
            }

            return senml;
        }
        catch (JsonException)
        {
            return false; // the Saito JSON pass reports it as malformed-json
        }
    }

    /// <summary>
    /// Reads a hello payload (<c>{"kind":"biosensor","channels":1,"firmware":"1.4.2"}</c>, every field optional,
    /// unknown fields ignored; an empty payload is a bare hello). False with a reason for a person otherwise.
    /// </summary>
    public bool TryParseHello(ReadOnlySpan<byte> payload, string hub,
        [NotNullWhen(true)] out DeviceAnnouncement? announcement, [NotNullWhen(false)] out string? error)
    {
        announcement = null;
        int limit = Math.Min(ReadingLimits.MaxHelloBytes, _options.MaxPayloadBytes);
        if (payload.Length > limit)
        {
            error = FormattableString.Invariant($"the hello payload is {payload.Length} bytes; at most {limit} are read");
            return false;
        }

        if (payload is [0xEF, 0xBB, 0xBF, ..])
        {
            payload = payload[3..];
        }

        if (IsBlank(payload))
        {
            announcement = new DeviceAnnouncement(null, null, null, hub);
            error = null;
            return true;
        }

        string? kind = null;
        int? channels = null;
        string? firmware = null;
        try
        {
            var reader = new Utf8JsonReader(payload, ReaderOptions);
            reader.Read();
            if (reader.TokenType != JsonTokenType.StartObject)
            {
                error = "the hello payload must be a JSON object such as {\"kind\":\"biosensor\",\"channels\":1,\"firmware\":\"1.4.2\"}";
                return false;
            }

            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                string name = reader.GetString()!;
                reader.Read();
                switch (name)
                {
                    case "kind" when reader.TokenType == JsonTokenType.String:
                        kind = reader.GetString()!;
                        if (!ReadingKinds.TryParse(kind, out _))
                        {
                            error = $"hello \"kind\" is \"{Shorten(kind)}\"; expected biosensor, location or pressure";
                            return false;
                        }

                        break;
                    case "kind" when reader.TokenType != JsonTokenType.Null:
                        error = "hello \"kind\" must be a string: biosensor, location or pressure";
                        reader.Skip();
                        return false;
                    case "channels" when reader.TokenType == JsonTokenType.Number
                                         && reader.TryGetInt32(out int count) && count is >= 1 and <= ReadingLimits.ChannelMax + 1:
                        channels = count;
                        break;
                    case "channels" when reader.TokenType != JsonTokenType.Null:
                        error = FormattableString.Invariant($"hello \"channels\" must be an integer from 1 to {ReadingLimits.ChannelMax + 1}");
                        reader.Skip();
                        return false;
                    case "firmware" when reader.TokenType == JsonTokenType.String:
                        firmware = reader.GetString()!;
                        if (firmware.Length > ReadingLimits.MaxFirmwareLength || firmware.AsSpan().ContainsAnyInRange('\0', '\x1F'))
                        {
                            error = FormattableString.Invariant($"hello \"firmware\" must be at most {ReadingLimits.MaxFirmwareLength} characters without control characters");
                            return false;
                        }

                        break;
                    case "firmware" when reader.TokenType != JsonTokenType.Null:
                        error = "hello \"firmware\" must be a string";
                        reader.Skip();
                        return false;
                    default:
                        reader.Skip();
                        break;
                }
            }

            reader.Read(); // nothing may follow the object
        }
        catch (JsonException ex)
        {
            error = "the hello payload is not valid JSON: " + ex.Message;
            return false;
        }
        catch (InvalidOperationException ex)
        {
            // GetString on text that is not valid UTF-8 (or an escaped lone surrogate).
            error = "the hello payload holds a string that is not valid text: " + ex.Message;
            return false;
        }

        announcement = new DeviceAnnouncement(kind, channels, firmware, hub);
        error = null;
        return true;
    }

    /// <summary>
    /// The unescaped bytes of the current string or property name, into <paramref name="buffer"/>. False when it
    /// does not fit or does not unescape (a lone surrogate in a \u escape): the caller treats it as unreadable.
    /// </summary>
    internal static bool TryUnescape(ref Utf8JsonReader reader, Span<byte> buffer, out int length)
    {
        length = 0;
        if (reader.ValueSpan.Length > buffer.Length)
        {
            return false;
        }

        try
        {
            length = reader.CopyString(buffer);
            return true;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    private static void CopyTo<T>(List<T> source, ICollection<T> destination)
    {
        if (source.Count == 0)
        {
            return;
        }

        if (destination is List<T> list)
        {
            list.AddRange(source);
            return;
        }

        foreach (var item in source)
        {
            destination.Add(item);
        }
    }

    private static bool IsBlank(ReadOnlySpan<byte> payload)
    {
        foreach (byte b in payload)
        {
            if (!IsJsonWhiteSpace(b))
            {
                return false;
            }
        }

        return true;
    }

    private static bool IsJsonWhiteSpace(byte b) => b is (byte)' ' or (byte)'\t' or (byte)'\n' or (byte)'\r';

    private static string Shorten(string text) => text.Length <= 64 ? text : text[..64] + "...";
}

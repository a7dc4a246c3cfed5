using System.Text.Json;
using Saito.Readings;
using static System.FormattableString;

namespace Saito.Payloads;

/// <summary>
/// Saito's own JSON: one object or an array of objects, each one reading (docs/protocol.md, "Saito JSON").
/// One forward pass of <see cref="Utf8JsonReader"/> over the payload; names are matched on their UTF-8 bytes,
/// timestamps are read from the number's or string's bytes without a detour through double or string.
/// An element with anything wrong is dead-lettered whole (the first problem is the detail); its neighbours
/// are unaffected.
/// </summary>
internal static class SaitoJsonFormat
{
    private enum Key : byte
    {
        // 0..7 are the ValueField values.
        Ts = 8,
        Ch = 9,
        Unknown = 10,
    }

    public static void Parse(ParseSession session, ReadOnlySpan<byte> payload)
    {
        var reader = new Utf8JsonReader(payload, ReadingParser.ReaderOptions);
        reader.Read();
        switch (reader.TokenType)
        {
            case JsonTokenType.StartObject:
                ParseElement(session, ref reader, payload, 0);
                break;
            case JsonTokenType.StartArray:
                ParseArray(session, ref reader, payload);
                break;
            default:
                var type = reader.TokenType;
                reader.Read(); // the payload must still be one JSON value, or it is malformed
                session.Reject(DeadLetterReasons.WrongType,
                    $"the payload is a JSON {Describe(type)}; expected an object or an array of objects", payload);
                return;
        }

        reader.Read(); // throws on anything but white space after the value
    }

    private static void ParseArray(ParseSession session, ref Utf8JsonReader reader, ReadOnlySpan<byte> payload)
    {
        int index = 0;
        int dropped = 0;
        int droppedStart = 0;
        int droppedEnd = 0;
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            if (index >= session.MaxReadings)
            {
                if (dropped == 0)
                {
                    droppedStart = (int)reader.TokenStartIndex;
                }

                reader.Skip();
                droppedEnd = (int)reader.BytesConsumed;
                dropped++;
            }
            else if (reader.TokenType == JsonTokenType.StartObject)
            {
                ParseElement(session, ref reader, payload, index);
            }
            else
            {
                int start = (int)reader.TokenStartIndex;
                var type = reader.TokenType;
                reader.Skip();
                session.Reject(DeadLetterReasons.WrongType,
                    Invariant($"reading {index}: expected an object, got a JSON {Describe(type)}"),
                    payload[start..(int)reader.BytesConsumed]);
            }

            index++;
        }

        if (index == 0)
        {
            session.Reject(DeadLetterReasons.Empty, "the payload is an empty array", payload);
        }
        else if (dropped > 0)
        {
            session.Reject(DeadLetterReasons.TooManyReadings,
                Invariant($"the message holds {index} readings; the first {session.MaxReadings} were taken and the {dropped} after them dropped (Ingestion:MaxReadingsPerMessage); the payload here is those {dropped}"),
                Bracketed(payload[droppedStart..droppedEnd]));
        }
    }

    /// <summary>Elements of an array, as the array <c>[elements]</c>: the dropped readings, replayable as one message.</summary>
    private static byte[] Bracketed(ReadOnlySpan<byte> elements)
    {
        var array = new byte[elements.Length + 2];
        array[0] = (byte)'[';
        elements.CopyTo(array.AsSpan(1));
        array[^1] = (byte)']';
        return array;
    }

    private static void ParseElement(ParseSession session, ref Utf8JsonReader reader, ReadOnlySpan<byte> payload, int index)
    {
        int start = (int)reader.TokenStartIndex;
        var kind = session.Kind;
        var values = default(ValueSet);
        uint seen = 0;
        long ticks = 0;
        bool hasTimestamp = false;
        int channel = 0;
        string? reason = null;
        string? detail = null;

        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var key = reader.ValueIsEscaped ? ClassifyEscaped(ref reader, session.Small) : Classify(reader.ValueSpan);
            reader.Read();
            if (reason is not null || key == Key.Unknown)
            {
                reader.Skip();
                continue;
            }

            uint bit = 1u << (int)key;
            if ((seen & bit) != 0)
            {
                reason = DeadLetterReasons.DuplicateField;
                detail = $"\"{NameOf(key)}\" is given twice";
                reader.Skip();
                continue;
            }

            seen |= bit;
            if (reader.TokenType == JsonTokenType.Null)
            {
                continue; // null is the same as absent
            }

            switch (key)
            {
                case Key.Ts:
                    detail = ReadTimestamp(session, ref reader, out ticks, out reason);
                    hasTimestamp = detail is null;
                    break;
                case Key.Ch:
                    detail = ReadChannel(ref reader, out channel, out reason);
                    break;
                default:
                    detail = ReadValue(kind, (ValueField)key, ref reader, ref values, out reason);
                    break;
            }

            if (detail is null)
            {
                reason = null;
            }
        }

        int end = (int)reader.BytesConsumed;
        if (reason is null)
        {
            if (!hasTimestamp)
            {
                reason = DeadLetterReasons.MissingField;
                detail = "no ts: every reading needs its time (ISO 8601 with Z or an offset, or epoch milliseconds)";
            }
            else if (values.Mask == 0)
            {
                reason = DeadLetterReasons.MissingField;
                detail = kind == ReadingKind.Biosensor
                    ? "no value: a biosensor reading needs at least one of hr, sys, dia, temp"
                    : $"no value: a {ReadingKinds.Name(kind)} reading needs {ReadingFields.NamesOf(kind)}";
            }
            else if ((values.Mask & ReadingFields.RequiredMask(kind)) != ReadingFields.RequiredMask(kind))
            {
                reason = DeadLetterReasons.MissingField;
                detail = $"{Missing(values.Mask, kind)} missing: a {ReadingKinds.Name(kind)} reading needs {ReadingFields.NamesOf(kind)}";
            }
            else if (kind == ReadingKind.Biosensor && values.DiastolicNotBelowSystolic)
            {
                reason = DeadLetterReasons.OutOfRange;
                detail = Invariant($"dia {values.V2} is not below sys {values.V1}");
            }
        }

        if (reason is not null)
        {
            session.Reject(reason, Invariant($"reading {index}: {detail}"), payload[start..end]);
            return;
        }

        session.Readings.Add(values.ToReading(kind, session.DeviceId, channel, ticks, session.ReceivedAt));
    }

    private static string? ReadValue(ReadingKind kind, ValueField field, ref Utf8JsonReader reader, ref ValueSet values, out string reason)
    {
        var fieldKind = ReadingFields.KindOf(field);
        if (fieldKind != kind)
        {
            reader.Skip();
            reason = DeadLetterReasons.WrongKind;
            return $"\"{ReadingFields.NameOf(field)}\" is a {ReadingKinds.Name(fieldKind)} value; this topic carries {ReadingKinds.Name(kind)} readings ({ReadingFields.NamesOf(kind)})";
        }

        if (reader.TokenType != JsonTokenType.Number)
        {
            reason = DeadLetterReasons.WrongType;
            return $"\"{ReadingFields.NameOf(field)}\" must be a number, got {Describe(ref reader)}";
        }

        if (!reader.TryGetDouble(out double value) || !double.IsFinite(value))
        {
            reason = DeadLetterReasons.NotFinite;
            return $"\"{ReadingFields.NameOf(field)}\" {ParseSession.Excerpt(reader.ValueSpan)} is not a finite number";
        }

        if (!ReadingFields.InRange(field, value))
        {
            reason = DeadLetterReasons.OutOfRange;
            return ReadingFields.OutOfRangeDetail(field, value);
        }

        values.Set(ReadingFields.SlotOf(field), value);
        reason = string.Empty;
        return null;
    }

    private static string? ReadChannel(ref Utf8JsonReader reader, out int channel, out string reason)
    {
        if (reader.TokenType == JsonTokenType.Number && reader.TryGetInt32(out channel)
            && channel is >= ReadingLimits.ChannelMin and <= ReadingLimits.ChannelMax)
        {
            reason = string.Empty;
            return null;
        }

        channel = 0;
        reason = DeadLetterReasons.BadChannel;
        return $"\"ch\" must be an integer from {ReadingLimits.ChannelMin} to {ReadingLimits.ChannelMax}, got {Describe(ref reader)}";
    }

    private static string? ReadTimestamp(ParseSession session, ref Utf8JsonReader reader, out long ticks, out string reason)
    {
        ticks = 0;
        if (reader.TokenType == JsonTokenType.Number)
        {
            var text = reader.ValueSpan;
            if (!JsonNumbers.TryParseScaled(text, 4, out long ticksSinceEpoch)
                || ticksSinceEpoch > DateTime.MaxValue.Ticks - DateTime.UnixEpoch.Ticks)
            {
                reason = text[0] == (byte)'-' ? DeadLetterReasons.TimestampPast : DeadLetterReasons.TimestampFuture;
                return $"ts {ParseSession.Excerpt(text)} is not a time Saito can store (epoch milliseconds)" + EpochHint(text);
            }

            ticks = DateTime.UnixEpoch.Ticks + ticksSinceEpoch;
            string? problem = session.CheckTime(ticks, "ts", out reason);
            return problem is null ? null : problem + EpochHint(text);
        }

        if (reader.TokenType != JsonTokenType.String)
        {
            reason = DeadLetterReasons.WrongType;
            return $"\"ts\" must be an ISO 8601 string or epoch milliseconds (a number), got {Describe(ref reader)}";
        }

        ReadOnlySpan<byte> iso = reader.ValueSpan;
        if (reader.ValueIsEscaped)
        {
            iso = ReadingParser.TryUnescape(ref reader, session.Small, out int length) ? session.Small.AsSpan(0, length) : [];
        }

        switch (IsoTimestamp.TryParse(iso, out ticks))
        {
            case IsoTimestamp.Result.Ok:
                return session.CheckTime(ticks, "ts", out reason);
            case IsoTimestamp.Result.NoZone:
                reason = DeadLetterReasons.BadTimestamp;
                return $"ts \"{ParseSession.Excerpt(reader.ValueSpan)}\" has no time zone: end it with Z (UTC) or an offset such as +02:00";
            case IsoTimestamp.Result.LeapSecond:
                reason = DeadLetterReasons.BadTimestamp;
                return $"ts \"{ParseSession.Excerpt(reader.ValueSpan)}\" is a leap second (:60), which cannot be stored";
            default:
                reason = DeadLetterReasons.BadTimestamp;
                return $"ts \"{ParseSession.Excerpt(reader.ValueSpan)}\" is not an ISO 8601 date-time such as 2025-10-06T09:00:00.250Z";
        }
    }

    /// <summary>A hint for the commonest clock mistake: epoch seconds (or microseconds) where milliseconds belong.</summary>
    private static string EpochHint(ReadOnlySpan<byte> number) =>
        !JsonNumbers.TryParseScaled(number, 0, out long milliseconds) ? string.Empty : milliseconds switch
        {
            >= 100_000_000 and < 10_000_000_000 => "; a numeric ts is epoch milliseconds, and this looks like seconds",
            >= 100_000_000_000_000 and < 10_000_000_000_000_000 => "; a numeric ts is epoch milliseconds, and this looks like microseconds",
            _ => string.Empty,
        };

    private static string Missing(byte mask, ReadingKind kind)
    {
        var missing = new List<string>(3);
        for (int slot = 0; slot < 3; slot++)
        {
            if ((ReadingFields.RequiredMask(kind) & (1 << slot)) != 0 && (mask & (1 << slot)) == 0)
            {
                missing.Add(kind == ReadingKind.Location ? ReadingFields.NameOf((ValueField)((int)ValueField.X + slot)) : "kpa");
            }
        }

        return string.Join(", ", missing);
    }

    private static Key Classify(ReadOnlySpan<byte> name) =>
        name.SequenceEqual("ts"u8) ? Key.Ts
        : name.SequenceEqual("ch"u8) ? Key.Ch
        : ReadingFields.TryParseName(name, out var field) ? (Key)field
        : Key.Unknown;

    private static Key ClassifyEscaped(ref Utf8JsonReader reader, byte[] buffer) =>
        ReadingParser.TryUnescape(ref reader, buffer, out int length) ? Classify(buffer.AsSpan(0, length)) : Key.Unknown;

    private static string NameOf(Key key) => key switch
    {
        Key.Ts => "ts",
        Key.Ch => "ch",
        _ => ReadingFields.NameOf((ValueField)key),
    };

    /// <summary>"a string \"72\"", "true", "an object": what a value was, for a detail.</summary>
    internal static string Describe(ref Utf8JsonReader reader) => reader.TokenType switch
    {
        JsonTokenType.String => $"a string \"{ParseSession.Excerpt(reader.ValueSpan)}\"",
        JsonTokenType.Number => ParseSession.Excerpt(reader.ValueSpan),
        JsonTokenType.True => "true",
        JsonTokenType.False => "false",
        JsonTokenType.Null => "null",
        _ => SkipAndDescribe(ref reader),
    };

    private static string SkipAndDescribe(ref Utf8JsonReader reader)
    {
        var type = reader.TokenType;
        reader.Skip();
        return "a JSON " + Describe(type);
    }

    internal static string Describe(JsonTokenType type) => type switch
    {
        JsonTokenType.StartObject => "object",
        JsonTokenType.StartArray => "array",
        JsonTokenType.String => "string",
        JsonTokenType.Number => "number",
        JsonTokenType.True or JsonTokenType.False => "boolean",
        JsonTokenType.Null => "null",
        _ => type.ToString(),
    };
}

using System.Buffers;
using System.Text.Json;
using Saito.Readings;
using static System.FormattableString;

namespace Saito.Payloads;

/// <summary>
/// SenML JSON (RFC 8428) as Saito reads it (docs/protocol.md, "SenML"): base fields carry forward; the resolved
/// name's last segment is the field and the segment before it, when it is a number, the channel; resolved
/// times below 2^28 s are relative to the time Saito received the message; records of one channel and time
/// make one reading. A problem with one record dead-letters that record; a problem with a base field (or a
/// newer version, or an unknown must-understand field) makes the whole pack unusable: one dead letter.
/// </summary>
internal static partial class SenMLFormat
{
    private enum Label : byte
    {
        Unknown,
        BaseName,
        BaseTime,
        BaseUnit,
        BaseValue,
        BaseSum,
        BaseVersion,
        Name,
        Unit,
        Value,
        OtherValue,
        Sum,
        Time,
        UpdateTime,
        MustUnderstand,
    }

    private struct Bases
    {
        public int NameLength;
        public long TimeTicks;
        public Unit Unit;
        public string? UnitText;
        public double Value;
        public int Version;
    }

    private ref struct Record
    {
        public bool HasNonBase;
        public bool HasField;
        public bool HasLabel;
        public bool HasTime;
        public bool HasName;
        public bool HasUnit;
        public bool HasValue;
        public bool HasOtherValue;
        public int NameLength;
        public Unit Unit;
        public ReadOnlySpan<byte> UnitText;
        public double Value;
        public long TimeTicks;
        public string? Reason;
        public string? Detail;

        public void Fail(string reason, string detail)
        {
            if (Reason is null)
            {
                Reason = reason;
                Detail = detail;
            }
        }
    }

    private const long RelativeLimitTicks = ReadingLimits.SenMLRelativeTimeLimitSeconds * TimeSpan.TicksPerSecond;

    public static void Parse(ParseSession session, ReadOnlySpan<byte> payload)
    {
        var reader = new Utf8JsonReader(payload, ReadingParser.ReaderOptions);
        reader.Read();
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            var type = reader.TokenType;
            reader.Skip();
            reader.Read(); // malformed JSON wins over a wrong shape
            session.Reject(DeadLetterReasons.MalformedSenML,
                $"a SenML pack is a JSON array of records; this payload is a JSON {SaitoJsonFormat.Describe(type)}", payload);
            return;
        }

        var bases = new Bases { Version = ReadingLimits.SenMLVersion };
        string? packError = null;
        int index = 0;
        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            if (packError is not null)
            {
                reader.Skip();
            }
            else if (reader.TokenType == JsonTokenType.StartObject)
            {
                ParseRecord(session, ref reader, payload, index, ref bases, ref packError);
            }
            else
            {
                int start = (int)reader.TokenStartIndex;
                var type = reader.TokenType;
                reader.Skip();
                session.RecordSpans.Add((start, (int)reader.BytesConsumed));
                session.Reject(DeadLetterReasons.MalformedSenML,
                    Invariant($"record {index}: a SenML record is a JSON object, got a JSON {SaitoJsonFormat.Describe(type)}"),
                    payload[start..(int)reader.BytesConsumed]);
            }

            index++;
        }

        reader.Read(); // throws on anything but white space after the array

        if (packError is not null)
        {
            session.ClearOutputs();
            session.Reject(DeadLetterReasons.MalformedSenML, packError, payload);
            return;
        }

        if (index == 0)
        {
            session.Reject(DeadLetterReasons.Empty, "the payload is an empty SenML pack", payload);
            return;
        }

        Finish(session, payload);
    }

    private static readonly SearchValues<byte> NameCharacters =
        SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-:./_"u8);

    /// <summary>RFC 8428: A-Z a-z 0-9 - : . / _, and the first a letter or digit.</summary>
    private static bool IsValidName(ReadOnlySpan<byte> name) =>
        char.IsAsciiLetterOrDigit((char)name[0]) && !name.ContainsAnyExcept(NameCharacters);

    /// <summary>True for the labels RFC 8428 defines (for telling SenML from Saito JSON).</summary>
    internal static bool IsSenMLLabel(ReadOnlySpan<byte> name) => Classify(name) is not (Label.Unknown or Label.MustUnderstand);

    private static Label Classify(ReadOnlySpan<byte> name)
    {
        switch (name.Length)
        {
            case 1:
                switch (name[0])
                {
                    case (byte)'n':
                        return Label.Name;
                    case (byte)'u':
                        return Label.Unit;
                    case (byte)'v':
                        return Label.Value;
                    case (byte)'s':
                        return Label.Sum;
                    case (byte)'t':
                        return Label.Time;
                }

                break;
            case 2:
                if (name[0] == (byte)'b')
                {
                    switch (name[1])
                    {
                        case (byte)'n':
                            return Label.BaseName;
                        case (byte)'t':
                            return Label.BaseTime;
                        case (byte)'u':
                            return Label.BaseUnit;
                        case (byte)'v':
                            return Label.BaseValue;
                        case (byte)'s':
                            return Label.BaseSum;
                    }
                }
                else if (name[0] == (byte)'v' && name[1] is (byte)'s' or (byte)'b' or (byte)'d')
                {
                    return Label.OtherValue;
                }
                else if (name[0] == (byte)'u' && name[1] == (byte)'t')
                {
                    return Label.UpdateTime;
                }

                break;
            case 4 when name.SequenceEqual("bver"u8):
                return Label.BaseVersion;
        }

        return name.Length > 0 && name[^1] == (byte)'_' ? Label.MustUnderstand : Label.Unknown;
    }

    private static Label ClassifyEscaped(ref Utf8JsonReader reader, byte[] buffer)
    {
        if (ReadingParser.TryUnescape(ref reader, buffer, out int length))
        {
            return Classify(buffer.AsSpan(0, length));
        }

        // Too long to be a SenML label; an escaped '_' at the end still makes it must-understand.
        var raw = reader.ValueSpan;
        return raw.EndsWith("_"u8) || raw.EndsWith("\\u005f"u8) || raw.EndsWith("\\u005F"u8) ? Label.MustUnderstand : Label.Unknown;
    }
}

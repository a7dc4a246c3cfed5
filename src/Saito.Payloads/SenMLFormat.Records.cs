using System.Text;
using System.Text.Json;
using Saito.Readings;
using static System.FormattableString;

namespace Saito.Payloads;

/// <summary>SenML: one record, its fields, then its resolved name, field, channel, unit, value and time.</summary>
internal static partial class SenMLFormat
{
    private static void ParseRecord(ParseSession session, ref Utf8JsonReader reader, ReadOnlySpan<byte> payload, int index,
        ref Bases bases, ref string? packError)
    {
        int start = (int)reader.TokenStartIndex;
        var record = default(Record);
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var label = reader.ValueIsEscaped ? ClassifyEscaped(ref reader, session.Small) : Classify(reader.ValueSpan);
            if (label == Label.MustUnderstand)
            {
                packError ??= $"record {index}: \"{ParseSession.Excerpt(reader.ValueSpan)}\" is a must-understand field (its label ends with '_') that Saito does not know, so the pack cannot be used (RFC 8428)";
            }

            record.HasField = true;
            record.HasLabel |= label != Label.Unknown;
            if (Repeated(ref record, label) is { } repeated)
            {
                record.Fail(DeadLetterReasons.DuplicateField, $"\"{repeated}\" is given twice in one record");
            }

            reader.Read();
            switch (label)
            {
                case Label.BaseName:
                    if (reader.TokenType != JsonTokenType.String)
                    {
                        packError ??= $"record {index}: \"bn\" must be a string, got {SaitoJsonFormat.Describe(ref reader)}";
                    }
                    else if (!TryCopyString(ref reader, session.BaseName, out bases.NameLength))
                    {
                        packError ??= Invariant($"record {index}: \"bn\" is longer than {ReadingLimits.MaxSenMLNameLength} bytes");
                    }

                    break;
                case Label.BaseTime:
                    if (reader.TokenType != JsonTokenType.Number || !JsonNumbers.TryParseScaled(reader.ValueSpan, 7, out bases.TimeTicks))
                    {
                        packError ??= $"record {index}: \"bt\" must be a number of seconds, got {SaitoJsonFormat.Describe(ref reader)}";
                    }

                    break;
                case Label.BaseUnit:
                    if (reader.TokenType != JsonTokenType.String)
                    {
                        packError ??= $"record {index}: \"bu\" must be a string, got {SaitoJsonFormat.Describe(ref reader)}";
                    }
                    else
                    {
                        var text = UnitText(ref reader, session.Small);
                        bases.Unit = ParseUnit(text);
                        bases.UnitText = bases.Unit == Unit.Other ? ParseSession.Excerpt(text) : null;
                    }

                    break;
                case Label.BaseValue:
                    if (reader.TokenType != JsonTokenType.Number || !reader.TryGetDouble(out bases.Value) || !double.IsFinite(bases.Value))
                    {
                        packError ??= $"record {index}: \"bv\" must be a finite number, got {SaitoJsonFormat.Describe(ref reader)}";
                    }

                    break;
                case Label.BaseVersion:
                    if (reader.TokenType != JsonTokenType.Number || !reader.TryGetInt32(out bases.Version) || bases.Version < 1)
                    {
                        packError ??= $"record {index}: \"bver\" must be a positive integer, got {SaitoJsonFormat.Describe(ref reader)}";
                    }
                    else if (bases.Version > ReadingLimits.SenMLVersion)
                    {
                        packError ??= Invariant($"record {index}: SenML version {bases.Version} is newer than the version Saito reads ({ReadingLimits.SenMLVersion}), so the pack cannot be used (RFC 8428)");
                    }

                    break;
                case Label.Name:
                    record.HasNonBase = true;
                    record.HasName = true;
                    if (reader.TokenType != JsonTokenType.String)
                    {
                        record.Fail(DeadLetterReasons.WrongType, $"\"n\" must be a string, got {SaitoJsonFormat.Describe(ref reader)}");
                    }
                    else if (!TryCopyString(ref reader, session.Name, out record.NameLength))
                    {
                        record.Fail(DeadLetterReasons.MalformedSenML, Invariant($"\"n\" is longer than {ReadingLimits.MaxSenMLNameLength} bytes"));
                    }

                    break;
                case Label.Unit:
                    record.HasNonBase = true;
                    record.HasUnit = true;
                    if (reader.TokenType != JsonTokenType.String)
                    {
                        record.Fail(DeadLetterReasons.WrongType, $"\"u\" must be a string, got {SaitoJsonFormat.Describe(ref reader)}");
                    }
                    else
                    {
                        record.UnitText = reader.ValueIsEscaped ? [] : reader.ValueSpan;
                        record.Unit = ParseUnit(UnitText(ref reader, session.Small));
                    }

                    break;
                case Label.Value:
                    record.HasNonBase = true;
                    record.HasValue = true;
                    if (reader.TokenType != JsonTokenType.Number)
                    {
                        record.Fail(DeadLetterReasons.WrongType, $"\"v\" must be a number, got {SaitoJsonFormat.Describe(ref reader)}");
                    }
                    else if (!reader.TryGetDouble(out record.Value) || !double.IsFinite(record.Value))
                    {
                        record.Fail(DeadLetterReasons.NotFinite, $"\"v\" {ParseSession.Excerpt(reader.ValueSpan)} is not a finite number");
                    }

                    break;
                case Label.Time:
                    record.HasNonBase = true;
                    record.HasTime = true;
                    if (reader.TokenType != JsonTokenType.Number)
                    {
                        record.Fail(DeadLetterReasons.WrongType, $"\"t\" must be a number of seconds, got {SaitoJsonFormat.Describe(ref reader)}");
                    }
                    else if (!JsonNumbers.TryParseScaled(reader.ValueSpan, 7, out record.TimeTicks))
                    {
                        record.Fail(reader.ValueSpan[0] == (byte)'-' ? DeadLetterReasons.TimestampPast : DeadLetterReasons.TimestampFuture,
                            $"\"t\" {ParseSession.Excerpt(reader.ValueSpan)} is not a time Saito can store");
                    }

                    break;
                case Label.OtherValue:
                    record.HasNonBase = true;
                    record.HasOtherValue = true;
                    break;
                case Label.Sum or Label.UpdateTime:
                    record.HasNonBase = true;
                    break;
                default:
                    break; // bs and unknown fields are ignored, as RFC 8428 says
            }

            reader.Skip(); // a container value (or nothing, for a primitive)
        }

        int end = (int)reader.BytesConsumed;
        int recordIndex = session.RecordSpans.Count;
        session.RecordSpans.Add((start, end));
        if (packError is not null)
        {
            return; // the pack is lost anyway
        }

        if (!record.HasNonBase && record.Reason is null)
        {
            if (!record.HasField || record.HasLabel)
            {
                return; // a record of base fields only (or none): nothing to store, nothing wrong
            }

            // Only fields SenML does not have: not a SenML record (a Saito JSON reading in a batch taken for SenML by its
            // first element, say). It was dropped with no record of it.
            record.Fail(DeadLetterReasons.MalformedSenML, "the record has no SenML field (n, v, vs, vb, vd, s, t, u or a base field): it is not a SenML record");
        }

        if (record.Reason is null)
        {
            Resolve(session, ref record, in bases, index, recordIndex);
        }

        if (record.Reason is not null)
        {
            session.Reject(record.Reason, $"record {index}{NameFor(session, in bases, in record)}: {record.Detail}", payload[start..end]);
        }
    }

    /// <summary>Name, field, channel, unit, value and time of a record whose fields are well typed; then its group.</summary>
    private static void Resolve(ParseSession session, ref Record record, in Bases bases, int index, int recordIndex)
    {
        int nameLength = bases.NameLength + record.NameLength;
        if (nameLength == 0)
        {
            record.Fail(DeadLetterReasons.MalformedSenML, "the record has no name (neither bn nor n)");
            return;
        }

        if (nameLength > ReadingLimits.MaxSenMLNameLength)
        {
            record.Fail(DeadLetterReasons.MalformedSenML, Invariant($"the name (bn + n) is longer than {ReadingLimits.MaxSenMLNameLength} bytes"));
            return;
        }

        var name = session.ResolvedName.AsSpan(0, nameLength);
        session.BaseName.AsSpan(0, bases.NameLength).CopyTo(name);
        session.Name.AsSpan(0, record.NameLength).CopyTo(name[bases.NameLength..]);
        if (!IsValidName(name))
        {
            record.Fail(DeadLetterReasons.MalformedSenML,
                "the name has characters SenML does not allow: A-Z a-z 0-9 - : . / _, starting with a letter or digit (RFC 8428)");
            return;
        }

        if (!record.HasValue)
        {
            if (record.HasOtherValue)
            {
                record.Fail(DeadLetterReasons.WrongType, "only a numeric value (v) can be a reading; this record has a string, boolean or data value");
            }
            else
            {
                record.Fail(DeadLetterReasons.MissingField, "the record has no value (v)");
            }

            return;
        }

        int last = name.LastIndexOfAny((byte)'/', (byte)':');
        var fieldName = name[(last + 1)..];
        if (!TryMapField(fieldName, out var field))
        {
            record.Fail(DeadLetterReasons.UnknownName,
                $"\"{Encoding.UTF8.GetString(fieldName)}\" is not a field Saito knows: the name must end in hr, sys, dia, temp, x, y, z, p or kpa");
            return;
        }

        var fieldKind = ReadingFields.KindOf(field);
        if (fieldKind != session.Kind)
        {
            record.Fail(DeadLetterReasons.WrongKind,
                $"{ReadingFields.NameOf(field)} is a {ReadingKinds.Name(fieldKind)} value; this topic carries {ReadingKinds.Name(session.Kind)} readings ({ReadingFields.NamesOf(session.Kind)})");
            return;
        }

        int channel = 0;
        if (last > 0)
        {
            var before = name[..last];
            var segment = before[(before.LastIndexOfAny((byte)'/', (byte)':') + 1)..];
            if (segment.Length is >= 1 and <= 5 && !segment.ContainsAnyExceptInRange((byte)'0', (byte)'9'))
            {
                foreach (byte digit in segment)
                {
                    channel = (channel * 10) + (digit - '0');
                }

                if (channel > ReadingLimits.ChannelMax)
                {
                    record.Fail(DeadLetterReasons.BadChannel,
                        Invariant($"channel {channel} (the name segment before {ReadingFields.NameOf(field)}) is above {ReadingLimits.ChannelMax}"));
                    return;
                }
            }
        }

        double value = bases.Value + record.Value;
        if (!double.IsFinite(value))
        {
            record.Fail(DeadLetterReasons.NotFinite, Invariant($"bv + v ({bases.Value} + {record.Value}) is not a finite number"));
            return;
        }

        var unit = record.HasUnit ? record.Unit : bases.Unit;
        if (!TryConvert(field, unit, ref value))
        {
            string unitText = record.HasUnit
                ? (record.UnitText.IsEmpty ? "(escaped)" : ParseSession.Excerpt(record.UnitText))
                : bases.UnitText ?? NameOf(unit);
            record.Fail(DeadLetterReasons.UnitMismatch,
                $"unit \"{unitText}\" does not fit {ReadingFields.NameOf(field)}: use {UnitsOf(field)}");
            return;
        }

        if (!ReadingFields.InRange(field, value))
        {
            record.Fail(DeadLetterReasons.OutOfRange, ReadingFields.OutOfRangeDetail(field, value));
            return;
        }

        long resolved = bases.TimeTicks + record.TimeTicks;
        long ticks;
        if (((bases.TimeTicks ^ resolved) & (record.TimeTicks ^ resolved)) < 0)
        {
            ticks = resolved < 0 ? long.MaxValue : long.MinValue; // overflowed: the sign flipped
        }
        else if (resolved < RelativeLimitTicks)
        {
            ticks = session.ReceivedTicks + resolved; // relative to "now" (RFC 8428); cannot overflow: |resolved| is bounded below
            if (resolved < -session.ReceivedTicks)
            {
                ticks = long.MinValue;
            }
        }
        else
        {
            ticks = resolved > DateTime.MaxValue.Ticks - DateTime.UnixEpoch.Ticks ? long.MaxValue : DateTime.UnixEpoch.Ticks + resolved;
        }

        if (session.CheckTime(ticks, "the time", out string timeReason) is { } timeDetail)
        {
            record.Fail(timeReason, timeDetail);
            return;
        }

        ticks -= ticks % ReadingTime.TicksPerMicrosecond;
        AddToGroup(session, ref record, field, channel, ticks, value, recordIndex);
    }

    private static string NameFor(ParseSession session, in Bases bases, in Record record)
    {
        int length = bases.NameLength + record.NameLength;
        if (length == 0 || length > ReadingLimits.MaxSenMLNameLength)
        {
            return string.Empty;
        }

        string name = Encoding.UTF8.GetString(session.BaseName.AsSpan(0, bases.NameLength))
            + Encoding.UTF8.GetString(session.Name.AsSpan(0, record.NameLength));
        return $" (\"{(name.Length <= 64 ? name : name[..64] + "...")}\")";
    }

    private static bool TryMapField(ReadOnlySpan<byte> name, out ValueField field)
    {
        if (ReadingFields.TryParseName(name, out field))
        {
            return true;
        }

        // SenML alone also takes "p" for a pressure cell (docs/protocol.md).
        field = ValueField.Pressure;
        return name.SequenceEqual("p"u8);
    }

    /// <summary>The label of a record field given a second time in the record (n, u, v, t), else null.</summary>
    private static string? Repeated(ref Record record, Label label) => label switch
    {
        Label.Name when record.HasName => "n",
        Label.Unit when record.HasUnit => "u",
        Label.Value when record.HasValue => "v",
        Label.Time when record.HasTime => "t",
        _ => null,
    };
}

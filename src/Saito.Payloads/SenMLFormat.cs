using System.Buffers;
using System.Text;
using System.Text.Json;
using Saito.Readings;
using static System.FormattableString;

namespace Saito.Payloads;

/// <summary>One reading being assembled from SenML records of the same channel and time.</summary>
internal struct SenMLGroup
{
    public int Channel;
    public long Ticks;
    public ValueSet Values;
    public int Record0;
    public int Record1;
    public int Record2;
    public int Record3;

    /// <summary>Beyond <c>Ingestion:MaxReadingsPerMessage</c>: assembled, then dropped.</summary>
    public bool Dropped;

    public readonly int RecordOf(int slot) => slot switch
    {
        0 => Record0,
        1 => Record1,
        2 => Record2,
        _ => Record3,
    };

    public void SetRecord(int slot, int record)
    {
        switch (slot)
        {
            case 0:
                Record0 = record;
                break;
            case 1:
                Record1 = record;
                break;
            case 2:
                Record2 = record;
                break;
            default:
                Record3 = record;
                break;
        }
    }
}

/// <summary>
/// SenML JSON (RFC 8428) as Saito reads it (docs/protocol.md, "SenML"): base fields carry forward; the resolved
/// name's last segment is the field and the segment before it, when it is a number, the channel; resolved
/// times below 2^28 s are relative to the time Saito received the message; records of one channel and time
/// make one reading. A problem with one record dead-letters that record; a problem with a base field (or a
/// newer version, or an unknown must-understand field) makes the whole pack unusable: one dead letter.
/// </summary>
internal static class SenMLFormat
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

    internal enum Unit : byte
    {
        None,
        BeatPerMinute,
        PerMinute,
        MillimetreOfMercury,
        Celsius,
        Kelvin,
        Metre,
        Kilopascal,
        Pascal,
        Other,
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
        if (packError is not null || (!record.HasNonBase && record.Reason is null))
        {
            return; // the pack is lost anyway, or a record of base fields only: nothing to store, nothing wrong
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

    private static void AddToGroup(ParseSession session, ref Record record, ValueField field, int channel, long ticks, double value, int recordIndex)
    {
        int groupIndex = FindGroup(session, channel, ticks);
        if (groupIndex < 0)
        {
            groupIndex = session.Groups.Count;
            if (!session.GroupsInTimeOrder)
            {
                session.GroupIndex.Add((channel, ticks), groupIndex);
            }

            session.Groups.Add(new SenMLGroup { Channel = channel, Ticks = ticks, Dropped = groupIndex >= session.MaxReadings });
        }

        ref var group = ref System.Runtime.InteropServices.CollectionsMarshal.AsSpan(session.Groups)[groupIndex];
        int slot = ReadingFields.SlotOf(field);
        if (group.Values.Has(slot))
        {
            record.Fail(DeadLetterReasons.DuplicateField,
                Invariant($"{ReadingFields.NameOf(field)} for channel {channel} at {ParseSession.FormatTicks(ticks)} is already given by record {group.RecordOf(slot)}"));
            return;
        }

        group.Values.Set(slot, value);
        group.SetRecord(slot, recordIndex);
    }

    /// <summary>The group of (channel, time), or -1. Scans back over the groups of the same time while they are in
    /// time order (no hashing for the usual pack); builds and uses <see cref="ParseSession.GroupIndex"/> after that.</summary>
    private static int FindGroup(ParseSession session, int channel, long ticks)
    {
        var groups = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(session.Groups);
        if (session.GroupsInTimeOrder)
        {
            if (groups.Length == 0 || ticks > groups[^1].Ticks)
            {
                return -1;
            }

            if (ticks == groups[^1].Ticks)
            {
                const int Scan = 8;
                int i = groups.Length - 1;
                for (; i >= 0 && i >= groups.Length - Scan && groups[i].Ticks == ticks; i--)
                {
                    if (groups[i].Channel == channel)
                    {
                        return i;
                    }
                }

                if (i < 0 || groups[i].Ticks != ticks)
                {
                    return -1;
                }

                // Many channels at one time (a large mat): scanning would be quadratic, so hash from here on.
            }

            // An earlier time than the last group's, or many channels at one time: from now on, look up by hash.
            session.GroupsInTimeOrder = false;
            for (int i = 0; i < groups.Length; i++)
            {
                session.GroupIndex.Add((groups[i].Channel, groups[i].Ticks), i);
            }
        }

        return session.GroupIndex.TryGetValue((channel, ticks), out int index) ? index : -1;
    }

    /// <summary>Turns the groups into readings: a location needs x, y and z; a diastolic below the systolic.</summary>
    private static void Finish(ParseSession session, ReadOnlySpan<byte> payload)
    {
        var groups = System.Runtime.InteropServices.CollectionsMarshal.AsSpan(session.Groups);
        int dropped = 0;
        foreach (ref var group in groups)
        {
            if (group.Dropped)
            {
                dropped++;
                continue;
            }

            if (session.Kind == ReadingKind.Biosensor && group.Values.DiastolicNotBelowSystolic)
            {
                session.Reject(DeadLetterReasons.OutOfRange,
                    Invariant($"channel {group.Channel} at {ParseSession.FormatTicks(group.Ticks)}: dia {group.Values.V2} is not below sys {group.Values.V1}; both records are rejected"),
                    RecordsText(session, payload, in group, 0b0110));
                group.Values.Clear(1);
                group.Values.Clear(2);
                if (group.Values.Mask == 0)
                {
                    continue;
                }
            }

            byte required = ReadingFields.RequiredMask(session.Kind);
            if ((group.Values.Mask & required) != required)
            {
                session.Reject(DeadLetterReasons.MissingField,
                    Invariant($"channel {group.Channel} at {ParseSession.FormatTicks(group.Ticks)}: {MissingLocation(group.Values.Mask)} missing; a location reading needs x, y and z at the same time and channel"),
                    RecordsText(session, payload, in group, group.Values.Mask));
                continue;
            }

            session.Readings.Add(group.Values.ToReading(session.Kind, session.DeviceId, group.Channel, group.Ticks, session.ReceivedAt));
        }

        if (dropped > 0)
        {
            session.Reject(DeadLetterReasons.TooManyReadings,
                Invariant($"the pack makes {groups.Length} readings; the first {session.MaxReadings} were taken and the {dropped} after them dropped (Ingestion:MaxReadingsPerMessage); the payload here is the whole pack"),
                payload);
        }
    }

    private static string MissingLocation(byte mask)
    {
        var missing = new List<string>(3);
        for (int slot = 0; slot < 3; slot++)
        {
            if ((mask & (1 << slot)) == 0)
            {
                missing.Add(ReadingFields.NameOf((ValueField)((int)ValueField.X + slot)));
            }
        }

        return string.Join(" and ", missing);
    }

    /// <summary>The records of a group's slots in <paramref name="mask"/>, as a JSON array of their text.</summary>
    private static string RecordsText(ParseSession session, ReadOnlySpan<byte> payload, in SenMLGroup group, int mask)
    {
        var text = new StringBuilder("[");
        for (int slot = 0; slot < 4; slot++)
        {
            if ((mask & (1 << slot)) != 0 && group.Values.Has(slot))
            {
                var (start, end) = session.RecordSpans[group.RecordOf(slot)];
                text.Append(text.Length > 1 ? "," : string.Empty).Append(Encoding.UTF8.GetString(payload[start..end]));
            }
        }

        return text.Append(']').ToString();
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

    /// <summary>Checks the unit against the field and converts K to °C and Pa to kPa. No unit means the field's own.</summary>
    private static bool TryConvert(ValueField field, Unit unit, ref double value)
    {
        switch (field)
        {
            case ValueField.HeartRate:
                return unit is Unit.None or Unit.BeatPerMinute or Unit.PerMinute;
            case ValueField.Systolic or ValueField.Diastolic:
                return unit is Unit.None or Unit.MillimetreOfMercury;
            case ValueField.SkinTemperature:
                if (unit == Unit.Kelvin)
                {
                    // Rounded to a micro-kelvin: 309.75 K reads as 36.6 °C, not 36.600000000000023.
                    value = Math.Round(value - 273.15, 6);
                    return true;
                }

                return unit is Unit.None or Unit.Celsius;
            case ValueField.X or ValueField.Y or ValueField.Z:
                return unit is Unit.None or Unit.Metre;
            default:
                if (unit == Unit.Pascal)
                {
                    value /= 1000;
                    return true;
                }

                return unit is Unit.None or Unit.Kilopascal;
        }
    }

    private static string UnitsOf(ValueField field) => field switch
    {
        ValueField.HeartRate => "beat/min or 1/min",
        ValueField.Systolic or ValueField.Diastolic => "mmHg",
        ValueField.SkinTemperature => "Cel or K",
        ValueField.X or ValueField.Y or ValueField.Z => "m",
        _ => "kPa or Pa",
    };

    private static string NameOf(Unit unit) => unit switch
    {
        Unit.BeatPerMinute => "beat/min",
        Unit.PerMinute => "1/min",
        Unit.MillimetreOfMercury => "mmHg",
        Unit.Celsius => "Cel",
        Unit.Kelvin => "K",
        Unit.Metre => "m",
        Unit.Kilopascal => "kPa",
        Unit.Pascal => "Pa",
        _ => "?",
    };

    private static Unit ParseUnit(ReadOnlySpan<byte> text) => text.Length switch
    {
        1 when text[0] == (byte)'K' => Unit.Kelvin,
        1 when text[0] == (byte)'m' => Unit.Metre,
        2 when text.SequenceEqual("Pa"u8) => Unit.Pascal,
        3 when text.SequenceEqual("Cel"u8) => Unit.Celsius,
        3 when text.SequenceEqual("kPa"u8) => Unit.Kilopascal,
        4 when text.SequenceEqual("mmHg"u8) => Unit.MillimetreOfMercury,
        5 when text.SequenceEqual("1/min"u8) => Unit.PerMinute,
        8 when text.SequenceEqual("beat/min"u8) => Unit.BeatPerMinute,
        _ => Unit.Other,
    };

    private static ReadOnlySpan<byte> UnitText(ref Utf8JsonReader reader, byte[] buffer)
    {
        if (!reader.ValueIsEscaped)
        {
            return reader.ValueSpan;
        }

        return ReadingParser.TryUnescape(ref reader, buffer, out int length) ? buffer.AsSpan(0, length) : "?"u8;
    }

    private static bool TryCopyString(ref Utf8JsonReader reader, byte[] destination, out int length)
    {
        if (!reader.ValueIsEscaped)
        {
            var value = reader.ValueSpan;
            length = value.Length;
            if (length > destination.Length)
            {
                length = 0;
                return false;
            }

            value.CopyTo(destination);
            return true;
        }

        if (ReadingParser.TryUnescape(ref reader, destination, out length))
        {
            return true;
        }

        length = 0;
        return false;
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

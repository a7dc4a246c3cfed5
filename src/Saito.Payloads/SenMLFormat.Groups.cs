using System.Text;
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

/// <summary>SenML: records of one channel and time gathered into one reading, then finished.</summary>
internal static partial class SenMLFormat
{
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
}

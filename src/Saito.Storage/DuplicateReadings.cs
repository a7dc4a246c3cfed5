using System.Globalization;
using System.Text;
using Saito.Readings;

namespace Saito.Storage;

/// <summary>
/// What a reading does when a row with its key (device, channel, time) is already stored. The same values again (a
/// redelivery) change nothing: a duplicate. Values the stored row lacks are added to it: a wristband sends its hourly
/// blood pressure in one reading and its heart rate of the same second in another, and both belong in the row. A value
/// the stored row already has, different, is not overwritten: the reading becomes a <c>conflicting-reading</c> dead
/// letter that says which values differ, and holds the reading itself (Saito's JSON) so it can be sent again.
/// The writers call this only on their duplicate path (a key already stored), never for a new key.
/// </summary>
internal static class DuplicateReadings
{
    /// <summary>
    /// Compares <paramref name="reading"/> with <paramref name="stored"/> (the row's values, in
    /// <see cref="ReadingTables.ValueColumns"/> order), adding the reading's values the row lacks to it.
    /// </summary>
    public static DuplicateOutcome Compare(in Reading reading, double?[] stored, out DeadLetter? conflict)
    {
        var columns = ReadingTables.ValueColumns(reading.Kind);
        StringBuilder? differ = null;
        List<string>? added = null;
        for (int i = 0; i < columns.Count; i++)
        {
            if (ReadingTables.Value(reading, i) is not { } value)
            {
                continue;
            }

            if (stored[i] is not { } kept)
            {
                stored[i] = value;
                (added ??= []).Add(columns[i]);
            }
            else if (!kept.Equals(value))
            {
                differ = differ is null ? new StringBuilder() : differ.Append(", ");
                differ.Append(CultureInfo.InvariantCulture, $"{columns[i]} {Format(value)} differs from the stored {Format(kept)}");
            }
        }

        conflict = null;
        if (differ is not null)
        {
            string detail = FormattableString.Invariant(
                $"device {reading.DeviceId} channel {reading.Channel} at {reading.Timestamp.ToString(Archive.ArchiveCsv.TimeFormat, CultureInfo.InvariantCulture)}: {differ} (the stored value is kept)")
                + (added is null ? string.Empty : "; added to the stored reading: " + string.Join(", ", added));
            conflict = new DeadLetter(reading.ReceivedAt, Source(reading), clientId: null, DeadLetterReasons.ConflictingReading, detail, Json(reading));
        }

        return (added is null ? DuplicateOutcome.Same : DuplicateOutcome.Added) | (conflict is null ? DuplicateOutcome.Same : DuplicateOutcome.Conflict);
    }

    /// <summary>The dead letter's topic column: the reading's device and kind (the message's topic is not known to the writer).</summary>
    private static string Source(in Reading reading) =>
        FormattableString.Invariant($"{ReadingKinds.Name(reading.Kind)} reading of device {reading.DeviceId}");

    /// <summary>The reading as one Saito JSON object, as a hub would send it again.</summary>
    internal static string Json(in Reading reading)
    {
        var json = new StringBuilder(96);
        json.Append(CultureInfo.InvariantCulture, $"{{\"ts\":\"{reading.Timestamp.ToString(Archive.ArchiveCsv.TimeFormat, CultureInfo.InvariantCulture)}\",\"ch\":{reading.Channel}");
        var columns = ReadingTables.ValueColumns(reading.Kind);
        for (int i = 0; i < columns.Count; i++)
        {
            if (ReadingTables.Value(reading, i) is { } value)
            {
                json.Append(CultureInfo.InvariantCulture, $",\"{columns[i]}\":{Format(value)}");
            }
        }

        return json.Append('}').ToString();
    }

    private static string Format(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}

[Flags]
internal enum DuplicateOutcome
{
    /// <summary>Nothing new: a duplicate.</summary>
    Same = 0,

    /// <summary>Values the stored row lacked were added to it: the row must be updated.</summary>
    Added = 1,

    /// <summary>A value differs from the stored one: a dead letter (with <see cref="Added"/>, the rest still goes in).</summary>
    Conflict = 2,
}

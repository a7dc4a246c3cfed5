using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage;

/// <summary>Which tier a table lives on: hot (fast storage) or archive (slow storage).</summary>
public enum StorageTier
{
    Hot,
    Archive,
}

/// <summary>
/// The names every database uses, so the three stores, the scripts in <c>sql/</c> and the archiver agree.
/// <code>
/// reading_biosensor  (device_id, channel, ts, heart_rate, systolic, diastolic, skin_temp, received_at)
/// reading_location   (device_id, channel, ts, x, y, z, received_at)
/// reading_pressure   (device_id, channel, ts, kpa, received_at)
/// </code>
/// Natural key: primary key (device_id, channel, ts). GUID strategies add a leading <c>id</c> column as the
/// primary key and a <c>_guid</c> / <c>_seqguid</c> suffix. Archive tables have the same shape, prefixed
/// <c>archive_</c> instead of <c>reading_</c>. Low-velocity tables: <c>device</c> (auto-numbered) and
/// <c>dead_letter</c>.
/// </summary>
public static class ReadingTables
{
    public const string DeviceTable = "device";
    public const string DeadLetterTable = "dead_letter";

    public static string TableName(ReadingKind kind, KeyStrategy keys, StorageTier tier)
    {
        string prefix = tier == StorageTier.Hot ? "reading_" : "archive_";
        string suffix = keys switch
        {
            KeyStrategy.Natural => string.Empty,
            KeyStrategy.Guid => "_guid",
            KeyStrategy.SequentialGuid => "_seqguid",
            _ => throw new ArgumentOutOfRangeException(nameof(keys), keys, null),
        };
        return prefix + ReadingKinds.Name(kind) + suffix;
    }

    /// <summary>The value columns of a kind, in the order of <see cref="Reading.V0"/> .. <see cref="Reading.V3"/>.</summary>
    public static IReadOnlyList<string> ValueColumns(ReadingKind kind) => kind switch
    {
        ReadingKind.Biosensor => BiosensorColumns,
        ReadingKind.Location => LocationColumns,
        ReadingKind.Pressure => PressureColumns,
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
    };

    private static readonly string[] BiosensorColumns = ["heart_rate", "systolic", "diastolic", "skin_temp"];
    private static readonly string[] LocationColumns = ["x", "y", "z"];
    private static readonly string[] PressureColumns = ["kpa"];

    /// <summary>Every column of a reading table in insert order: [id,] device_id, channel, ts, values..., received_at.</summary>
    public static IReadOnlyList<string> Columns(ReadingKind kind, KeyStrategy keys)
    {
        var columns = new List<string>();
        if (keys != KeyStrategy.Natural)
        {
            columns.Add("id");
        }

        columns.AddRange(["device_id", "channel", "ts"]);
        columns.AddRange(ValueColumns(kind));
        columns.Add("received_at");
        return columns;
    }

    /// <summary>The value of a reading for value column <paramref name="index"/> (0-based, as <see cref="ValueColumns"/>).</summary>
    public static double? Value(in Reading reading, int index) => index switch
    {
        0 => reading.V0,
        1 => reading.V1,
        2 => reading.V2,
        3 => reading.V3,
        _ => throw new ArgumentOutOfRangeException(nameof(index), index, null),
    };
}

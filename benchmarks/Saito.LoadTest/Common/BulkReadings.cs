using System.Globalization;
using System.Text;
using Saito.Readings;

namespace Saito.LoadTest.Common;

/// <summary>
/// The rows every <c>bulk</c> run writes: biosensor readings from <see cref="Devices"/> wrist sensors with
/// <see cref="ChannelsPerDevice"/> channels each, one reading per channel per second, interleaved as a hub would
/// deliver them (every series at one second, then every series at the next). Each (device, channel, ts) occurs
/// once, so every row is stored and the counts must match exactly. Values are plausible for a seated student
/// and a function of the row's number, so every round and every writer sees the same rows in the same order.
/// </summary>
internal static class BulkReadings
{
    public const int Devices = 64;
    public const int ChannelsPerDevice = 4;
    public const int Series = Devices * ChannelsPerDevice;

    /// <summary>Serials the devices are registered under, in the order of their ids.</summary>
    public static string Serial(int device) => $"bench-wrist-{device:D2}";

    public static Reading[] Biosensor(int count, IReadOnlyList<int> deviceIds)
    {
        var rows = new Reading[count];
        Fill(rows, 0, deviceIds);
        return rows;
    }

    /// <summary>
    /// Rows <paramref name="first"/> .. first + rows.Length - 1 of the endless sequence, so that a run of tens of
    /// millions of rows can be generated a batch at a time: row i is the same whichever batch it is made in.
    /// </summary>
    public static void Fill(Span<Reading> rows, long first, IReadOnlyList<int> deviceIds)
    {
        ArgumentNullException.ThrowIfNull(deviceIds);
        for (int k = 0; k < rows.Length; k++)
        {
            long i = first + k;
            int series = (int)(i % Series);
            long second = i / Series;
            // A few milliseconds between series, as real sensors are not sampled in lock step.
            var ts = Start.AddSeconds(second).AddMilliseconds(series * 3.125);
            ulong bits = Mix((ulong)i);
            rows[k] = Reading.Biosensor(
                deviceIds[series / ChannelsPerDevice],
                series % ChannelsPerDevice,
                ts,
                ts.AddMilliseconds(150 + (i % 97)),
                heartRate: 58 + (int)(bits % 45),
                systolic: 104 + (int)((bits >> 8) % 32),
                diastolic: 64 + (int)((bits >> 16) % 22),
                skinTemperature: Math.Round(31.8 + ((bits >> 24) % 31 / 10.0), 1));
        }
    }

    /// <summary>The time of the first row; row i is <c>i / Series</c> seconds later.</summary>
    public static readonly DateTime Start = new(2026, 11, 23, 8, 0, 0, DateTimeKind.Utc);

    /// <summary>The time just after the last row of the first <paramref name="rows"/> rows (a cutoff that takes exactly them).</summary>
    public static DateTime EndOf(long rows) => Start.AddSeconds((rows + Series - 1) / Series);

    // SplitMix64: cheap, well spread, the same on every machine, and needs no state between batches.
    private static ulong Mix(ulong x)
    {
        x += 0x9E3779B97F4A7C15UL;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
        return x ^ (x >> 31);
    }

    /// <summary>
    /// The rows as CSV for <c>psql \copy ... WITH (FORMAT csv)</c>, in <see cref="CopyColumns"/> order: timestamps
    /// as PostgreSQL's text form with microseconds and a UTC offset, numbers in the invariant culture.
    /// </summary>
    public static async Task WriteCsvAsync(string path, Reading[] rows, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(rows);
        await using var file = new StreamWriter(path, append: false, new UTF8Encoding(false), bufferSize: 1 << 20);
        var line = new StringBuilder(128);
        foreach (var r in rows)
        {
            token.ThrowIfCancellationRequested();
            line.Clear();
            line.Append(r.DeviceId.ToString(CultureInfo.InvariantCulture)).Append(',')
                .Append(r.Channel.ToString(CultureInfo.InvariantCulture)).Append(',')
                .Append(Timestamp(r.Timestamp)).Append(',')
                .Append(Number(r.V0)).Append(',')
                .Append(Number(r.V1)).Append(',')
                .Append(Number(r.V2)).Append(',')
                .Append(Number(r.V3)).Append(',')
                .Append(Timestamp(r.ReceivedAt));
            await file.WriteLineAsync(line, token);
        }
    }

    public const string CopyColumns = "device_id, channel, ts, heart_rate, systolic, diastolic, skin_temp, received_at";

    private static string Timestamp(DateTime utc) => utc.ToString("yyyy-MM-dd HH:mm:ss.ffffff", CultureInfo.InvariantCulture) + "+00";

    private static string Number(double? value) => value?.ToString("R", CultureInfo.InvariantCulture) ?? string.Empty;
}

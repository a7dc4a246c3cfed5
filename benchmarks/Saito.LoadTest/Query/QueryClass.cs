using Saito.Readings;
using Saito.Storage;

namespace Saito.LoadTest.Query;

/// <summary>
/// A day of a full class as the <c>query</c> command stores it: per student 20 sensors, each a device with one channel:
/// a wristband (biosensor, 1 Hz), 6 garment location tags (4 Hz), 9 seat cells and 4 foot cells (pressure, 4 Hz): 77
/// readings a second per student. Generated a slice of seconds at a time, every sensor's readings of a slice in time
/// order as hubs deliver them; values are a function of (sensor, sample), the same on every run.
/// </summary>
internal sealed class QueryClass
{
    public const int SensorsPerStudent = 20;
    public const int LocationTags = 6;
    public const int PressureCells = 13;
    public const int FastHz = 4;

    /// <summary>The school day starts at 08:00 UTC; the timed range is the second two-hour class, 10:00 to 12:00 (cut to the day stored).</summary>
    public static readonly DateTime Start = new(2026, 11, 23, 8, 0, 0, DateTimeKind.Utc);

    private QueryClass(int students, int seconds, int[] deviceIds)
    {
        Students = students;
        Seconds = seconds;
        DeviceIds = deviceIds;
    }

    public int Students { get; }

    /// <summary>The day's length in whole seconds.</summary>
    public int Seconds { get; }

    /// <summary>Per sensor (student * 20 + sensor), its device id.</summary>
    public int[] DeviceIds { get; }

    public long ReadingsPerSecond => Students * (1L + ((LocationTags + PressureCells) * FastHz));

    public long Readings => ReadingsPerSecond * Seconds;

    public static ReadingKind KindOf(int sensor) => (sensor % SensorsPerStudent) switch
    {
        0 => ReadingKind.Biosensor,
        <= LocationTags => ReadingKind.Location,
        _ => ReadingKind.Pressure,
    };

    public static string Serial(int sensor) => (sensor % SensorsPerStudent) switch
    {
        0 => $"query-s{sensor / SensorsPerStudent:D2}-wrist",
        <= LocationTags and var tag => $"query-s{sensor / SensorsPerStudent:D2}-tag{tag}",
        var cell => $"query-s{sensor / SensorsPerStudent:D2}-cell{cell - LocationTags}",
    };

    /// <summary>The devices registered (one per sensor) and the class over them.</summary>
    public static async Task<QueryClass> RegisterAsync(IReadingStore store, int students, double hours, CancellationToken token)
    {
        var ids = new int[students * SensorsPerStudent];
        for (int sensor = 0; sensor < ids.Length; sensor++)
        {
            ids[sensor] = await store.RegisterDeviceAsync(Serial(sensor), null, token);
        }

        return new QueryClass(students, (int)Math.Round(hours * 3600), ids);
    }

    /// <summary>The sensor the range and downsample queries read: student 0's first seat cell, pressure at 4 Hz.</summary>
    public int RangeSensor => 1 + LocationTags;

    /// <summary>The timed range: the second two-hour class of the day, 10:00 to 12:00, cut to the hours stored.</summary>
    public (DateTime From, DateTime To) RangeWindow()
    {
        var end = Start.AddSeconds(Seconds);
        var from = Start.AddHours(2) < end ? Start.AddHours(2) : Start;
        var to = from.AddHours(2) < end ? from.AddHours(2) : end;
        return (from, to);
    }

    /// <summary>Every reading of seconds [<paramref name="firstSecond"/>, + <paramref name="count"/>) into <paramref name="batch"/>.</summary>
    public void Fill(ReadingBatch batch, int firstSecond, int count)
    {
        ArgumentNullException.ThrowIfNull(batch);
        for (int second = firstSecond; second < firstSecond + count; second++)
        {
            for (int tick = 0; tick < FastHz; tick++)
            {
                for (int sensor = 0; sensor < DeviceIds.Length; sensor++)
                {
                    var kind = KindOf(sensor);
                    if (kind == ReadingKind.Biosensor && tick != 0)
                    {
                        continue;
                    }

                    long sample = ((long)second * FastHz) + tick;
                    var ts = Start.AddTicks(sample * (TimeSpan.TicksPerSecond / FastHz));
                    var received = ts.AddMilliseconds(120);
                    double wave = Math.Sin((sample + (sensor * 37)) / 40.0);
                    batch.Add(kind switch
                    {
                        ReadingKind.Biosensor => Reading.Biosensor(DeviceIds[sensor], 0, ts, received, 70 + Math.Round(10 * wave), 118 + (sensor % 7), 76 + (sensor % 5), 36.4),
                        ReadingKind.Location => Reading.Location(DeviceIds[sensor], 0, ts, received, 2 + wave, 3 - wave, 1.1),
                        _ => Reading.Pressure(DeviceIds[sensor], 0, ts, received, Math.Round(1.5 + wave, 3)),
                    });
                }
            }
        }
    }
}

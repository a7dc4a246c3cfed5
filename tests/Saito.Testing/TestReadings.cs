using Saito.Readings;

namespace Saito.Testing;

/// <summary>Readings for tests: deterministic, distinct, with microsecond timestamps and awkward values.</summary>
public static class TestReadings
{
    public static readonly DateTime Start = new(2026, 3, 1, 12, 0, 0, DateTimeKind.Utc);

    public static IEnumerable<ReadingKind> Kinds => ReadingKinds.All;

    /// <summary>
    /// <paramref name="count"/> readings of one kind spread over devices <paramref name="firstDevice"/>.. and
    /// <paramref name="channels"/> channels, each with its own microsecond timestamp. Reading <c>i</c> is the same
    /// reading (key and values) on every call with the same arguments, so overlapping ranges give duplicates.
    /// Biosensor readings leave out every subset of their four values in turn (all four too).
    /// </summary>
    public static List<Reading> Of(ReadingKind kind, int count, int firstIndex = 0, int devices = 3, int firstDevice = 1, int channels = 4)
    {
        var readings = new List<Reading>(count);
        for (int i = firstIndex; i < firstIndex + count; i++)
        {
            readings.Add(One(kind, i, devices, firstDevice, channels));
        }

        return readings;
    }

    public static Reading One(ReadingKind kind, int i, int devices = 3, int firstDevice = 1, int channels = 4)
    {
        int device = firstDevice + (i % devices);
        int channel = (i / devices) % channels;
        // About a millisecond apart, always distinct, and rarely a whole millisecond: microseconds matter.
        DateTime ts = Start.AddTicks(((i * 1000L) + (i % 997)) * 10);
        DateTime receivedAt = ts.AddTicks(23_456_780 + ((i % 13) * 10));
        var random = new Random(i * 31 + (int)kind);
        double Value(double scale) => (random.NextDouble() - 0.25) * scale;
        return kind switch
        {
            ReadingKind.Biosensor => Reading.Biosensor(device, channel, ts, receivedAt,
                (i & 1) == 0 ? Value(200) : null,
                (i & 2) == 0 ? Value(180) : null,
                (i & 4) == 0 ? Value(120) : null,
                (i & 8) == 0 ? Value(45) : null),
            ReadingKind.Location => Reading.Location(device, channel, ts, receivedAt, Value(1e7), Value(-3e-3), i % 5 == 0 ? 0.0 : Value(123_456.789)),
            ReadingKind.Pressure => Reading.Pressure(device, channel, ts, receivedAt, i % 7 == 0 ? 1.7976931348623157e308 : Value(101.325)),
            _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, null),
        };
    }

    /// <summary>A batch of the given readings (any kinds).</summary>
    public static ReadingBatch Batch(IEnumerable<Reading> readings, IEnumerable<DeadLetter>? deadLetters = null)
    {
        var batch = new ReadingBatch();
        batch.AddRange(readings);
        if (deadLetters is not null)
        {
            batch.DeadLetters.AddRange(deadLetters);
        }

        return batch;
    }

    /// <summary>What <c>IReadingStore.ReadAsync</c> returns for a device: its readings oldest first, then by channel.</summary>
    public static List<Reading> AsRead(IEnumerable<Reading> readings, int deviceId) =>
        readings.Where(r => r.DeviceId == deviceId).OrderBy(r => r.Timestamp).ThenBy(r => r.Channel).ToList();
}

using Saito.Readings;
using Saito.Testing;

namespace Saito.Benchmarks;

/// <summary>
/// Parsed readings for the key-derivation and batch-assembly benchmarks: biosensor readings from 64 devices, all
/// with distinct natural keys, so every key is hashed from a different name and no batch holds a duplicate.
/// </summary>
internal static class ReadingWorkload
{
    /// <summary>Readings per batch: Saito's default <c>Storage:BatchSize</c>.</summary>
    public const int BatchSize = 5000;

    private const int Devices = 64;
    private const int Channels = 4;
    private const int Series = Devices * Channels;

    public static readonly DateTime Start = new(2026, 11, 23, 8, 0, 0, DateTimeKind.Utc);

    /// <summary>64 devices x 4 channels, one reading per channel per second, in time order (as <see cref="BulkWriterWorkload"/>).</summary>
    public static Reading[] Readings(int count)
    {
        var readings = new Reading[count];
        for (int k = 0; k < count; k++)
        {
            int series = k % Series;
            var ts = Start.AddTicks(((long)(k / Series) * TimeSpan.TicksPerSecond) + (series * 31_250L));
            readings[k] = Reading.Biosensor(1 + (series / Channels), series % Channels, ts, ts.AddMilliseconds(150),
                58 + (k * 7 % 45), 104 + (k * 11 % 32), 64 + (k * 13 % 22), 31.8 + (k * 17 % 30 / 10.0));
        }

        return readings;
    }

    /// <summary>
    /// One batch's worth of messages as the parser leaves them (one list of readings each): every message is one
    /// device's <paramref name="readingsPerMessage"/> consecutive readings at 50 Hz (heart rate and skin
    /// temperature, as <see cref="ParsingWorkload.SaitoJsonBatch"/>), and messages from different devices
    /// arrive interleaved in no particular device order, so the batch is in time order per device only, and
    /// sorting it into key order is real work under every key.
    /// </summary>
    public static List<Reading>[] Messages(int readingsPerMessage)
    {
        if (readingsPerMessage < 1 || BatchSize % readingsPerMessage != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(readingsPerMessage), readingsPerMessage, $"must divide {BatchSize}");
        }

        var messages = new List<Reading>[BatchSize / readingsPerMessage];
        for (int m = 0; m < messages.Length; m++)
        {
            int device = 1 + (m * 37 % Devices); // 37 is prime to 64: each device once per 64 messages, scrambled
            int channel = m / Devices % Channels;
            long first = (long)(m / Series) * readingsPerMessage;
            var readings = new List<Reading>(readingsPerMessage);
            for (int j = 0; j < readingsPerMessage; j++)
            {
                var ts = Start.AddTicks((first + j) * 20 * TimeSpan.TicksPerMillisecond);
                readings.Add(Reading.Biosensor(device, channel, ts, ts.AddMilliseconds(150), 60 + ((m + j) % 40), null, null, 33 + (j % 10 / 10.0)));
            }

            messages[m] = readings;
        }

        return messages;
    }
}

namespace Saito.Readings;

/// <summary>The three kinds of reading Saito stores, one table per kind.</summary>
public enum ReadingKind : byte
{
    Biosensor = 0,
    Location = 1,
    Pressure = 2,
}

/// <summary>
/// One reading, ready for a table: the natural key (device id, channel, timestamp) and up to four values.
/// What the values mean depends on <see cref="Kind"/>:
/// biosensor: heart rate (beats/min), systolic and diastolic (mmHg), skin temperature (°C), any subset;
/// location: x, y, z in metres (all three); pressure: kPa in <see cref="V0"/>.
/// Timestamps are UTC and held to the microsecond (<see cref="ReadingTime.Truncate"/>), the finest every
/// database stores without loss.
/// </summary>
public readonly record struct Reading
{
    public Reading(ReadingKind kind, int deviceId, int channel, DateTime timestamp, DateTime receivedAt,
        double? v0, double? v1 = null, double? v2 = null, double? v3 = null)
    {
        Kind = kind;
        DeviceId = deviceId;
        Channel = channel;
        Timestamp = ReadingTime.Truncate(timestamp);
        ReceivedAt = ReadingTime.Truncate(receivedAt);
        V0 = v0;
        V1 = v1;
        V2 = v2;
        V3 = v3;
    }

    public ReadingKind Kind { get; }
    public int DeviceId { get; }

    /// <summary>This reading with another device id (a new serial's readings are parsed before its device is registered).</summary>
    public Reading WithDevice(int deviceId) => new(Kind, deviceId, Channel, Timestamp, ReceivedAt, V0, V1, V2, V3);
    public int Channel { get; }

    /// <summary>When the sensor took the reading (UTC, microseconds).</summary>
    public DateTime Timestamp { get; }

    /// <summary>When Saito received it (UTC, microseconds).</summary>
    public DateTime ReceivedAt { get; }

    public double? V0 { get; }
    public double? V1 { get; }
    public double? V2 { get; }
    public double? V3 { get; }

    public double? HeartRate => Kind == ReadingKind.Biosensor ? V0 : null;
    public double? Systolic => Kind == ReadingKind.Biosensor ? V1 : null;
    public double? Diastolic => Kind == ReadingKind.Biosensor ? V2 : null;
    public double? SkinTemperature => Kind == ReadingKind.Biosensor ? V3 : null;
    public double? X => Kind == ReadingKind.Location ? V0 : null;
    public double? Y => Kind == ReadingKind.Location ? V1 : null;
    public double? Z => Kind == ReadingKind.Location ? V2 : null;
    public double? Kpa => Kind == ReadingKind.Pressure ? V0 : null;

    public static Reading Biosensor(int deviceId, int channel, DateTime timestamp, DateTime receivedAt,
        double? heartRate, double? systolic, double? diastolic, double? skinTemperature) =>
        new(ReadingKind.Biosensor, deviceId, channel, timestamp, receivedAt, heartRate, systolic, diastolic, skinTemperature);

    public static Reading Location(int deviceId, int channel, DateTime timestamp, DateTime receivedAt, double x, double y, double z) =>
        new(ReadingKind.Location, deviceId, channel, timestamp, receivedAt, x, y, z);

    public static Reading Pressure(int deviceId, int channel, DateTime timestamp, DateTime receivedAt, double kpa) =>
        new(ReadingKind.Pressure, deviceId, channel, timestamp, receivedAt, kpa);
}

/// <summary>Reading timestamps: UTC, truncated to whole microseconds.</summary>
public static class ReadingTime
{
    public const long TicksPerMicrosecond = TimeSpan.TicksPerMillisecond / 1000;

    /// <summary>UTC, whole microseconds. A time of unspecified kind is taken as UTC; a local time is converted.</summary>
    public static DateTime Truncate(DateTime value)
    {
        var utc = value.Kind switch
        {
            DateTimeKind.Utc => value,
            DateTimeKind.Local => value.ToUniversalTime(),
            _ => DateTime.SpecifyKind(value, DateTimeKind.Utc),
        };
        return new DateTime(utc.Ticks - (utc.Ticks % TicksPerMicrosecond), DateTimeKind.Utc);
    }

    /// <summary>Microseconds since 1970-01-01 UTC: how SQLite stores a timestamp (an INTEGER column).</summary>
    public static long ToUnixMicroseconds(DateTime utc) => (utc.Ticks - DateTime.UnixEpoch.Ticks) / TicksPerMicrosecond;

    public static DateTime FromUnixMicroseconds(long microseconds) =>
        new(DateTime.UnixEpoch.Ticks + (microseconds * TicksPerMicrosecond), DateTimeKind.Utc);
}

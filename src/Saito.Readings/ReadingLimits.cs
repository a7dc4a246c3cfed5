namespace Saito.Readings;

/// <summary>
/// What Saito accepts as a plausible reading; values outside are dead-lettered as
/// <see cref="DeadLetterReasons.OutOfRange"/>. Bounds are inclusive. The ranges are wide on purpose: they catch
/// a sensor that is off the wrist, unplugged or sending garbage, not an unusual student. Documented in
/// docs/protocol.md, "Ranges".
/// </summary>
public static class ReadingLimits
{
    /// <summary>Heart rate, beats per minute.</summary>
    public const double HeartRateMin = 20;
    public const double HeartRateMax = 300;

    /// <summary>Systolic blood pressure, mmHg.</summary>
    public const double SystolicMin = 40;
    public const double SystolicMax = 300;

    /// <summary>Diastolic blood pressure, mmHg; also below the systolic when a reading has both.</summary>
    public const double DiastolicMin = 20;
    public const double DiastolicMax = 200;

    /// <summary>Skin temperature, °C (skin, not core: a cold classroom reads well below 37).</summary>
    public const double SkinTemperatureMin = 20;
    public const double SkinTemperatureMax = 45;

    /// <summary>Location: each of x, y and z, metres from the room's origin, at most this far either way.</summary>
    public const double LocationMaxAbs = 1000;

    /// <summary>Pressure mat cell, kPa.</summary>
    public const double PressureMin = 0;
    public const double PressureMax = 1000;

    /// <summary>Channel numbers: a wrist sensor uses 0, location tags and mat cells count up from 0.</summary>
    public const int ChannelMin = 0;
    public const int ChannelMax = 65535;

    /// <summary>Longest hub and device topic levels, in characters.</summary>
    public const int MaxHubLength = 128;
    public const int MaxDeviceLength = 128;

    /// <summary>Longest resolved SenML name (base name + name), in bytes.</summary>
    public const int MaxSenMLNameLength = 256;

    /// <summary>A resolved SenML time below 2^28 seconds is relative to the time Saito received the message (RFC 8428: "now" plus that many seconds).</summary>
    public const long SenMLRelativeTimeLimitSeconds = 1L << 28;

    /// <summary>The SenML version Saito understands (RFC 8428); a pack with a higher <c>bver</c> is rejected.</summary>
    public const int SenMLVersion = 10;

    /// <summary>Largest hello payload, in bytes.</summary>
    public const int MaxHelloBytes = 4096;

    /// <summary>Longest firmware string in a hello, in characters.</summary>
    public const int MaxFirmwareLength = 64;
}

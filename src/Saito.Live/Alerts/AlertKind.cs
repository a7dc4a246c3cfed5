namespace Saito.Live.Alerts;

/// <summary>What an alert is about. Stored and sent as its kebab-case name (<see cref="AlertKinds.Name"/>), never as the number.</summary>
public enum AlertKind
{
    /// <summary>Heart rate at least TachycardiaFactor × the student's resting baseline.</summary>
    Tachycardia = 0,
    /// <summary>Heart rate at or above the absolute HeartRateMax.</summary>
    HeartRateHigh = 1,
    /// <summary>Heart rate at or below the absolute HeartRateMin.</summary>
    Bradycardia = 2,
    /// <summary>Skin temperature above the level, or warm and rising.</summary>
    Overheating = 3,
    /// <summary>An assigned device of a checked-in student has sent nothing for SilentSensorSeconds.</summary>
    SilentSensor = 4,
    /// <summary>The session started more than CheckInGraceMinutes ago and the student has not checked in.</summary>
    NotCheckedIn = 5,
    /// <summary>The seat mat has been empty for OffSeatSeconds.</summary>
    OffSeat = 6,
}

/// <summary>Names and texts of <see cref="AlertKind"/> for storage, JSON and people.</summary>
public static class AlertKinds
{
    /// <summary>How many kinds there are (the enum is dense from 0).</summary>
    public const int Count = 7;

    /// <summary>The kebab-case name used in storage and JSON, e.g. "heart-rate-high".</summary>
    public static string Name(AlertKind kind) => kind switch
    {
        AlertKind.Tachycardia => "tachycardia",
        AlertKind.HeartRateHigh => "heart-rate-high",
        AlertKind.Bradycardia => "bradycardia",
        AlertKind.Overheating => "overheating",
        AlertKind.SilentSensor => "silent-sensor",
        AlertKind.NotCheckedIn => "not-checked-in",
        AlertKind.OffSeat => "off-seat",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Unknown alert kind."),
    };

    /// <summary>The kind for a kebab-case name; false when the name is not one of <see cref="Name"/>'s.</summary>
    public static bool TryParse(string? name, out AlertKind kind)
    {
        for (var i = 0; i < Count; i++)
        {
            if (string.Equals(Name((AlertKind)i), name, StringComparison.Ordinal))
            {
                kind = (AlertKind)i;
                return true;
            }
        }
        kind = default;
        return false;
    }

    /// <summary>A short text for a person, e.g. "Heart rate high".</summary>
    public static string Text(AlertKind kind) => kind switch
    {
        AlertKind.Tachycardia => "Heart rate high for this student",
        AlertKind.HeartRateHigh => "Heart rate high",
        AlertKind.Bradycardia => "Heart rate low",
        AlertKind.Overheating => "Overheating",
        AlertKind.SilentSensor => "Sensor silent",
        AlertKind.NotCheckedIn => "Not checked in",
        AlertKind.OffSeat => "Out of seat",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Unknown alert kind."),
    };
}

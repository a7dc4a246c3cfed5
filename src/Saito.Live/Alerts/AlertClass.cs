namespace Saito.Live.Alerts;

/// <summary>
/// Which kind of trouble an alert is, in the order staff must see it: a child's body first, then the equipment that
/// watches it, then who is where. The monitor world calls the first two clinical and technical alarms.
/// </summary>
public enum AlertClass
{
    /// <summary>A vital sign out of its range: heart rate, overheating.</summary>
    Clinical = 0,

    /// <summary>The equipment: a sensor gone silent.</summary>
    Device = 1,

    /// <summary>Attendance: not checked in, out of seat.</summary>
    Attendance = 2,
}

/// <summary>Classes of <see cref="AlertKind"/>s, and the one order of alerts every screen uses.</summary>
public static class AlertClasses
{
    public static AlertClass Of(AlertKind kind) => kind switch
    {
        AlertKind.Tachycardia or AlertKind.HeartRateHigh or AlertKind.Bradycardia or AlertKind.Overheating => AlertClass.Clinical,
        AlertKind.SilentSensor => AlertClass.Device,
        AlertKind.NotCheckedIn or AlertKind.OffSeat => AlertClass.Attendance,
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Unknown alert kind."),
    };

    /// <summary>
    /// The few words a tile has room for, e.g. "Heart rate high" (the banner and history say which rule:
    /// <see cref="AlertKinds.Text"/>).
    /// </summary>
    public static string ShortText(AlertKind kind) => kind switch
    {
        AlertKind.Tachycardia or AlertKind.HeartRateHigh => "Heart rate high",
        _ => AlertKinds.Text(kind),
    };

    /// <summary>The name in JSON and CSS: "clinical", "device", "attendance".</summary>
    public static string Name(AlertClass alertClass) => alertClass switch
    {
        AlertClass.Clinical => "clinical",
        AlertClass.Device => "device",
        AlertClass.Attendance => "attendance",
        _ => throw new ArgumentOutOfRangeException(nameof(alertClass), alertClass, "Unknown alert class."),
    };

    /// <summary>
    /// The order of alerts on every screen: by class (clinical, device, attendance), then the ones nobody has
    /// acknowledged yet, then severity (the escalation level, highest first), then age (the longest waiting first).
    /// A clinical alert is never below an attendance one. live.js sorts the banner the same way.
    /// </summary>
    public static int Compare(AlertClass aClass, bool aAcknowledged, int aLevel, DateTimeOffset aRaisedAt,
        AlertClass bClass, bool bAcknowledged, int bLevel, DateTimeOffset bRaisedAt)
    {
        int byClass = aClass.CompareTo(bClass);
        if (byClass != 0)
        {
            return byClass;
        }

        int byAcknowledged = aAcknowledged.CompareTo(bAcknowledged);
        if (byAcknowledged != 0)
        {
            return byAcknowledged;
        }

        int byLevel = bLevel.CompareTo(aLevel);
        return byLevel != 0 ? byLevel : aRaisedAt.CompareTo(bRaisedAt);
    }
}

namespace Saito.Live.Alerts;

/// <summary>What happened to an alert.</summary>
public enum AlertEventType
{
    /// <summary>The condition held for its onset time: a new alert (new <see cref="AlertEvent.AlertId"/>).</summary>
    Raised = 0,
    /// <summary>Not acknowledged in EscalateAfterSeconds: <see cref="AlertEvent.Level"/> went up by one.</summary>
    Escalated = 1,
    /// <summary>Someone acknowledged it; escalation stops, the alert stays open until it clears.</summary>
    Acknowledged = 2,
    /// <summary>The condition has been absent for its clear time (or no longer applies): the alert is closed.</summary>
    Cleared = 3,
}

/// <summary>Who an alert is for: 0 anyone in the room (aide), 1 the teacher, 2 an administrator.</summary>
public static class AlertLevels
{
    public const int Aide = 0;
    public const int Teacher = 1;
    public const int Admin = 2;
}

/// <summary>
/// One thing for the server to store and push. <see cref="At"/> is reading time for reading-driven rules
/// (the timestamp of the reading that completed onset or clearing) and the engine's <c>now</c> for
/// time-driven ones (silent sensor, check-in, seat, escalation, acknowledgement, session end).
/// </summary>
/// <param name="AlertId">The alert this event belongs to; the same id from Raised to Cleared.</param>
/// <param name="OwnerId">The student.</param>
/// <param name="Kind">The rule.</param>
/// <param name="Type">Raised, Escalated, Acknowledged or Cleared.</param>
/// <param name="At">When (UTC), as described above.</param>
/// <param name="Level">The alert's level after this event (<see cref="AlertLevels"/>).</param>
/// <param name="Value">The triggering value: bpm, °C, seconds silent or off seat, minutes late. For Cleared: the reading that cleared
/// a heart or temperature alert, 0 for a presence alert, the raised value when closed by session end or removal.</param>
/// <param name="Detail">A short sentence with numbers, e.g. "heart rate 168 bpm for 12 s, 2.1× resting 80 bpm".</param>
/// <param name="AcknowledgedBy">Who acknowledged (Acknowledged events only).</param>
public readonly record struct AlertEvent(
    Guid AlertId,
    int OwnerId,
    AlertKind Kind,
    AlertEventType Type,
    DateTime At,
    int Level,
    double Value,
    string Detail,
    string? AcknowledgedBy = null);

/// <summary>An alert open now, for a dashboard that connects after it was raised.</summary>
/// <param name="AlertId">The alert's id.</param>
/// <param name="OwnerId">The student.</param>
/// <param name="Kind">The rule.</param>
/// <param name="RaisedAt">The <see cref="AlertEvent.At"/> of its Raised event.</param>
/// <param name="Level">Its level now.</param>
/// <param name="Value">The value it was raised with.</param>
/// <param name="Detail">The Raised event's detail.</param>
/// <param name="AcknowledgedBy">Who acknowledged it, or null while unacknowledged.</param>
/// <param name="AcknowledgedAt">When it was acknowledged, or null while unacknowledged.</param>
public readonly record struct ActiveAlert(
    Guid AlertId,
    int OwnerId,
    AlertKind Kind,
    DateTime RaisedAt,
    int Level,
    double Value,
    string Detail,
    string? AcknowledgedBy,
    DateTime? AcknowledgedAt = null);

/// <summary>What the engine did with the readings it was given, for metrics.</summary>
/// <param name="ReadingsEvaluated">Readings that went through the rules.</param>
/// <param name="LateIgnored">Readings older than now − LateAfterSeconds (stored by the server, never alerted on).</param>
/// <param name="OutOfOrderIgnored">Readings not newer than the newest already evaluated for that student and signal.</param>
/// <param name="OutsideSessionIgnored">Readings for students not watched, or stamped outside their session.</param>
/// <param name="FutureIgnored">Readings stamped more than LateAfterSeconds after now (a device clock ahead).</param>
public readonly record struct AlertEngineCounters(
    long ReadingsEvaluated,
    long LateIgnored,
    long OutOfOrderIgnored,
    long OutsideSessionIgnored,
    long FutureIgnored);

namespace Saito.Registry.Model;

/// <summary>
/// A member of staff who works with a class: teachers and aides see the live dashboard of the classes they are
/// listed on, and only those (admins see every class).
/// </summary>
public sealed class ClassStaff
{
    public int ClassId { get; set; }

    public int UserId { get; set; }

    public DateTimeOffset AddedAt { get; set; }
}

/// <summary>
/// One safety alert as the live alert engine raised it, with what happened to it: escalated, acknowledged (by whom,
/// when), cleared. The id is the engine's, so a row is written once and updated by id.
/// </summary>
public sealed class AlertRecord
{
    public Guid Id { get; set; }

    public int OwnerId { get; set; }

    /// <summary>The class whose session was running when it was raised, if any.</summary>
    public int? ClassId { get; set; }

    /// <summary>The engine's kind in kebab case: <c>tachycardia</c>, <c>heart-rate-high</c>, <c>silent-sensor</c>...</summary>
    public required string Kind { get; set; }

    public DateTimeOffset RaisedAt { get; set; }

    /// <summary>0: everyone in the room (aides); 1: escalated to the teacher; 2: escalated to admins.</summary>
    public int Level { get; set; }

    public double? Value { get; set; }

    public required string Detail { get; set; }

    public DateTimeOffset? EscalatedAt { get; set; }

    public DateTimeOffset? AcknowledgedAt { get; set; }

    public string? AcknowledgedBy { get; set; }

    public DateTimeOffset? ClearedAt { get; set; }
}

/// <summary>One look at a student's vital signs: who, which student, when, and through what (audited, listed for admins).</summary>
public sealed class VitalsView
{
    public long Id { get; set; }

    public int OwnerId { get; set; }

    public required string UserName { get; set; }

    public DateTimeOffset At { get; set; }

    /// <summary>Where: <c>live-class</c>, <c>student</c>, <c>api-readings</c>.</summary>
    public required string Via { get; set; }
}

/// <summary>
/// A clinician's alert thresholds for one student (every value optional: unset means the <c>Alerts:*</c> default).
/// </summary>
public sealed class OwnerAlertThreshold : IVersioned
{
    public int OwnerId { get; set; }

    /// <summary>Resting heart rate (beats/min): the baseline for tachycardia instead of the one learned in class.</summary>
    public double? RestingHeartRate { get; set; }

    /// <summary>Tachycardia when heart rate is at least this many times the resting rate.</summary>
    public double? TachycardiaFactor { get; set; }

    public double? HeartRateMax { get; set; }

    public double? HeartRateMin { get; set; }

    /// <summary>Skin temperature (°C) at or above which the student is overheating.</summary>
    public double? OverheatCelsius { get; set; }

    public string? Note { get; set; }

    public required string SetBy { get; set; }

    public DateTimeOffset SetAt { get; set; }

    public int Version { get; set; }
}

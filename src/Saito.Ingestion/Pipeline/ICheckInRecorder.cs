using Saito.Payloads;

namespace Saito.Ingestion.Pipeline;

/// <summary>What the registry said to a check-in from a reader.</summary>
public enum CheckInRecording
{
    /// <summary>Recorded, or already there (a second read, another reader, a redelivery): nothing more to do.</summary>
    Done,

    /// <summary>No such owner: the message becomes an <c>unknown-owner</c> dead letter.</summary>
    UnknownOwner,

    /// <summary>The registry cannot take check-ins (its database failed to migrate): a <c>registry-unavailable</c> dead letter.</summary>
    Unavailable,

    /// <summary>
    /// A check-out with no open check-in of that owner that school day before its time (no arrival, already checked
    /// out at another time, or the arrival is later): a <c>not-checked-in</c> dead letter; nothing changed.
    /// </summary>
    NotCheckedIn,

    /// <summary>
    /// Stamped too long before Saito recorded it, or too far after (the registry's <c>CheckIns:ReaderMaxAgeSeconds</c>,
    /// <c>ReaderMaxAheadSeconds</c>): a <c>bad-check-in</c> dead letter; nothing recorded, no family told.
    /// </summary>
    OutsideWindow,
}

/// <summary>
/// Where check-ins from fingerprint readers go (the registry, wired by the host). The message is acknowledged
/// once this returns: what it records must be committed by then.
/// </summary>
public interface ICheckInRecorder
{
    Task<CheckInRecording> RecordAsync(string readerSerial, CheckInMessage checkIn, CancellationToken cancellationToken);
}

namespace Saito.Registry.Model;

/// <summary>
/// A person's arrival on one school day (unique per owner and school-local date): several readers, a finger read
/// twice or a message redelivered still make one. A check-out sets <see cref="CheckedOutAt"/>; a check-in after a
/// check-out the same day clears it again (the student came back).
/// </summary>
public sealed class CheckIn
{
    public long Id { get; set; }

    public int OwnerId { get; set; }

    public Owner? Owner { get; set; }

    public DateOnly SchoolDate { get; set; }

    public DateTimeOffset CheckedInAt { get; set; }

    public DateTimeOffset? CheckedOutAt { get; set; }

    /// <summary>How: <c>reader:{serial}</c> for a fingerprint reader, <c>staff:{user}</c> by hand.</summary>
    public required string Source { get; set; }

    public DateTimeOffset RecordedAt { get; set; }
}

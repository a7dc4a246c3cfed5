namespace Saito.Registry.Model;

public enum NoticeKind
{
    /// <summary>The student was checked in.</summary>
    Arrived,

    /// <summary>A session started and the student had not arrived after the grace period.</summary>
    NotArrived,
}

public enum NoticeState
{
    Pending,
    Sent,

    /// <summary>Given up after <c>Notices:MaxAttempts</c>, or refused permanently by the mail server.</summary>
    Failed,
}

/// <summary>
/// One email to one contact, in the outbox: written in the same transaction as what caused it (a check-in, a
/// session's absence check), sent afterwards by the notice sender with retries. <see cref="DedupKey"/> is unique,
/// so the same event never queues the same contact twice.
/// </summary>
public sealed class Notice
{
    public long Id { get; set; }

    public NoticeKind Kind { get; set; }

    public int OwnerId { get; set; }

    public int ContactId { get; set; }

    public int? SessionId { get; set; }

    public long? CheckInId { get; set; }

    public required string DedupKey { get; set; }

    public required string ToAddress { get; set; }

    public required string Language { get; set; }

    public NoticeState State { get; set; }

    public int Attempts { get; set; }

    public DateTimeOffset CreatedAt { get; set; }

    public DateTimeOffset NextAttemptAt { get; set; }

    public DateTimeOffset? SentAt { get; set; }

    public string? LastError { get; set; }

    /// <summary>The Message-ID the email carries (the same on every attempt, so a resend after a crash is recognisable).</summary>
    public required string MessageId { get; set; }
}

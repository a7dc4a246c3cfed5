namespace Saito.Live.Alerts;

/// <summary>What <see cref="RuleState.Step"/> decided for one reading.</summary>
internal enum RuleStep
{
    None = 0,
    Raise = 1,
    Clear = 2,
}

/// <summary>
/// One rule of one student: the onset and clear timers (reading time) and the open alert, if any.
/// Mutable and reused for the student's whole stay, so evaluating a reading allocates nothing.
/// </summary>
internal sealed class RuleState(StudentState student, AlertKind kind)
{
    public readonly StudentState Student = student;
    public readonly AlertKind Kind = kind;

    /// <summary>Reading time the condition started holding without a break; null when it does not hold.</summary>
    public DateTime? OnsetSince;
    /// <summary>Reading time the condition started being absent (beyond hysteresis) while open.</summary>
    public DateTime? ClearSince;
    /// <summary>Timestamp of the last reading this rule evaluated, to see gaps.</summary>
    public DateTime LastAt;

    public bool IsOpen;
    public Guid AlertId;
    public int Level;
    public DateTime RaisedAt;
    public DateTime NextEscalationAt;
    public double Value;
    public string Detail = "";
    public string? AcknowledgedBy;
    public DateTime? AcknowledgedAt;

    /// <summary>
    /// Onset needs <paramref name="holds"/> at every reading for <paramref name="onset"/>; clearing needs
    /// <paramref name="absent"/> (the condition beyond its hysteresis margin) at every reading for
    /// <paramref name="clear"/>. A gap longer than <paramref name="maxGap"/> restarts whichever is timing.
    /// </summary>
    public RuleStep Step(DateTime t, bool holds, bool absent, TimeSpan onset, TimeSpan clear, TimeSpan maxGap)
    {
        var gap = LastAt != default && t - LastAt > maxGap;
        LastAt = t;
        return IsOpen
            ? (Held(ref ClearSince, absent, t, gap, clear) ? RuleStep.Clear : RuleStep.None)
            : (Held(ref OnsetSince, holds, t, gap, onset) ? RuleStep.Raise : RuleStep.None);
    }

    /// <summary>Whether <paramref name="condition"/> has held at every reading since <paramref name="since"/>, for <paramref name="span"/>.</summary>
    private static bool Held(ref DateTime? since, bool condition, DateTime t, bool gap, TimeSpan span)
    {
        if (!condition)
        {
            since = null;
            return false;
        }
        if (since is null || gap)
        {
            since = t;
        }
        return t - since.GetValueOrDefault() >= span;
    }

    /// <summary>Forgets the timers (not the open alert): after a session change or a gap in what feeds the rule.</summary>
    public void ResetTimers()
    {
        OnsetSince = null;
        ClearSince = null;
        LastAt = default;
    }
}

using Saito.Readings;

namespace Saito.Storage;

/// <summary>
/// What writing one batch counted, kept the same way by every database's write loop so that
/// <see cref="BatchWriteResult.Duplicates"/> means the same everywhere: readings sent, readings stored (a new row, or
/// values added to a stored one), and readings whose values conflicted with a stored one (dead letters, not duplicates).
/// </summary>
internal sealed class BatchTally
{
    public long Sent { get; set; }

    public long Inserted { get; set; }

    public long Conflicted { get; set; }

    /// <summary>The conflicting readings as dead letters; null while there is none.</summary>
    public List<DeadLetter>? Conflicts { get; set; }

    public BatchWriteResult Result(int deadLetters) => new(Inserted, Sent - Inserted - Conflicted, deadLetters);
}

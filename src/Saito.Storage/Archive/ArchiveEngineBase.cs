namespace Saito.Storage.Archive;

/// <summary>
/// What the three engines share: the pause hook the crash tests stop them at (<see cref="IArchivePauses"/>), and the
/// rule that a select reaches <c>mid-select</c> when half the batch is read.
/// </summary>
internal abstract class ArchiveEngineBase
{
    protected ArchiveEngineBase(StorageOptions options, IArchivePauses pauses)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(pauses);
        Pauses = pauses;
    }

    protected IArchivePauses Pauses { get; }

    /// <summary>Adds a row the batch's select read; when that makes half the batch, reaches <c>mid-select</c>.</summary>
    protected void AddSelected(List<ArchiveRow> rows, ArchiveRow row, ArchiveBatch batch)
    {
        rows.Add(row);
        if (rows.Count == batch.BatchRows / 2)
        {
            Pauses.Reach("mid-select", batch.Id);
        }
    }
}

namespace Saito.Readings;

/// <summary>
/// What one writer commits in one transaction: readings of every kind and the dead letters that came with
/// them. Reused between flushes (<see cref="Clear"/>) so the write path does not allocate per batch.
/// </summary>
public sealed class ReadingBatch
{
    private readonly List<Reading>[] _byKind = [new(), new(), new()];

    public List<DeadLetter> DeadLetters { get; } = new();

    /// <summary>Readings of one kind, in the order they were added.</summary>
    public IReadOnlyList<Reading> Of(ReadingKind kind) => _byKind[(int)kind];

    public int ReadingCount => _byKind[0].Count + _byKind[1].Count + _byKind[2].Count;

    public bool IsEmpty => ReadingCount == 0 && DeadLetters.Count == 0;

    public void Add(in Reading reading) => _byKind[(int)reading.Kind].Add(reading);

    /// <summary>The writers' path: a list is walked by index (no boxed enumerator per message).</summary>
    public void AddRange(List<Reading> readings)
    {
        ArgumentNullException.ThrowIfNull(readings);
        for (int i = 0; i < readings.Count; i++)
        {
            Add(readings[i]);
        }
    }

    public void AddRange(IEnumerable<Reading> readings)
    {
        ArgumentNullException.ThrowIfNull(readings);
        foreach (var reading in readings)
        {
            Add(reading);
        }
    }

    public void Clear()
    {
        foreach (var list in _byKind)
        {
            list.Clear();
        }

        DeadLetters.Clear();
    }
}

/// <summary>What a committed batch did.</summary>
/// <param name="Inserted">readings now stored that were not before</param>
/// <param name="Duplicates">readings that were already stored (same key), skipped; -1 where the database cannot say (SQL Server's IGNORE_DUP_KEY)</param>
/// <param name="DeadLetters">dead letters stored</param>
public readonly record struct BatchWriteResult(long Inserted, long Duplicates, int DeadLetters);

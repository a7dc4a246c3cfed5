using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>What <c>run</c> is asked to do.</summary>
public sealed record ArchiveRunRequest
{
    public required IReadOnlyList<ReadingKind> Kinds { get; init; }

    /// <summary>Readings with ts before this (UTC) are moved.</summary>
    public required DateTime Cutoff { get; init; }

    public int Threads { get; init; } = 1;

    public int BatchRows { get; init; } = 50_000;

    public required string ExportDirectory { get; init; }

    public bool Gzip { get; init; }

    /// <summary>Count only: no journal, no file, no row changes.</summary>
    public bool DryRun { get; init; }
}

/// <summary>Rows and batches of one kind in a run.</summary>
public sealed class ArchiveKindSummary
{
    public required string Kind { get; init; }

    public long RowsOlder { get; set; }

    private long _rowsMoved;
    private long _rowsInserted;
    private long _batches;

    public long RowsMoved => Interlocked.Read(ref _rowsMoved);

    public long RowsInserted => Interlocked.Read(ref _rowsInserted);

    public long Batches => Interlocked.Read(ref _batches);

    internal void AddInserted(long rows) => Interlocked.Add(ref _rowsInserted, rows);

    internal void AddBatch(long rows)
    {
        Interlocked.Add(ref _rowsMoved, rows);
        Interlocked.Increment(ref _batches);
    }
}

/// <summary>What <c>run</c> did.</summary>
public sealed class ArchiveRunSummary
{
    public required bool DryRun { get; init; }

    public required DateTime CutoffUtc { get; init; }

    public required string KeyStrategy { get; init; }

    public required IReadOnlyList<ArchiveKindSummary> Kinds { get; init; }

    public int ResumedBatches { get; set; }

    public int UnfinishedBatches { get; set; }

    public List<string> Failures { get; } = [];

    public TimeSpan Elapsed { get; set; }

    public long RowsMoved => Kinds.Sum(k => k.RowsMoved);

    public long RowsOlder => Kinds.Sum(k => k.RowsOlder);

    public double RowsPerSecond => Elapsed.TotalSeconds > 0 ? RowsMoved / Elapsed.TotalSeconds : 0;

    /// <summary>True when there was nothing to move and nothing to resume.</summary>
    public bool NothingToDo => RowsOlder == 0 && ResumedBatches == 0 && UnfinishedBatches == 0;
}

/// <summary>What <c>verify</c> found: every problem in words a person can act on.</summary>
public sealed class ArchiveVerifyReport
{
    /// <summary>The journal is missing or holds no batch (of the kinds asked): there was nothing to check the exports against.</summary>
    public bool NothingToVerify { get; set; }

    /// <summary>With <see cref="NothingToVerify"/>: the manifests found in the export folder.</summary>
    public int ExportFiles { get; set; }

    public int BatchesChecked { get; set; }

    public long RowsChecked { get; set; }

    public List<string> Problems { get; } = [];

    public bool Ok => Problems.Count == 0;
}

/// <summary>What <c>restore</c> did.</summary>
public sealed class ArchiveRestoreSummary
{
    public int Files { get; set; }

    /// <summary>Rows read and found valid (inserted, or already there).</summary>
    public long RowsRead { get; set; }

    public long RowsInserted { get; set; }

    /// <summary>Lines skipped (malformed, outside ingestion's limits, an unknown device): each in <see cref="RejectsFile"/>.</summary>
    public long RowsRejected { get; set; }

    /// <summary>The file holding every rejected line (null when none was rejected).</summary>
    public string? RejectsFile { get; set; }

    /// <summary>Symbolic links found in the folders and not followed (<c>link -> target</c>).</summary>
    public List<string> SkippedLinks { get; } = [];

    /// <summary>What of the schema was missing and created before restoring (a fresh tier).</summary>
    public List<string> SchemaCreated { get; } = [];

    public List<string> Problems { get; } = [];
}

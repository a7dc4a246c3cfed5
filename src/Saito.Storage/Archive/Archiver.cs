using System.Diagnostics;
using System.Globalization;
using System.IO.Compression;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Archive;

// CA1873: the log arguments below are computed a few times per batch of tens of thousands of rows, never per row.
#pragma warning disable CA1873

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

/// <summary>
/// The archiver: moves readings older than a cutoff from the hot tables to the archive tables through export files,
/// batch by batch, each batch's progress in a journal so that a run killed at any point is finished by the next.
/// <para>
/// A batch: <b>plan</b> (journal: planned, with its slice and the key it starts after) → <b>select</b> up to
/// <see cref="ArchiveRunRequest.BatchRows"/> rows in key order → <b>export</b> them to a CSV file and a manifest, each
/// written to a temporary name, synced and renamed (journal: exported, with row count, first/last key and SHA-256) →
/// <b>archive</b>: insert the export's rows into the archive table, skipping any already there, with the journal's
/// "archived" in the same transaction → <b>delete</b> exactly the export's keys from the hot table (rows that arrived
/// meanwhile stay for the next run) → journal: done. Resumed batches read their rows back from the export file, after
/// checking its SHA-256 against the journal, so a batch is always moved from the copy that was recorded.
/// </para>
/// See docs/archiver.md.
/// </summary>
public sealed class Archiver : IAsyncDisposable
{
    private readonly IArchiveEngine _engine;
    private readonly KeyStrategy _keys;
    private readonly ILogger _logger;
    private readonly StorageOptions _storage;
    private readonly ILoggerFactory _loggerFactory;
    private readonly IArchivePauses _pauses;

    public Archiver(StorageOptions storage, ILoggerFactory loggerFactory)
        : this(storage, loggerFactory, IArchivePauses.None)
    {
    }

    /// <summary>With a hook called at each of <see cref="ArchivePausePoints.All"/> (the crash tests stop the process there).</summary>
    internal Archiver(StorageOptions storage, ILoggerFactory loggerFactory, IArchivePauses pauses)
    {
        ArgumentNullException.ThrowIfNull(storage);
        ArgumentNullException.ThrowIfNull(loggerFactory);
        ArgumentNullException.ThrowIfNull(pauses);
        _keys = storage.KeyStrategy;
        _storage = storage;
        _loggerFactory = loggerFactory;
        _logger = loggerFactory.CreateLogger<Archiver>();
        _pauses = pauses;
        _engine = StorageProviders.TryGet(storage.Provider, out var registration)
            ? registration.ArchiveEngine(storage, pauses)
            : throw new ArchiveSetupException($"Unknown Storage:Provider {storage.Provider}.");
    }

    public string Describe() => _engine.Describe();

    /// <summary>Rows moved so far in the current run (for a progress bar), and the rows it expects to move.</summary>
    public long Progress => Interlocked.Read(ref _progress);

    public long ProgressTotal => Interlocked.Read(ref _progressTotal);

    private long _progress;
    private long _progressTotal;

    public async Task<ArchiveRunSummary> RunAsync(ArchiveRunRequest request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        var stopwatch = Stopwatch.StartNew();
        await _engine.UseWorkersAsync(Math.Max(1, request.Threads));
        long cutoff = ReadingTime.ToUnixMicroseconds(ReadingTime.Truncate(request.Cutoff));
        var summary = new ArchiveRunSummary
        {
            DryRun = request.DryRun,
            CutoffUtc = ReadingTime.FromUnixMicroseconds(cutoff),
            KeyStrategy = SchemaScript.KeyStrategyName(_keys),
            Kinds = request.Kinds.Select(k => new ArchiveKindSummary { Kind = ReadingKinds.Name(k) }).ToList(),
        };
        ArchiveKindSummary Of(ReadingKind kind) => summary.Kinds.First(k => k.Kind == ReadingKinds.Name(kind));

        foreach (var kind in request.Kinds)
        {
            Of(kind).RowsOlder = await _engine.CountOlderAsync(kind, _keys, cutoff, cancellationToken);
        }

        if (request.DryRun)
        {
            if (await _engine.JournalExistsAsync(cancellationToken))
            {
                summary.UnfinishedBatches = (await _engine.LoadJournalAsync(unfinishedOnly: true, cancellationToken)).Count;
            }

            summary.Elapsed = stopwatch.Elapsed;
            return summary;
        }

        await using var runLock = await _engine.TryLockRunAsync(cancellationToken);
        if (runLock is null)
        {
            summary.Failures.Add(
                $"Another saito-archiver run is working on {_engine.Describe()} (it holds the run lock); this run did nothing. " +
                "Let it finish, or schedule runs so they do not overlap.");
            summary.Elapsed = stopwatch.Elapsed;
            return summary;
        }

        await _engine.EnsureJournalAsync(cancellationToken);
        var unfinished = await _engine.LoadJournalAsync(unfinishedOnly: true, cancellationToken);
        Interlocked.Exchange(ref _progress, 0);
        Interlocked.Exchange(ref _progressTotal, summary.RowsOlder + unfinished.Where(b => b.State != BatchState.Planned).Sum(b => b.Rows));

        // Unfinished batches first: their rows may be in both tiers until they are done.
        summary.ResumedBatches = unfinished.Count;
        await Parallel.ForEachAsync(unfinished, Workers(request, cancellationToken), async (batch, token) =>
        {
            if (_logger.IsEnabled(LogLevel.Information))
            {
                ArchiveLog.Resuming(_logger, batch.Id, ReadingKinds.Name(batch.Kind), ArchiveBatch.StateName(batch.State));
            }

            await GuardedAsync(batch, summary, async () => await AdvanceAsync(batch, Of(batch.Kind), token));
        });

        string runId = string.Create(CultureInfo.InvariantCulture, $"{DateTime.UtcNow:yyyyMMdd'T'HHmmss'Z'}-{Random.Shared.Next(0x10000):x4}");
        var slices = new List<ArchiveSlice>();
        foreach (var kind in request.Kinds)
        {
            if (_keys == KeyStrategy.Natural)
            {
                if (await _engine.DeviceRangeAsync(kind, _keys, cancellationToken) is { } range)
                {
                    slices.AddRange(ArchiveSlice.Split(kind, range.Min, range.Max, request.Threads));
                }
            }
            else
            {
                slices.AddRange(ArchiveSlice.Split(kind, 0, uint.MaxValue, request.Threads));
            }
        }

        if (_logger.IsEnabled(LogLevel.Information))
        {
            ArchiveLog.RunStarted(_logger, string.Join(", ", summary.Kinds.Select(k => k.Kind)), summary.CutoffUtc, _engine.Describe(), summary.RowsOlder,
                slices.Count, request.Threads, request.BatchRows, Path.GetFullPath(request.ExportDirectory));
        }

        if (summary.Failures.Count == 0)
        {
            await Parallel.ForEachAsync(slices, Workers(request, cancellationToken), async (slice, token) =>
            {
                if (_engine is IArchiveMoveEngine)
                {
                    await RunSliceMovingAsync(runId, slice, cutoff, request, Of(slice.Kind), summary, token);
                }
                else
                {
                    await RunSliceAsync(runId, slice, cutoff, request, Of(slice.Kind), summary, token);
                }
            });
        }

        summary.Elapsed = stopwatch.Elapsed;
        return summary;
    }

    private static ParallelOptions Workers(ArchiveRunRequest request, CancellationToken cancellationToken) =>
        new() { MaxDegreeOfParallelism = Math.Max(1, request.Threads), CancellationToken = cancellationToken };

    /// <summary>
    /// One worker's slice, batch after batch, two batches in flight: while batch k is inserted into the archive and
    /// deleted from hot, batch k+1 is selected and exported. That is safe because batch k+1 starts after batch k's last
    /// key (its rows cannot overlap) and each batch has its own journal entry, so a crash leaves at most two unfinished
    /// batches per slice, each resumed on its own by the next run. The database and the file system work at once
    /// instead of in turn.
    /// </summary>
    private async Task RunSliceAsync(string runId, ArchiveSlice slice, long cutoff, ArchiveRunRequest request, ArchiveKindSummary kindSummary,
        ArchiveRunSummary summary, CancellationToken cancellationToken)
    {
        string? cursor = null;
        Task<ArchiveBatch?>? finishing = null;
        try
        {
            for (int sequence = 1; ; sequence++)
            {
                var batch = await PlanAsync(runId, slice, sequence, cursor, cutoff, request, cancellationToken);
                var exported = await GuardedAsync(batch, summary, async () => await ExportStageAsync(batch, cancellationToken));
                if (finishing is not null)
                {
                    var previous = await finishing;
                    finishing = null;
                    if (previous is null)
                    {
                        // The previous batch failed (logged and counted); this one, if exported, waits in the journal for the next run.
                        return;
                    }
                }

                if (exported is not { Batch.Rows: > 0 })
                {
                    return;
                }

                var (done, rows) = exported.Value;
                finishing = GuardedAsync(done, summary, async () => await FinishStageAsync(done, rows, kindSummary, cancellationToken));
                if (done.Rows < request.BatchRows)
                {
                    if (await finishing is not null && _logger.IsEnabled(LogLevel.Information))
                    {
                        ArchiveLog.SliceFinished(_logger, slice.ToString());
                    }

                    finishing = null;
                    return;
                }

                cursor = done.LastKey;
            }
        }
        finally
        {
            if (finishing is not null)
            {
                await finishing;
            }
        }
    }

    /// <summary>Records the next batch of a slice as planned: the rows after <paramref name="cursor"/>.</summary>
    private async Task<ArchiveBatch> PlanAsync(string runId, ArchiveSlice slice, int sequence, string? cursor, long cutoff, ArchiveRunRequest request,
        CancellationToken cancellationToken)
    {
        string id = string.Create(CultureInfo.InvariantCulture,
            $"{runId}-{ReadingKinds.Name(slice.Kind)}-{SchemaScript.KeyStrategyName(_keys)}-s{slice.Number:D2}-{sequence:D5}");
        var batch = new ArchiveBatch
        {
            Id = id,
            RunId = runId,
            Kind = slice.Kind,
            Keys = _keys,
            Slice = slice.Number,
            SliceLow = slice.Low,
            SliceHigh = slice.High,
            Cursor = cursor,
            CutoffMicros = cutoff,
            BatchRows = request.BatchRows,
            State = BatchState.Planned,
            File = ExportFiles.DataPath(request.ExportDirectory, id, slice.Kind, request.Gzip),
        };
        await _engine.PlanAsync(batch, cancellationToken);
        _pauses.Reach("planned", batch.Id);
        return batch;
    }

    /// <summary>
    /// One worker's slice on an engine that moves a batch in one transaction (<see cref="IArchiveMoveEngine"/>), two
    /// batches in flight: as soon as batch k's delete statement has returned its rows (so its last key is known), batch
    /// k+1 is planned after that key and its move starts, while batch k's export is written, its rows copied into the
    /// archive and its transaction committed; with more than one worker, each keeps one batch in flight. (The same shape as <see cref="RunSliceAsync"/>, but the next batch starts
    /// when the rows are known rather than when they are exported.) The two never share a row (k+1 starts after k's last key) and each has its own journal entry and
    /// transaction, so a crash leaves at most two planned batches per slice, each resumed on its own.
    /// </summary>
    private async Task RunSliceMovingAsync(string runId, ArchiveSlice slice, long cutoff, ArchiveRunRequest request, ArchiveKindSummary kindSummary,
        ArchiveRunSummary summary, CancellationToken cancellationToken)
    {
        string? cursor = null;
        Task<ArchiveBatch?>? previous = null;
        try
        {
            for (int sequence = 1; ; sequence++)
            {
                var batch = await PlanAsync(runId, slice, sequence, cursor, cutoff, request, cancellationToken);
                var selected = new TaskCompletionSource<(long Rows, string? LastKey)>(TaskCreationOptions.RunContinuationsAsynchronously);
                var moving = GuardedAsync(batch, summary, async () => await MoveStageAsync(batch, selected, kindSummary, cancellationToken));
                await Task.WhenAny(selected.Task, moving);
                if (previous is not null)
                {
                    var finished = await previous;
                    previous = null;
                    if (finished is null)
                    {
                        // The previous batch failed (logged and counted); this one finishes, and the run stops here.
                        await moving;
                        return;
                    }
                }

                if (!selected.Task.IsCompleted)
                {
                    // Failed before its rows were known (logged and counted): the journal keeps it planned for the next run.
                    await moving;
                    return;
                }

                var (rows, lastKey) = await selected.Task;
                if (rows < request.BatchRows)
                {
                    if (await moving is not null && _logger.IsEnabled(LogLevel.Information))
                    {
                        ArchiveLog.SliceFinished(_logger, slice.ToString());
                    }

                    return;
                }

                cursor = lastKey;
                previous = moving;
                if (request.Threads > 1)
                {
                    // Several workers already keep the server busy: one batch in flight each (eight move transactions at once
                    // on two cores made the server's own inserts wait up to 2 s; docs/archiver.md#speed).
                    if (await previous is null)
                    {
                        previous = null;
                        return;
                    }

                    previous = null;
                }
            }
        }
        finally
        {
            if (previous is not null)
            {
                await previous;
            }
        }
    }

    /// <summary>
    /// Planned → done through <see cref="IArchiveMoveEngine.MoveAsync"/>; <paramref name="selected"/> learns the batch's
    /// row count and last key as soon as the rows are known. A batch with a key already in the archive goes the
    /// step-by-step way (export, then insert skipping such keys, then delete).
    /// </summary>
    private async Task<ArchiveBatch?> MoveStageAsync(ArchiveBatch batch, TaskCompletionSource<(long Rows, string? LastKey)>? selected,
        ArchiveKindSummary kindSummary, CancellationToken cancellationToken)
    {
        var mover = (IArchiveMoveEngine)_engine;
        // Whatever an interrupted export of this batch left is discarded: nothing of it was moved yet.
        ExportFiles.Discard(batch.File);
        var move = await mover.MoveAsync(batch, rows =>
        {
            selected?.TrySetResult((rows.Count, rows[^1].KeyText(batch.Keys)));
            return WriteExport(batch, rows);
        }, cancellationToken);
        switch (move.Outcome)
        {
            case ArchiveMoveOutcome.Empty:
                selected?.TrySetResult((0, null));
                await _engine.ForgetAsync(batch.Id, cancellationToken);
                return move.Batch;
            case ArchiveMoveOutcome.Conflict:
                ArchiveMoveLog.Conflict(_logger, batch.Id, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive));
                var exported = await ExportStageAsync(batch, cancellationToken);
                selected?.TrySetResult(exported is { Batch: var b } ? (b.Rows, b.LastKey) : (0, null));
                return exported is { Batch.Rows: > 0 } ? await FinishStageAsync(exported.Value.Batch, exported.Value.Rows, kindSummary, cancellationToken) : batch with { Rows = 0 };
        }

        var done = move.Batch;
        ArchiverMetrics.Stage(done.Kind, ArchiverMetrics.ExportStage, TimeSpan.FromMilliseconds(move.StatementMilliseconds + move.ExportMilliseconds));
        ArchiverMetrics.Stage(done.Kind, ArchiverMetrics.ArchiveStage, TimeSpan.FromMilliseconds(move.ArchiveMilliseconds));
        ArchiverMetrics.Stage(done.Kind, ArchiverMetrics.DeleteStage, TimeSpan.FromMilliseconds(move.CommitMilliseconds));
        ArchiverMetrics.Moved(done.Kind, done.Rows);
        if (_logger.IsEnabled(LogLevel.Information))
        {
            ArchiveLog.Exported(_logger, done.Id, done.Rows, done.FirstKey, done.LastKey, done.File, move.ExportMilliseconds, move.StatementMilliseconds);
            ArchiveMoveLog.Moved(_logger, done.Id, done.Rows, ReadingTables.TableName(done.Kind, done.Keys, StorageTier.Hot),
                ReadingTables.TableName(done.Kind, done.Keys, StorageTier.Archive), move.TotalMilliseconds, move.StatementMilliseconds, move.ExportMilliseconds,
                move.ArchiveMilliseconds, move.CommitMilliseconds);
        }

        kindSummary.AddInserted(done.Rows);
        kindSummary.AddBatch(done.Rows);
        Interlocked.Add(ref _progress, done.Rows);
        _pauses.Reach("done", done.Id);
        return done;
    }

    /// <summary>Runs one stage of a batch; null when it failed (logged and added to the summary's failures; the journal keeps the batch for the next run).</summary>
    private async Task<T?> GuardedAsync<T>(ArchiveBatch batch, ArchiveRunSummary summary, Func<Task<T>> stage)
    {
        try
        {
            return await stage();
        }
        catch (Exception exception) when (exception is not OperationCanceledException)
        {
            ArchiveLog.BatchFailed(_logger, exception, batch.Id, ArchiveBatch.StateName(batch.State));
            ArchiverMetrics.Failed(batch.Kind);
            lock (summary.Failures)
            {
                summary.Failures.Add($"batch {batch.Id}: {exception.GetType().Name}: {exception.Message}");
            }

            return default;
        }
    }

    /// <summary>Takes a (resumed) batch from its journal state to done.</summary>
    private async Task<ArchiveBatch?> AdvanceAsync(ArchiveBatch batch, ArchiveKindSummary kindSummary, CancellationToken cancellationToken)
    {
        List<ArchiveRow>? rows = null;
        if (batch.State == BatchState.Planned && _engine is IArchiveMoveEngine)
        {
            return await MoveStageAsync(batch, selected: null, kindSummary, cancellationToken);
        }

        if (batch.State == BatchState.Planned)
        {
            if (await ExportStageAsync(batch, cancellationToken) is not { Batch.Rows: > 0 } exported)
            {
                return batch with { Rows = 0 };
            }

            (batch, rows) = exported;
        }

        return await FinishStageAsync(batch, rows, kindSummary, cancellationToken);
    }

    /// <summary>Planned → exported: select the rows, write the export and its manifest, record it. No rows: the batch is forgotten.</summary>
    private async Task<(ArchiveBatch Batch, List<ArchiveRow> Rows)?> ExportStageAsync(ArchiveBatch batch, CancellationToken cancellationToken)
    {
        var stopwatch = Stopwatch.StartNew();
        // Whatever an interrupted export of this batch left is discarded: nothing of it was moved yet.
        ExportFiles.Discard(batch.File);
        var rows = await _engine.SelectAsync(batch, cancellationToken);
        long selectMs = stopwatch.ElapsedMilliseconds;
        if (rows.Count == 0)
        {
            await _engine.ForgetAsync(batch.Id, cancellationToken);
            return (batch with { Rows = 0 }, rows);
        }

        batch = WriteExport(batch, rows);
        await _engine.SetStateAsync(batch, cancellationToken);
        ArchiverMetrics.Stage(batch.Kind, ArchiverMetrics.ExportStage, stopwatch.Elapsed);
        ArchiveLog.Exported(_logger, batch.Id, rows.Count, batch.FirstKey, batch.LastKey, batch.File, stopwatch.ElapsedMilliseconds, selectMs);
        _pauses.Reach("exported", batch.Id);
        return (batch, rows);
    }

    /// <summary>Writes the rows' export and its manifest (each synced, then renamed into place); returns the batch as exported, with its rows, keys and SHA-256.</summary>
    private ArchiveBatch WriteExport(ArchiveBatch batch, List<ArchiveRow> rows)
    {
        bool fileGzip = ArchiveCsv.IsGzip(batch.File);
        int half = rows.Count / 2;
        string sha = ExportFiles.WriteData(batch.File, rows, batch.Kind, batch.Keys, fileGzip,
            i =>
            {
                if (i == half)
                {
                    _pauses.Reach("mid-export", batch.Id);
                }
            });
        _pauses.Reach("export-renamed", batch.Id);
        string first = rows[0].KeyText(batch.Keys);
        string last = rows[^1].KeyText(batch.Keys);
        ExportFiles.WriteManifest(batch.File, ExportFiles.Manifest(batch, batch.File, fileGzip, rows.Count, first, last, sha));
        _pauses.Reach("manifest-written", batch.Id);
        return batch with { State = BatchState.Exported, Rows = rows.Count, FirstKey = first, LastKey = last, Sha256 = sha };
    }

    /// <summary>
    /// Exported → archived → done: insert the rows into the archive table, then delete them from hot. <paramref name="rows"/>
    /// is null for a resumed batch: its rows are read back from the export, after checking its SHA-256.
    /// </summary>
    private async Task<ArchiveBatch> FinishStageAsync(ArchiveBatch batch, List<ArchiveRow>? rows, ArchiveKindSummary kindSummary, CancellationToken cancellationToken)
    {
        bool selectedHere = rows is not null;
        if (batch.State == BatchState.Exported)
        {
            var stopwatch = Stopwatch.StartNew();
            rows ??= ReadExport(batch);
            long inserted = await _engine.ArchiveAsync(batch, rows, cancellationToken);
            batch = batch with { State = BatchState.Archived };
            kindSummary.AddInserted(inserted);
            ArchiverMetrics.Stage(batch.Kind, ArchiverMetrics.ArchiveStage, stopwatch.Elapsed);
            if (_logger.IsEnabled(LogLevel.Information))
            {
                ArchiveLog.Archived(_logger, batch.Id, inserted, rows.Count, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive),
                    stopwatch.ElapsedMilliseconds, inserted == rows.Count ? string.Empty : $" ({rows.Count - inserted} already there: a resumed batch)");
            }

            _pauses.Reach("archived", batch.Id);
        }

        if (batch.State == BatchState.Archived)
        {
            var stopwatch = Stopwatch.StartNew();
            rows ??= ReadExport(batch);
            long deleted = await _engine.DeleteHotAsync(batch, rows, rangeFirst: selectedHere, cancellationToken);
            batch = batch with { State = BatchState.Done };
            ArchiverMetrics.Stage(batch.Kind, ArchiverMetrics.DeleteStage, stopwatch.Elapsed);
            ArchiverMetrics.Moved(batch.Kind, rows.Count);
            if (_logger.IsEnabled(LogLevel.Information))
            {
                ArchiveLog.Deleted(_logger, batch.Id, deleted, ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot), stopwatch.ElapsedMilliseconds);
            }

            kindSummary.AddBatch(rows.Count);
            Interlocked.Add(ref _progress, rows.Count);
            _pauses.Reach("done", batch.Id);
        }

        return batch;
    }

    /// <summary>The rows of a batch's export, after checking the file is the one the journal recorded.</summary>
    private static List<ArchiveRow> ReadExport(ArchiveBatch batch)
    {
        if (!File.Exists(batch.File))
        {
            throw new FileNotFoundException(
                $"The export of batch {batch.Id} ({batch.File}) is missing, and the journal says it was written: restore the file (it is the copy of these rows) and run again.",
                batch.File);
        }

        string sha = ExportFiles.Sha256Of(batch.File);
        if (!string.Equals(sha, batch.Sha256, StringComparison.OrdinalIgnoreCase))
        {
            throw new InvalidDataException(
                $"The export of batch {batch.Id} ({batch.File}) has SHA-256 {sha}, the journal recorded {batch.Sha256}: the file changed after it was written; refusing to move rows from it.");
        }

        var rows = ArchiveCsv.Read(batch.File, batch.Kind, batch.Keys).ToList();
        if (rows.Count != batch.Rows)
        {
            throw new InvalidDataException($"The export of batch {batch.Id} holds {rows.Count} rows, the journal recorded {batch.Rows}.");
        }

        return rows;
    }

    /// <summary>
    /// Checks every batch in the journal: its manifest, its file's SHA-256 and row count, every exported row in the
    /// archive table with the same values and none in the hot table; then that no key is in both tiers.
    /// </summary>
    public Task<ArchiveVerifyReport> VerifyAsync(IReadOnlyList<ReadingKind> kinds, CancellationToken cancellationToken) =>
        VerifyAsync(kinds, exportDirectory: null, cancellationToken);

    /// <summary>
    /// <see cref="VerifyAsync(IReadOnlyList{ReadingKind}, CancellationToken)"/>; when the journal is missing or holds no
    /// batch of these kinds (a lost archive file took it along), there is nothing to check the exports against: that is
    /// a problem that says so and counts the manifests in <paramref name="exportDirectory"/>, never an "OK on 0 batches".
    /// </summary>
    public async Task<ArchiveVerifyReport> VerifyAsync(IReadOnlyList<ReadingKind> kinds, string? exportDirectory, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(kinds);
        var report = new ArchiveVerifyReport();
        IReadOnlyList<ArchiveBatch> batches = await _engine.JournalExistsAsync(cancellationToken)
            ? await _engine.LoadJournalAsync(unfinishedOnly: false, cancellationToken)
            : [];
        if (!batches.Any(b => kinds.Contains(b.Kind)))
        {
            var skipped = new List<string>();
            string folder = Path.GetFullPath(exportDirectory ?? new ArchiverOptions().EffectiveExportDirectory(_storage));
            report.NothingToVerify = true;
            report.ExportFiles = Directory.Exists(folder) ? ArchiveRestore.FindManifests([folder], skipped, cancellationToken).Count : 0;
            string kindsNote = batches.Count > 0 ? " for these kinds" : string.Empty;
            string hint = report.ExportFiles > 0 ? " (if the archive database was lost, `restore` them into a fresh archive tier; verify checks batches the journal recorded)" : string.Empty;
            report.Problems.Add(string.Create(CultureInfo.InvariantCulture,
                $"the archive journal ({_engine.Describe()}) is empty or missing{kindsNote}: nothing to verify against; {report.ExportFiles} export file(s) found in {folder}{hint}"));
            return report;
        }

        foreach (var batch in batches.Where(b => kinds.Contains(b.Kind)))
        {
            cancellationToken.ThrowIfCancellationRequested();
            report.BatchesChecked++;
            if (batch.State != BatchState.Done)
            {
                report.Problems.Add($"batch {batch.Id} is unfinished (journal: {ArchiveBatch.StateName(batch.State)}); `run` finishes it first.");
                continue;
            }

            string manifestPath = ExportFiles.ManifestPath(batch.File);
            if (!File.Exists(batch.File) || !File.Exists(manifestPath))
            {
                report.Problems.Add($"batch {batch.Id}: {(File.Exists(batch.File) ? manifestPath : batch.File)} is missing.");
                continue;
            }

            var manifest = ExportFiles.ReadManifest(manifestPath);
            string sha = ExportFiles.Sha256Of(batch.File);
            if (!string.Equals(manifest.Sha256, batch.Sha256, StringComparison.OrdinalIgnoreCase))
            {
                report.Problems.Add($"batch {batch.Id}: the manifest's SHA-256 {manifest.Sha256} differs from the journal's {batch.Sha256}.");
            }

            if (!string.Equals(sha, batch.Sha256, StringComparison.OrdinalIgnoreCase))
            {
                report.Problems.Add($"batch {batch.Id}: {batch.File} has SHA-256 {sha}, but {batch.Sha256} was recorded when it was written: the file was changed or damaged.");
                continue;
            }

            List<ArchiveRow> rows;
            try
            {
                rows = ArchiveCsv.Read(batch.File, batch.Kind, batch.Keys).ToList();
            }
            catch (InvalidDataException e)
            {
                report.Problems.Add($"batch {batch.Id}: {e.Message}");
                continue;
            }

            report.RowsChecked += rows.Count;
            if (rows.Count != batch.Rows || rows.Count != manifest.Rows)
            {
                report.Problems.Add($"batch {batch.Id}: the file holds {rows.Count} rows, the manifest says {manifest.Rows}, the journal {batch.Rows}.");
            }

            var (inArchive, inHot) = await _engine.CheckAsync(batch.Kind, batch.Keys, rows, cancellationToken);
            if (inArchive != rows.Count)
            {
                report.Problems.Add($"batch {batch.Id}: {rows.Count - inArchive} of its {rows.Count} rows are missing from {ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive)} or differ there.");
            }

            if (inHot != 0)
            {
                report.Problems.Add($"batch {batch.Id}: {inHot} of its rows are still (or again) in {ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot)}.");
            }
        }

        foreach (var kind in kinds)
        {
            long both = await _engine.InBothTiersAsync(kind, _keys, cancellationToken);
            if (both != 0)
            {
                report.Problems.Add($"{both} {ReadingKinds.Name(kind)} rows are in both {ReadingTables.TableName(kind, _keys, StorageTier.Hot)} and {ReadingTables.TableName(kind, _keys, StorageTier.Archive)}.");
            }
        }

        return report;
    }

    /// <summary>
    /// Reinserts export files (a manifest, an export file, or a folder searched for manifests, its links not followed)
    /// into <c>hot</c>, <c>archive</c> (each kind's table of that tier for the file's key strategy) or a table name.
    /// Whatever of Saito's schema is missing is created first, as the server does on start, so a lost archive file
    /// can be restored into a fresh one. Rows whose key is already there are skipped, so a restore can be repeated.
    /// Each manifest stands alone: one that is missing, unreadable, names a file outside its own folder
    /// (<see cref="ExportFiles.DataPathOf"/>), whose file's SHA-256 differs, or whose file is larger than its row count
    /// allows (<see cref="ArchiveRestore.MaxBytesOf"/>) is a problem in the summary, nothing is read from its file, and
    /// the others are still restored. Files are read line by line and inserted <see cref="ArchiveRestore.ChunkRows"/>
    /// rows at a time; a line that is malformed or that ingestion would not have stored (<see cref="ArchiveRestore.Check"/>)
    /// is skipped, named (file:line and why) and written to the rejects file, and the good lines are restored.
    /// (A database error stops the run, after the chunks before it.)
    /// </summary>
    public async Task<ArchiveRestoreSummary> RestoreAsync(ArchiveRestoreRequest request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        string into = request.Into;
        ArgumentException.ThrowIfNullOrEmpty(into);
        if (into is not ("hot" or "archive") && !StorageOptionsValidator.IsPlainIdentifier(into))
        {
            throw new ArgumentException($"--into must be hot, archive or a table name (letters, digits, underscore), was '{into}'.", nameof(request));
        }

        var summary = new ArchiveRestoreSummary();
        var manifests = ArchiveRestore.FindManifests(request.Sources, summary.SkippedLinks, cancellationToken);
        foreach (string link in summary.SkippedLinks)
        {
            ArchiveLog.RestoreLinkSkipped(_logger, link);
        }

        // The server's own schema step: a fresh (lost) tier gets its tables, on every database, before rows go in.
        IReadOnlySet<int>? devices;
        await using (var store = ReadingStores.Create(_storage, _loggerFactory))
        {
            var schema = await store.EnsureSchemaAsync(cancellationToken);
            summary.SchemaCreated.AddRange(schema.Created);
            if (schema.CreatedAnything)
            {
                ArchiveLog.RestoreSchemaCreated(_logger, string.Join(", ", schema.Created));
            }

            devices = request.AllowUnknownDevices ? null : (await store.LoadDevicesAsync(cancellationToken)).Values.ToHashSet();
        }

        string rejectsPath = request.RejectsFile ?? Path.Combine(_storage.ArchivePath, "restore-rejects",
            string.Create(CultureInfo.InvariantCulture, $"restore-{DateTime.UtcNow:yyyyMMdd'T'HHmmss'Z'}-{Random.Shared.Next(0x10000):x4}.tsv"));
        using var rejects = new RestoreRejects(rejectsPath);
        try
        {
            foreach (string manifestPath in manifests)
            {
                cancellationToken.ThrowIfCancellationRequested();
                await RestoreFileAsync(manifestPath, request, devices, rejects, summary, cancellationToken);
            }
        }
        finally
        {
            summary.RowsRejected = rejects.Count;
            summary.RejectsFile = rejects.Count > 0 ? rejects.Path : null;
            if (rejects.Count > ArchiveRestore.ReportedLines)
            {
                summary.Problems.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{rejects.Count - ArchiveRestore.ReportedLines:N0} more line(s) were rejected; every rejected line is in {rejects.Path}"));
            }
        }

        return summary;
    }

    private async Task RestoreFileAsync(string manifestPath, ArchiveRestoreRequest request, IReadOnlySet<int>? devices, RestoreRejects rejects,
        ArchiveRestoreSummary summary, CancellationToken cancellationToken)
    {
        if (!File.Exists(manifestPath))
        {
            summary.Problems.Add($"{manifestPath} is missing.");
            return;
        }

        ExportManifest manifest;
        ReadingKind kind;
        KeyStrategy keys;
        try
        {
            manifest = ExportFiles.ReadManifest(manifestPath);
            kind = manifest.ReadingKind();
            keys = manifest.Keys();
        }
        catch (Exception ex) when (ex is JsonException or InvalidDataException)
        {
            Skip(summary, manifestPath, $"not a readable manifest: {ex.Message}");
            return;
        }

        if (ExportFiles.DataPathOf(manifestPath, manifest, out string? refusal) is not { } data)
        {
            Skip(summary, manifestPath, refusal!);
            return;
        }

        string sha = File.Exists(data) ? ExportFiles.Sha256Of(data) : "(missing)";
        if (!string.Equals(sha, manifest.Sha256, StringComparison.OrdinalIgnoreCase))
        {
            summary.Problems.Add($"{data}: SHA-256 {sha}, the manifest says {manifest.Sha256}; not restored.");
            return;
        }

        long maxBytes = ArchiveRestore.MaxBytesOf(manifest, kind, keys, request.MaxFileBytes);
        if (ArchiveRestore.CheckSize(data, maxBytes, cancellationToken) is { } tooLarge)
        {
            Skip(summary, manifestPath, $"its file {data}: {tooLarge}; nothing was read from it");
            return;
        }

        _pauses.Reach(ArchivePausePoints.RestoreFile, data);
        cancellationToken.ThrowIfCancellationRequested();
        string table = request.Into switch
        {
            "hot" => ReadingTables.TableName(kind, keys, StorageTier.Hot),
            "archive" => ReadingTables.TableName(kind, keys, StorageTier.Archive),
            _ => request.Into,
        };
        long read = 0;
        long inserted = 0;
        try
        {
            await using var file = new FileStream(data, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0);
            await using Stream stream = ArchiveCsv.IsGzip(data) ? new GZipStream(file, CompressionMode.Decompress) : file;
            var lines = new ExportLineReader(stream, ArchiveCsv.MaxRowBytes, maxBytes);
            string header = ArchiveCsv.Header(kind, keys);
            if (!lines.Next(out string? first, out _) || !string.Equals(first, header, StringComparison.Ordinal))
            {
                Skip(summary, manifestPath, $"its file {data} does not start with the header '{header}' of a {ReadingKinds.Name(kind)} export ({manifest.KeyStrategy} keys)");
                return;
            }

            int valueCount = ReadingTables.ValueColumns(kind).Count;
            int expectedFields = ReadingTables.Columns(kind, keys).Count;
            var values = new double?[4];
            var chunk = new List<ArchiveRow>(ArchiveRestore.ChunkRows);
            var now = DateTime.UtcNow;
            while (lines.Next(out string? text, out string? error))
            {
                if ((lines.LineNumber & 4095) == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                if (text is null
                    || !ArchiveCsv.TryParseRow(text, kind, keys, valueCount, expectedFields, values, out var row, out error)
                    || (error = ArchiveRestore.Check(row, devices, request.MaxFutureSkew, request.MaxAge, now)) is not null)
                {
                    Reject(summary, rejects, data, lines.LineNumber, error!, text);
                    continue;
                }

                chunk.Add(row);
                if (chunk.Count == ArchiveRestore.ChunkRows)
                {
                    inserted += await _engine.InsertAsync(table, kind, keys, chunk, cancellationToken);
                    read += chunk.Count;
                    chunk.Clear();
                }
            }

            if (chunk.Count > 0)
            {
                inserted += await _engine.InsertAsync(table, kind, keys, chunk, cancellationToken);
                read += chunk.Count;
            }
        }
        catch (Exception ex) when (ex is RestoreLimitException or InvalidDataException)
        {
            Skip(summary, manifestPath, $"its file {data}: {ex.Message} ({read:N0} rows before it were restored)");
        }
        finally
        {
            summary.RowsRead += read;
            summary.RowsInserted += inserted;
        }

        summary.Files++;
        if (_logger.IsEnabled(LogLevel.Information))
        {
            ArchiveLog.Restored(_logger, inserted, read, data, table);
        }
    }

    /// <summary>A line restore skips: into the rejects file, and named in the summary (the first <see cref="ArchiveRestore.ReportedLines"/>) and the log.</summary>
    private void Reject(ArchiveRestoreSummary summary, RestoreRejects rejects, string file, long line, string reason, string? text)
    {
        rejects.Add(file, line, reason, text);
        if (rejects.Count <= ArchiveRestore.ReportedLines)
        {
            // The file name and the parser's words may carry a crafted file's bytes: control characters are shown, not sent.
            string printable = ArchiveRestore.Printable(reason, 400);
            string name = ArchiveRestore.Printable(file, 400);
            summary.Problems.Add(string.Create(CultureInfo.InvariantCulture, $"{name}:{line}: {printable}; line skipped (kept in {rejects.Path})"));
            ArchiveLog.RestoreLineRejected(_logger, name, line, printable);
        }
    }

    /// <summary>A manifest restore does not follow: a problem in the summary (the run goes on with the others) and a warning.</summary>
    private void Skip(ArchiveRestoreSummary summary, string manifestPath, string problem)
    {
        summary.Problems.Add($"{manifestPath}: {problem}; not restored.");
        ArchiveLog.RestoreSkipped(_logger, manifestPath, problem);
    }

    public ValueTask DisposeAsync() => _engine.DisposeAsync();
}

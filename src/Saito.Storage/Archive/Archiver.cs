using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Archive;

// CA1873: the log arguments below are computed a few times per batch of tens of thousands of rows, never per row.
#pragma warning disable CA1873

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
public sealed partial class Archiver : IAsyncDisposable
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


    public ValueTask DisposeAsync() => _engine.DisposeAsync();
}

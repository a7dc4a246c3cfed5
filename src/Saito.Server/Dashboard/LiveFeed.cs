using System.Buffers;
using System.Threading.Channels;
using Microsoft.Extensions.Options;
using Saito.Ingestion.Pipeline;
using Saito.Readings;

namespace Saito.Server.Dashboard;

/// <summary>A copy of one committed batch's readings, in a pooled array (returned by <see cref="Release"/>).</summary>
public readonly struct CommittedChunk(Reading[] readings, int count, long committedAt)
{
    public ReadOnlySpan<Reading> Readings => readings.AsSpan(0, count);

    public int Count => count;

    /// <summary><see cref="System.Diagnostics.Stopwatch"/> timestamp of the commit.</summary>
    public long CommittedAt => committedAt;

    public void Release() => ArrayPool<Reading>.Shared.Return(readings);
}

/// <summary>
/// The writers' side of the live view: each committed batch is copied into a pooled array and queued for
/// <see cref="LiveClassroom"/>, so the writer's thread returns at once. The queue is bounded by
/// <see cref="DashboardOptions.MaxBacklogReadings"/>: a batch that would take it past the bound while others wait is
/// skipped and counted, never waited for, because the live view must not slow ingestion. A batch that arrives when
/// nothing waits is taken whatever its size.
/// </summary>
public sealed class LiveFeed : ICommittedReadingsObserver
{
    private readonly Channel<CommittedChunk> _chunks = Channel.CreateUnbounded<CommittedChunk>(new UnboundedChannelOptions { SingleReader = true });
    private readonly long _maxBacklog;
    private long _backlog;
    private long _skipped;

    public LiveFeed(IOptions<DashboardOptions> options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _maxBacklog = options.Value.MaxBacklogReadings;
    }

    public ChannelReader<CommittedChunk> Reader => _chunks.Reader;

    /// <summary>Readings skipped because the live view was <see cref="DashboardOptions.MaxBacklogReadings"/> behind.</summary>
    public long Skipped => Interlocked.Read(ref _skipped);

    public long Backlog => Interlocked.Read(ref _backlog);

    public void OnCommitted(ReadingBatch batch)
    {
        ArgumentNullException.ThrowIfNull(batch);
        int count = batch.ReadingCount;
        // Past the bound only if something else waits: a single batch larger than the bound (a batch closes after the
        // message that reaches Storage:BatchSize, so it may exceed it by a whole message) is taken when the live view
        // is idle, else it could never be shown. The backlog thus stays within the larger of the bound and one batch.
        long backlog = Interlocked.Add(ref _backlog, count);
        if (backlog > _maxBacklog && backlog > count)
        {
            Interlocked.Add(ref _backlog, -count);
            Interlocked.Add(ref _skipped, count);
            return;
        }

        var copy = ArrayPool<Reading>.Shared.Rent(count);
        int n = 0;
        foreach (var kind in ReadingKinds.All)
        {
            var list = batch.Of(kind);
            for (int i = 0; i < list.Count; i++)
            {
                copy[n++] = list[i];
            }
        }

        if (!_chunks.Writer.TryWrite(new CommittedChunk(copy, n, System.Diagnostics.Stopwatch.GetTimestamp())))
        {
            Interlocked.Add(ref _backlog, -count);
            ArrayPool<Reading>.Shared.Return(copy);
        }
    }

    /// <summary>The live view is done with a chunk.</summary>
    public void Consumed(CommittedChunk chunk)
    {
        Interlocked.Add(ref _backlog, -chunk.Count);
        chunk.Release();
    }

    public void Complete() => _chunks.Writer.TryComplete();
}

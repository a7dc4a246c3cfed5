using Saito.Readings;

namespace Saito.Live.Analytics;

/// <summary>
/// One seat pressure mat (docs/sway-and-mats.md): each cell is a channel, a frame is all cells sharing a timestamp.
/// A frame completes when a reading with a newer timestamp arrives, or on <see cref="Flush"/>. No clock of its own,
/// single-threaded, and after warm-up <see cref="Add"/> allocates nothing.
/// </summary>
public sealed class MatTracker
{
    private readonly int columns;
    private readonly double cellMetres;
    private readonly double occupiedKpa;
    private readonly long windowTicks;
    private readonly long maxCellAgeTicks;
    private readonly long gapTicks;
    private readonly double[] cellKpa;
    private readonly long[] cellTicks;
    private readonly TimedRing<CopFrame> frames;

    private bool pending;
    private long pendingTicks;
    private bool hasFrame;
    private long frameTicks;
    private double totalKpa;
    private bool occupied;
    private long stateSinceTicks;

    public MatTracker(MatOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        OptionChecks.ThrowIfInvalid(options.Validate(), nameof(options));
        columns = options.Columns;
        cellMetres = options.CellMetres;
        occupiedKpa = options.OccupiedKpa;
        windowTicks = OptionChecks.Ticks(options.WindowSeconds);
        maxCellAgeTicks = OptionChecks.Ticks(options.MaxCellAgeSeconds);
        gapTicks = OptionChecks.Ticks(options.MaxGapSeconds);
        cellKpa = new double[options.Cells];
        cellTicks = new long[options.Cells];
        Array.Fill(cellTicks, long.MinValue);
        frames = new TimedRing<CopFrame>(options.MaxFramesPerWindow);
    }

    /// <summary>Readings passed over: a channel outside the mat, a value not finite, or a time before the frame being gathered (or not after the last complete one).</summary>
    public long Ignored { get; private set; }

    /// <summary>
    /// One cell reading: the reading's time (UTC; truncated to the microsecond as stored), the channel (cell) and
    /// kPa (a negative value counts as 0). A repeated channel in the same frame replaces the earlier value.
    /// </summary>
    public void Add(DateTime timestampUtc, int channel, double kpa)
    {
        var ticks = ReadingTime.Truncate(timestampUtc).Ticks;
        if (channel < 0 || channel >= cellKpa.Length || !double.IsFinite(kpa)
            || (pending && ticks < pendingTicks) || (!pending && hasFrame && ticks <= frameTicks))
        {
            Ignored++;
            return;
        }

        if (pending && ticks > pendingTicks)
        {
            Complete();
        }

        pending = true;
        pendingTicks = ticks;
        cellKpa[channel] = Math.Max(0, kpa);
        cellTicks[channel] = ticks;
    }

    /// <summary>Completes the frame being gathered, if any (when no newer reading is coming soon, e.g. the batch ended).</summary>
    public void Flush()
    {
        if (pending)
        {
            Complete();
        }
    }

    /// <summary>The figures as of the latest complete frame; null before the first.</summary>
    public MatSnapshot? Current
    {
        get
        {
            if (!hasFrame)
            {
                return null;
            }

            double path = 0;
            long pathTicks = 0;
            var changes = 0;
            for (var i = 1; i < frames.Count; i++)
            {
                var previous = frames[i - 1];
                var frame = frames[i];
                var dt = frames.TicksAt(i) - frames.TicksAt(i - 1);
                if (previous.Occupied != frame.Occupied)
                {
                    changes++;
                }
                else if (frame.Occupied && dt <= gapTicks)
                {
                    path += Math.Sqrt(Square(frame.X - previous.X) + Square(frame.Y - previous.Y));
                    pathTicks += dt;
                }
            }

            var latest = frames[frames.Count - 1];
            double? restlessness = pathTicks > 0 ? path * TimeSpan.TicksPerSecond / pathTicks : null;
            var since = new DateTime(stateSinceTicks, DateTimeKind.Utc);
            return new MatSnapshot(new DateTime(frameTicks, DateTimeKind.Utc), occupied, totalKpa,
                occupied ? latest.X : null, occupied ? latest.Y : null, restlessness, changes, frames.Count,
                occupied ? since : null, occupied ? null : since);
        }
    }

    private static double Square(double value) => value * value;

    private void Complete()
    {
        pending = false;
        var oldest = pendingTicks - maxCellAgeTicks;
        double total = 0, momentX = 0, momentY = 0;
        for (var c = 0; c < cellKpa.Length; c++)
        {
            if (cellTicks[c] < oldest)
            {
                continue;
            }

            var p = cellKpa[c];
            total += p;
            momentX += p * ((c % columns) + 0.5) * cellMetres;
            momentY += p * ((c / columns) + 0.5) * cellMetres;
        }

        var isOccupied = total >= occupiedKpa;
        if (!hasFrame || isOccupied != occupied)
        {
            stateSinceTicks = pendingTicks;
        }

        hasFrame = true;
        frameTicks = pendingTicks;
        totalKpa = total;
        occupied = isOccupied;
        frames.Add(frameTicks, isOccupied ? new CopFrame(true, momentX / total, momentY / total) : default);
        frames.DropThrough(frameTicks - windowTicks);
    }

    private readonly record struct CopFrame(bool Occupied, double X, double Y);
}

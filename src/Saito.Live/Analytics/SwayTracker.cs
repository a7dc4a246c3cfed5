using System.Runtime.InteropServices;
using Saito.Readings;

namespace Saito.Live.Analytics;

/// <summary>
/// One student's head sway from the head location tag (docs/sway-and-mats.md). Feed it every head sample in time
/// order with the posture at that time; read <see cref="Current"/>. No clock of its own, single-threaded, and after
/// warm-up <see cref="Add"/> allocates nothing.
/// </summary>
public sealed class SwayTracker
{
    private readonly long settlingTicks;
    private readonly long windowTicks;
    private readonly long gapTicks;
    private readonly long heightChangeTicks;
    private readonly double heightChangeMetres;
    private readonly int maxSamples;
    private readonly List<double> settleX = [];
    private readonly List<double> settleY = [];
    private readonly List<double> settleZ = [];
    private readonly TimedRing<HeadPosition> window;

    private bool hasSample;
    private long lastTicks;
    private Posture phasePosture;
    private long phaseStartTicks;
    private bool settling;
    private HeadPosition ideal;
    private double referenceZ;
    private int departureSign;
    private long departureStartTicks;

    public SwayTracker(SwayOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        OptionChecks.ThrowIfInvalid(options.Validate(), nameof(options));
        settlingTicks = OptionChecks.Ticks(options.SettlingSeconds);
        windowTicks = OptionChecks.Ticks(options.WindowSeconds);
        gapTicks = OptionChecks.Ticks(options.MaxGapSeconds);
        heightChangeTicks = OptionChecks.Ticks(options.HeightChangeSeconds);
        heightChangeMetres = options.HeightChangeMetres;
        maxSamples = options.MaxSamplesPerWindow;
        window = new TimedRing<HeadPosition>(maxSamples);
    }

    /// <summary>Samples passed over: not newer than the last one taken (late or repeated), or not finite.</summary>
    public long Ignored { get; private set; }

    /// <summary>Phases begun so far (the first sample begins the first).</summary>
    public int PhaseCount { get; private set; }

    /// <summary>
    /// One head sample: the reading's time (UTC; truncated to the microsecond as stored) and position in metres, with
    /// the posture at that time (<see cref="Posture.Unknown"/> when there is no mat or it cannot tell).
    /// </summary>
    public void Add(DateTime timestampUtc, double x, double y, double z, Posture posture)
    {
        var ticks = ReadingTime.Truncate(timestampUtc).Ticks;
        if (!double.IsFinite(x) || !double.IsFinite(y) || !double.IsFinite(z) || (hasSample && ticks <= lastTicks))
        {
            Ignored++;
            return;
        }

        var gap = hasSample && ticks - lastTicks > gapTicks;
        var first = !hasSample;
        hasSample = true;
        lastTicks = ticks;
        if (first || (posture != Posture.Unknown && posture != phasePosture))
        {
            StartPhase(ticks, posture, z);
        }
        else if (gap && settling)
        {
            StartPhase(ticks, phasePosture, z);
        }
        else
        {
            if (gap)
            {
                window.Clear();
                departureSign = 0;
            }

            if (posture == Posture.Unknown && HeightChangeHeld(ticks, z))
            {
                StartPhase(ticks, Posture.Unknown, z);
            }
            else if (posture != Posture.Unknown)
            {
                departureSign = 0;
            }
        }

        Record(ticks, new HeadPosition(x, y, z));
    }

    /// <summary>The figures as of the latest sample; null before the first.</summary>
    public SwaySnapshot? Current
    {
        get
        {
            if (!hasSample)
            {
                return null;
            }

            var last = Utc(lastTicks);
            if (settling || window.Count == 0)
            {
                return new SwaySnapshot(phasePosture, Utc(phaseStartTicks), settling, settling ? null : ideal, 0, null, last,
                    default, default);
            }

            var horizontal = new FigureSums();
            var threeD = new FigureSums();
            var previous = window[0];
            for (var i = 0; i < window.Count; i++)
            {
                var p = window[i];
                double dx = p.X - ideal.X, dy = p.Y - ideal.Y, dz = p.Z - ideal.Z;
                horizontal.AddDistance((dx * dx) + (dy * dy));
                threeD.AddDistance((dx * dx) + (dy * dy) + (dz * dz));
                double sx = p.X - previous.X, sy = p.Y - previous.Y, sz = p.Z - previous.Z;
                horizontal.Path += Math.Sqrt((sx * sx) + (sy * sy));
                threeD.Path += Math.Sqrt((sx * sx) + (sy * sy) + (sz * sz));
                previous = p;
            }

            var seconds = (double)(window.TicksAt(window.Count - 1) - window.TicksAt(0)) / TimeSpan.TicksPerSecond;
            return new SwaySnapshot(phasePosture, Utc(phaseStartTicks), false, ideal, window.Count, Utc(window.TicksAt(0)), last,
                horizontal.Figures(window.Count, seconds), threeD.Figures(window.Count, seconds));
        }
    }

    private static DateTime Utc(long ticks) => new(ticks, DateTimeKind.Utc);

    private void StartPhase(long ticks, Posture posture, double z)
    {
        PhaseCount++;
        phasePosture = posture;
        phaseStartTicks = ticks;
        settling = true;
        referenceZ = z;
        departureSign = 0;
        settleX.Clear();
        settleY.Clear();
        settleZ.Clear();
        window.Clear();
    }

    /// <summary>True once the head has stayed at least the height change above (or below) the reference for long enough.</summary>
    private bool HeightChangeHeld(long ticks, double z)
    {
        var delta = z - referenceZ;
        var sign = Math.Abs(delta) >= heightChangeMetres ? Math.Sign(delta) : 0;
        if (sign != departureSign)
        {
            departureSign = sign;
            departureStartTicks = ticks;
        }

        return sign != 0 && ticks - departureStartTicks >= heightChangeTicks;
    }

    private void Record(long ticks, HeadPosition p)
    {
        if (settling)
        {
            if (ticks - phaseStartTicks < settlingTicks)
            {
                if (settleX.Count < maxSamples)
                {
                    settleX.Add(p.X);
                    settleY.Add(p.Y);
                    settleZ.Add(p.Z);
                }

                return;
            }

            ideal = new HeadPosition(Median(settleX), Median(settleY), Median(settleZ));
            settling = false;
            referenceZ = ideal.Z;
            departureSign = 0;
        }

        window.Add(ticks, p);
        window.DropThrough(ticks - windowTicks);
    }

    /// <summary>The median (the mean of the middle two for an even count); sorts the list in place.</summary>
    private static double Median(List<double> values)
    {
        var span = CollectionsMarshal.AsSpan(values);
        span.Sort();
        var middle = span.Length / 2;
        return span.Length % 2 == 1 ? span[middle] : (span[middle - 1] + span[middle]) / 2;
    }

    private struct FigureSums
    {
        private double sum;
        private double sumOfSquares;
        private double max;

        public double Path { get; set; }

        public void AddDistance(double squared)
        {
            var d = Math.Sqrt(squared);
            sum += d;
            sumOfSquares += squared;
            max = Math.Max(max, d);
        }

        public readonly SwayFigures Figures(int count, double seconds) =>
            new(sum / count, Math.Sqrt(sumOfSquares / count), max, seconds > 0 ? Path / seconds : 0);
    }
}

using Saito.Live.Analytics;
using static Saito.Live.Tests.Analytics.SwayTrace;

namespace Saito.Live.Tests.Analytics;

/// <summary>The worked examples of docs/sway-and-mats.md, number for number, and the no-allocation promise of Add.</summary>
public sealed class WorkedExampleTests
{
    private const double Tolerance = 1e-9;

    [Fact]
    public void The_worked_sway_example_in_the_docs_reads_as_written()
    {
        var tracker = new SwayTracker(new SwayOptions { WindowSeconds = 1 });
        Feed(tracker, 0, 20, 4, t => t is 4 or 9.5 or 15.25 ? new HeadPosition(2.5, 2.6, 1.5) : Seat);
        Feed(tracker, 20, 30, 4, Still);
        tracker.Add(At(30), 2.03, 3.00, 1.2, Posture.Sitting);
        tracker.Add(At(30.25), 2.03, 3.04, 1.2, Posture.Sitting);
        tracker.Add(At(30.5), 2.00, 3.04, 1.2, Posture.Sitting);
        tracker.Add(At(30.75), 2.00, 3.00, 1.2, Posture.Sitting);

        var snapshot = tracker.Current!;
        snapshot.Ideal.ShouldBe(new HeadPosition(2.0, 3.0, 1.2));
        snapshot.SampleCount.ShouldBe(4);
        snapshot.Horizontal.MeanDistanceMetres.ShouldBe(0.03, Tolerance);
        snapshot.Horizontal.RmsDistanceMetres.ShouldBe(Math.Sqrt(0.00125), Tolerance);
        snapshot.Horizontal.MaxDistanceMetres.ShouldBe(0.05, Tolerance);
        snapshot.Horizontal.MeanSpeedMetresPerSecond.ShouldBe(0.11 / 0.75, Tolerance);
    }

    [Fact]
    public void The_worked_mat_example_in_the_docs_reads_as_written()
    {
        var tracker = new MatTracker(new MatOptions());
        Cells(tracker, 0, (5, 6), (6, 2), (9, 2));
        Cells(tracker, 0.5, (5, 3), (6, 2), (9, 5));
        var first = tracker.Current!;
        first.Occupied.ShouldBeTrue();
        first.TotalKpa.ShouldBe(10, Tolerance);
        first.CopX!.Value.ShouldBe(0.17, Tolerance);
        first.CopY!.Value.ShouldBe(0.17, Tolerance);
        first.OccupiedSince.ShouldBe(At(0));

        Cells(tracker, 1, (5, 0.5));
        var second = tracker.Current!;
        second.CopX!.Value.ShouldBe(0.17, Tolerance);
        second.CopY!.Value.ShouldBe(0.20, Tolerance);
        second.RestlessnessMps!.Value.ShouldBe(0.06, Tolerance);

        tracker.Flush();
        var third = tracker.Current!;
        third.Occupied.ShouldBeFalse();
        third.CopX.ShouldBeNull();
        third.VacantSince.ShouldBe(At(1));
        third.OccupancyChanges.ShouldBe(1);
        third.RestlessnessMps!.Value.ShouldBe(0.06, Tolerance);
    }

    [Fact]
    public void Adding_allocates_nothing_once_the_buffers_have_grown()
    {
        var sway = new SwayTracker(new SwayOptions());
        var mat = new MatTracker(new MatOptions());
        Run(sway, mat, 0, 2000);

        var before = GC.GetAllocatedBytesForCurrentThread();
        Run(sway, mat, 2000, 4000);
        var allocated = GC.GetAllocatedBytesForCurrentThread() - before;

        allocated.ShouldBe(0);
        sway.Current!.SampleCount.ShouldBe(40);
        mat.Current!.FramesInWindow.ShouldBe(40);
    }

    private static void Run(SwayTracker sway, MatTracker mat, int from, int to)
    {
        for (var i = from; i < to; i++)
        {
            var t = At(i * 0.25);
            sway.Add(t, 2 + (0.01 * Math.Sin(i)), 3, 1.2, Posture.Sitting);
            for (var channel = 0; channel < 16; channel++)
            {
                mat.Add(t, channel, channel == i % 16 ? 10 : 1);
            }
        }
    }

    /// <summary>One whole frame of the default 4 x 4 mat: the cells given, the rest 0.</summary>
    private static void Cells(MatTracker tracker, double seconds, params (int Channel, double Kpa)[] cells)
    {
        for (var channel = 0; channel < 16; channel++)
        {
            tracker.Add(At(seconds), channel, cells.FirstOrDefault(c => c.Channel == channel).Kpa);
        }
    }
}

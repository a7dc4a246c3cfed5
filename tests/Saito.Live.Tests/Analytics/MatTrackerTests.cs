using FsCheck;
using FsCheck.Fluent;
using Saito.Live.Analytics;

namespace Saito.Live.Tests.Analytics;

public sealed class MatTrackerTests
{
    private const double Tolerance = 1e-9;

    private static MatTracker Tracker(Action<MatOptions>? configure = null) => new(Configured.Options(configure));

    /// <summary>Whole frames 0 to count - 1, one every <paramref name="interval"/> seconds from 0, then a flush.</summary>
    private static void Frames(MatTracker tracker, int count, double interval, Func<int, double[]> cells)
    {
        for (var i = 0; i < count; i++)
        {
            Frame(tracker, i * interval, cells(i));
        }

        tracker.Flush();
    }

    /// <summary>One whole frame: every cell of the default 4 x 4 mat, from a 16-value array (row by row).</summary>
    private static void Frame(MatTracker tracker, double seconds, params double[] kpa)
    {
        for (var channel = 0; channel < kpa.Length; channel++)
        {
            tracker.Add(SwayTrace.At(seconds), channel, kpa[channel]);
        }
    }

    private static double[] OneCell(int channel, double kpa)
    {
        var cells = new double[16];
        cells[channel] = kpa;
        return cells;
    }

    private static double[] Even(double kpa) => Enumerable.Repeat(kpa, 16).ToArray();

    [Fact]
    public void A_frame_is_not_complete_until_a_newer_reading_or_a_flush()
    {
        var tracker = Tracker();
        Frame(tracker, 0, Even(1));
        tracker.Current.ShouldBeNull();

        tracker.Flush();
        tracker.Current!.FrameUtc.ShouldBe(SwayTrace.At(0));
        tracker.Current!.TotalKpa.ShouldBe(16, Tolerance);
    }

    [Fact]
    public void A_newer_reading_completes_the_frame_before_it()
    {
        var tracker = Tracker();
        Frame(tracker, 0, OneCell(5, 3));
        tracker.Add(SwayTrace.At(0.1), 0, 9);

        tracker.Current!.FrameUtc.ShouldBe(SwayTrace.At(0));
        tracker.Current!.TotalKpa.ShouldBe(3, Tolerance);
    }

    /// <summary>The snapshot of one whole frame at 0 s, flushed.</summary>
    private static MatSnapshot OneFrame(double[] kpa, Action<MatOptions>? configure = null)
    {
        var tracker = Tracker(configure);
        Frame(tracker, 0, kpa);
        tracker.Flush();
        return tracker.Current!;
    }

    [Theory]
    [InlineData(0, 0.05, 0.05)]
    [InlineData(6, 0.25, 0.15)]
    [InlineData(15, 0.35, 0.35)]
    [InlineData(12, 0.05, 0.35)]
    public void All_the_weight_on_one_cell_puts_the_centre_of_pressure_at_that_cells_centre(int channel, double x, double y)
    {
        var snapshot = OneFrame(OneCell(channel, 8));

        snapshot.Occupied.ShouldBeTrue();
        snapshot.CopX!.Value.ShouldBe(x, Tolerance);
        snapshot.CopY!.Value.ShouldBe(y, Tolerance);
    }

    [Fact]
    public void Cell_position_follows_columns_and_cell_metres()
    {
        // Channel 5 of a 3 x 3 mat at 0.05 m: column 2, row 1.
        var snapshot = OneFrame([0, 0, 0, 0, 0, 4, 0, 0, 0], o =>
        {
            o.Columns = 3;
            o.Cells = 9;
            o.CellMetres = 0.05;
        });

        snapshot.CopX!.Value.ShouldBe(0.125, Tolerance);
        snapshot.CopY!.Value.ShouldBe(0.075, Tolerance);
    }

    [Theory]
    [InlineData(0.2, 0.2, new double[] { 1, 2, 2, 1, 3, 5, 5, 3, 3, 5, 5, 3, 1, 2, 2, 1 })] // symmetric: the centre
    [InlineData(0.275, 0.05, new double[] { 1, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 })] // (1 x 0.05 + 3 x 0.35) / 4
    [InlineData(0.15, 0.25, new double[] { 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0 })] // between (0.15, 0.15) and (0.15, 0.35)
    public void The_centre_of_pressure_is_the_pressure_weighted_mean_of_cell_centres(double x, double y, double[] kpa)
    {
        var snapshot = OneFrame(kpa);

        snapshot.CopX!.Value.ShouldBe(x, Tolerance);
        snapshot.CopY!.Value.ShouldBe(y, Tolerance);
    }

    [Theory]
    [InlineData(1.99, false)]
    [InlineData(2.0, true)]
    [InlineData(2.01, true)]
    public void The_seat_is_occupied_at_or_above_occupied_kpa_in_total(double total, bool occupied)
    {
        var snapshot = OneFrame(Even(total / 16));

        snapshot.Occupied.ShouldBe(occupied);
        snapshot.TotalKpa.ShouldBe(total, Tolerance);
        (snapshot.CopX is not null).ShouldBe(occupied);
        (snapshot.CopY is not null).ShouldBe(occupied);
    }

    [Fact]
    public void Occupied_since_and_vacant_since_give_when_the_current_state_began()
    {
        var tracker = Tracker();
        Frames(tracker, 50, 0.1, i => Even(i < 20 ? 1 : i < 35 ? 0 : 2));
        var seated = tracker.Current!;
        seated.Occupied.ShouldBeTrue();
        seated.OccupiedSince.ShouldBe(SwayTrace.At(3.5));
        seated.VacantSince.ShouldBeNull();
        seated.OccupancyChanges.ShouldBe(2);

        Frame(tracker, 5, Even(0));
        Frame(tracker, 5.1, Even(0));
        tracker.Flush();
        var away = tracker.Current!;
        away.Occupied.ShouldBeFalse();
        away.VacantSince.ShouldBe(SwayTrace.At(5));
        away.OccupiedSince.ShouldBeNull();
        away.RestlessnessMps.ShouldBe(0);
    }

    [Fact]
    public void The_first_frame_starts_the_first_state()
    {
        var tracker = Tracker();
        Frame(tracker, 7, Even(0));
        tracker.Flush();

        tracker.Current!.VacantSince.ShouldBe(SwayTrace.At(7));
        tracker.Current!.RestlessnessMps.ShouldBeNull();
        tracker.Current!.OccupancyChanges.ShouldBe(0);
    }

    [Theory]
    [InlineData(0.03, 10)]
    [InlineData(0.01, 4)]
    [InlineData(0.002, 25)]
    public void A_centre_of_pressure_moving_in_a_straight_line_at_v_reads_restlessness_v(double speed, double hertz)
    {
        // Load slides from cell 0 (x = 0.05) to cell 3 (x = 0.35): x = 0.05 + 0.3 f, with f = speed t / 0.3.
        var tracker = Tracker();
        var frames = (int)(0.3 / speed * hertz);
        for (var i = 0; i <= frames; i++)
        {
            var t = i / hertz;
            var f = speed * t / 0.3;
            var cells = new double[16];
            cells[0] = 10 * (1 - f);
            cells[3] = 10 * f;
            Frame(tracker, t, cells);
        }

        tracker.Flush();
        tracker.Current!.RestlessnessMps!.Value.ShouldBe(speed, speed * 1e-6);
        tracker.Current!.FramesInWindow.ShouldBe((int)Math.Round(10 * hertz));
    }

    [Fact]
    public void A_still_centre_of_pressure_is_not_restless()
    {
        var tracker = Tracker();
        Frames(tracker, 100, 0.1, _ => OneCell(9, 5));
        tracker.Current!.RestlessnessMps.ShouldBe(0);
    }

    [Fact]
    public void Restlessness_spans_only_the_last_window_seconds()
    {
        var tracker = Tracker();
        // Rocking between cells 0 and 1 (0.1 m) every frame for 10 s, then still for 10 s.
        Frames(tracker, 200, 0.1, i => OneCell(i < 100 && i % 2 == 1 ? 1 : 0, 5));
        tracker.Current!.RestlessnessMps.ShouldBe(0);
    }

    [Fact]
    public void A_vacant_stretch_or_a_gap_adds_no_path()
    {
        var tracker = Tracker();
        Frame(tracker, 0, OneCell(0, 5));
        Frame(tracker, 0.5, OneCell(0, 5));
        Frame(tracker, 1, Even(0));
        Frame(tracker, 1.5, OneCell(15, 5)); // across the vacant frame: no path
        Frame(tracker, 2, OneCell(15, 5));
        Frame(tracker, 8, OneCell(3, 5)); // after a 6 s gap: no path
        Frame(tracker, 8.5, OneCell(2, 5)); // 0.1 m in 0.5 s
        tracker.Flush();

        // Path 0.1 m over the pairs (0, 0.5), (1.5, 2) and (8, 8.5): 1.5 s.
        tracker.Current!.RestlessnessMps!.Value.ShouldBe(0.1 / 1.5, Tolerance);
        tracker.Current!.OccupancyChanges.ShouldBe(2);
    }

    [Fact]
    public void A_missing_cell_keeps_its_last_value_up_to_max_cell_age_then_counts_as_zero()
    {
        var tracker = Tracker();
        tracker.Add(SwayTrace.At(0), 0, 4);
        tracker.Add(SwayTrace.At(0), 3, 4);
        tracker.Add(SwayTrace.At(1), 3, 4); // cell 0 missing: kept (1 s old)
        tracker.Add(SwayTrace.At(2.5), 3, 4); // cell 0 missing, 2.5 s old: 0

        tracker.Current!.FrameUtc.ShouldBe(SwayTrace.At(1));
        tracker.Current!.TotalKpa.ShouldBe(8, Tolerance);
        tracker.Current!.CopX!.Value.ShouldBe(0.2, Tolerance);

        tracker.Flush();
        tracker.Current!.TotalKpa.ShouldBe(4, Tolerance);
        tracker.Current!.CopX!.Value.ShouldBe(0.35, Tolerance);
    }

    [Fact]
    public void With_max_cell_age_zero_a_missing_cell_counts_as_zero()
    {
        var tracker = Tracker(o => o.MaxCellAgeSeconds = 0);
        tracker.Add(SwayTrace.At(0), 0, 4);
        tracker.Add(SwayTrace.At(0.1), 3, 4);
        tracker.Flush();

        tracker.Current!.TotalKpa.ShouldBe(4, Tolerance);
    }

    [Fact]
    public void Late_foreign_and_non_finite_readings_are_ignored_and_negative_kpa_counts_as_zero()
    {
        var tracker = Tracker();
        tracker.Add(SwayTrace.At(1), 0, 4);
        tracker.Add(SwayTrace.At(0.5), 1, 4); // older than the frame being gathered
        tracker.Add(SwayTrace.At(1), 16, 4); // not a cell of a 16-cell mat
        tracker.Add(SwayTrace.At(1), -1, 4);
        tracker.Add(SwayTrace.At(1), 2, double.NaN);
        tracker.Add(SwayTrace.At(1), 3, -2);
        tracker.Flush();
        tracker.Add(SwayTrace.At(1), 5, 4); // the frame is complete

        tracker.Ignored.ShouldBe(5);
        tracker.Current!.TotalKpa.ShouldBe(4, Tolerance);
        tracker.Current!.CopX!.Value.ShouldBe(0.05, Tolerance);
    }

    [Fact]
    public void A_channel_repeated_in_a_frame_keeps_the_last_value()
    {
        var tracker = Tracker();
        tracker.Add(SwayTrace.At(0), 0, 4);
        tracker.Add(SwayTrace.At(0), 0, 6);
        tracker.Flush();

        tracker.Current!.TotalKpa.ShouldBe(6, Tolerance);
    }

    [Fact]
    public void The_window_keeps_at_most_max_frames_per_window()
    {
        var tracker = Tracker(o => o.MaxFramesPerWindow = 16);
        Frames(tracker, 100, 0.01, _ => OneCell(0, 5));
        tracker.Current!.FramesInWindow.ShouldBe(16);
    }

    [Fact]
    public void Invalid_options_are_refused_with_their_messages()
    {
        var thrown = Should.Throw<ArgumentException>(() => new MatTracker(new MatOptions { OccupiedKpa = 0, Columns = 0 }));
        thrown.Message.ShouldContain("Dashboard:Mat:OccupiedKpa must be between 0.01 and 10000 (was 0).");
        thrown.Message.ShouldContain("Dashboard:Mat:Columns must be between 1 and 256 (was 0).");
    }

    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(300).WithQuietOnSuccess(true);

    private static readonly Gen<int[]> Loads = Gen.ArrayOf(Gen.Choose(0, 50), 16);

    [Fact]
    public void For_any_load_the_centre_of_pressure_lies_on_the_mat_and_does_not_change_with_scale()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(Loads), load =>
        {
            var a = OneFrame(load.Select(p => (double)p).ToArray());
            var b = OneFrame(load.Select(p => 3.0 * p).ToArray());
            a.Occupied.ShouldBe(load.Sum() >= 2);
            if (a.Occupied)
            {
                a.CopX!.Value.ShouldBeInRange(0.05, 0.35);
                a.CopY!.Value.ShouldBeInRange(0.05, 0.35);
                b.CopX!.Value.ShouldBe(a.CopX.Value, 1e-9);
                b.CopY!.Value.ShouldBe(a.CopY.Value, 1e-9);
            }
        }));
    }
}

using FsCheck;
using FsCheck.Fluent;
using Saito.Live.Analytics;
using static Saito.Live.Tests.Analytics.SwayTrace;

namespace Saito.Live.Tests.Analytics;

public sealed class SwayTrackerTests
{
    private const double Tolerance = 1e-9;

    private static SwayTracker Tracker(Action<SwayOptions>? configure = null) => new(Configured.Options(configure));

    [Fact]
    public void Nothing_is_known_before_the_first_sample()
    {
        Tracker().Current.ShouldBeNull();
    }

    [Fact]
    public void The_first_settling_seconds_give_no_figures_and_no_ideal()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 19.75, 4, Still);

        var snapshot = tracker.Current!;
        snapshot.Settling.ShouldBeTrue();
        snapshot.Ideal.ShouldBeNull();
        snapshot.SampleCount.ShouldBe(0);
        snapshot.WindowStartUtc.ShouldBeNull();
        snapshot.PhaseStartedUtc.ShouldBe(Start);
        snapshot.LastSampleUtc.ShouldBe(At(19.5));
        snapshot.Posture.ShouldBe(Posture.Sitting);
    }

    [Fact]
    public void A_still_head_has_no_sway_after_settling()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 40, 4, Still);

        var snapshot = tracker.Current!;
        snapshot.Settling.ShouldBeFalse();
        snapshot.Ideal.ShouldBe(Seat);
        snapshot.SampleCount.ShouldBe(40);
        snapshot.WindowStartUtc.ShouldBe(At(30));
        snapshot.Horizontal.ShouldBe(new SwayFigures(0, 0, 0, 0));
        snapshot.ThreeD.ShouldBe(new SwayFigures(0, 0, 0, 0));
    }

    [Fact]
    public void Settling_ends_with_the_first_sample_at_or_after_settling_seconds()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20.25, 4, Still);

        tracker.Current!.Settling.ShouldBeFalse();
        tracker.Current!.SampleCount.ShouldBe(1);
        tracker.Current!.WindowStartUtc.ShouldBe(At(20));
    }

    [Fact]
    public void A_step_of_three_centimetres_reads_as_three_centimetres()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20, 4, Still);
        Feed(tracker, 20, 40, 4, _ => Offset(0.018, 0.024));

        var snapshot = tracker.Current!;
        snapshot.Horizontal.MeanDistanceMetres.ShouldBe(0.03, Tolerance);
        snapshot.Horizontal.RmsDistanceMetres.ShouldBe(0.03, Tolerance);
        snapshot.Horizontal.MaxDistanceMetres.ShouldBe(0.03, Tolerance);
        snapshot.Horizontal.MeanSpeedMetresPerSecond.ShouldBe(0, Tolerance);
    }

    [Fact]
    public void Height_counts_in_three_d_and_not_in_horizontal()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20, 4, Still);
        Feed(tracker, 20, 40, 4, _ => Offset(0.03, 0, 0.04));

        var snapshot = tracker.Current!;
        snapshot.Horizontal.MeanDistanceMetres.ShouldBe(0.03, Tolerance);
        snapshot.ThreeD.MeanDistanceMetres.ShouldBe(0.05, Tolerance);
    }

    [Theory]
    [InlineData(0.05, 1.0, 20)]
    [InlineData(0.02, 3.0, 50)]
    [InlineData(0.10, 0.5, 4)]
    public void A_circle_around_the_ideal_reads_as_its_radius_and_its_speed(double radius, double omega, double hertz)
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20, hertz, Still);
        Feed(tracker, 20, 60, hertz, t => Offset(radius * Math.Cos(omega * t), radius * Math.Sin(omega * t)));

        var snapshot = tracker.Current!;
        snapshot.Horizontal.MeanDistanceMetres.ShouldBe(radius, Tolerance);
        snapshot.Horizontal.RmsDistanceMetres.ShouldBe(radius, Tolerance);
        snapshot.Horizontal.MaxDistanceMetres.ShouldBe(radius, Tolerance);
        // Chords fall short of the arc by (omega dt)^2 / 24 at most: 0.1 % at 4 Hz and 0.5 rad/s.
        snapshot.Horizontal.MeanSpeedMetresPerSecond.ShouldBe(radius * omega, radius * omega * 0.005);
        snapshot.ThreeD.ShouldBe(snapshot.Horizontal);
    }

    [Fact]
    public void A_sinusoid_reads_as_its_known_mean_rms_peak_and_speed()
    {
        const double amplitude = 0.04;
        const double omega = Math.PI; // a 2 s period: five whole periods in the 10 s window
        var tracker = Tracker();
        Feed(tracker, 0, 20, 100, Still);
        Feed(tracker, 20, 40, 100, t => Offset(amplitude * Math.Sin(omega * t)));

        var figures = tracker.Current!.Horizontal;
        figures.MeanDistanceMetres.ShouldBe(2 * amplitude / Math.PI, 0.01 * amplitude);
        figures.RmsDistanceMetres.ShouldBe(amplitude / Math.Sqrt(2), 0.01 * amplitude);
        figures.MaxDistanceMetres.ShouldBe(amplitude, 0.001 * amplitude);
        figures.MeanSpeedMetresPerSecond.ShouldBe(2 * amplitude * omega / Math.PI, 0.01 * amplitude * omega);
    }

    [Fact]
    public void The_ideal_is_the_median_so_a_few_outliers_in_settling_do_not_move_it()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20, 4, t => t is 3 or 7.5 or 12 ? Offset(0.5, -0.4, 0.3) : Seat);
        Feed(tracker, 20, 21, 4, Still);

        tracker.Current!.Ideal.ShouldBe(Seat);
        tracker.Current!.Horizontal.MaxDistanceMetres.ShouldBe(0);
    }

    [Fact]
    public void The_ideal_is_taken_per_component()
    {
        var tracker = Tracker(o => o.SettlingSeconds = 1);
        tracker.Add(At(0), 1, 9, 5, Posture.Sitting);
        tracker.Add(At(0.25), 2, 7, 6, Posture.Sitting);
        tracker.Add(At(0.5), 3, 8, 4, Posture.Sitting);
        tracker.Add(At(0.75), 10, 0, 7, Posture.Sitting);
        tracker.Add(At(1), 0, 0, 0, Posture.Sitting);

        // x 1,2,3,10 -> 2.5; y 0,7,8,9 -> 7.5; z 4,5,6,7 -> 5.5 (an even count: the mean of the middle two).
        tracker.Current!.Ideal.ShouldBe(new HeadPosition(2.5, 7.5, 5.5));
    }

    [Fact]
    public void The_window_holds_only_the_last_window_seconds()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 20, 4, Still);
        Feed(tracker, 20, 30, 4, _ => Offset(0.1));
        Feed(tracker, 30, 40, 4, _ => Offset(0.02));

        var snapshot = tracker.Current!;
        snapshot.Horizontal.MaxDistanceMetres.ShouldBe(0.02, Tolerance);
        snapshot.WindowStartUtc.ShouldBe(At(30));
    }

    [Fact]
    public void A_posture_change_starts_a_phase_that_settles_again_at_a_new_ideal()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still, Posture.Sitting);
        var standing = Offset(0.3, 0.1, 0.5);
        Feed(tracker, 30, 40, 4, _ => standing, Posture.Standing);

        tracker.Current!.Posture.ShouldBe(Posture.Standing);
        tracker.Current!.Settling.ShouldBeTrue();
        tracker.Current!.PhaseStartedUtc.ShouldBe(At(30));
        tracker.PhaseCount.ShouldBe(2);

        Feed(tracker, 40, 55, 4, _ => standing, Posture.Standing);
        tracker.Current!.Settling.ShouldBeFalse();
        tracker.Current!.Ideal.ShouldBe(standing);
        tracker.Current!.Horizontal.MeanDistanceMetres.ShouldBe(0, Tolerance);
    }

    [Fact]
    public void Unknown_posture_keeps_the_phase_while_the_head_height_holds()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still, Posture.Sitting);
        Feed(tracker, 30, 40, 4, Still, Posture.Unknown);

        tracker.PhaseCount.ShouldBe(1);
        tracker.Current!.Posture.ShouldBe(Posture.Sitting);
        tracker.Current!.Settling.ShouldBeFalse();
    }

    [Fact]
    public void With_unknown_posture_a_sustained_height_change_starts_a_phase()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still, Posture.Unknown);
        var standing = Offset(0, 0, 0.45);
        Feed(tracker, 30, 40, 4, _ => standing, Posture.Unknown);

        tracker.PhaseCount.ShouldBe(2);
        // The change began at 30 s and had held for HeightChangeSeconds (2 s) at 32 s.
        tracker.Current!.PhaseStartedUtc.ShouldBe(At(32));
        tracker.Current!.Posture.ShouldBe(Posture.Unknown);
        tracker.Current!.Settling.ShouldBeTrue();

        Feed(tracker, 40, 60, 4, _ => standing, Posture.Unknown);
        tracker.Current!.Ideal.ShouldBe(standing);
    }

    [Fact]
    public void With_unknown_posture_a_brief_or_small_height_change_does_not_start_a_phase()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still, Posture.Unknown);
        Feed(tracker, 30, 31.75, 4, _ => Offset(0, 0, -0.4), Posture.Unknown);
        Feed(tracker, 31.75, 35, 4, Still, Posture.Unknown);
        Feed(tracker, 35, 45, 4, _ => Offset(0, 0, 0.2), Posture.Unknown);

        tracker.PhaseCount.ShouldBe(1);
        tracker.Current!.Settling.ShouldBeFalse();
    }

    [Fact]
    public void Height_alone_does_not_start_a_phase_while_the_mat_knows_the_posture()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still, Posture.Sitting);
        Feed(tracker, 30, 40, 4, _ => Offset(0, 0, 0.5), Posture.Sitting);

        tracker.PhaseCount.ShouldBe(1);
        tracker.Current!.ThreeD.MeanDistanceMetres.ShouldBe(0.5, Tolerance);
    }

    [Fact]
    public void A_gap_longer_than_max_gap_seconds_restarts_the_window_and_adds_no_speed_across_it()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still);
        Feed(tracker, 36, 38, 4, _ => Offset(0.05));

        var snapshot = tracker.Current!;
        snapshot.Settling.ShouldBeFalse();
        snapshot.Ideal.ShouldBe(Seat);
        snapshot.SampleCount.ShouldBe(8);
        snapshot.WindowStartUtc.ShouldBe(At(36));
        snapshot.Horizontal.MeanDistanceMetres.ShouldBe(0.05, Tolerance);
        snapshot.Horizontal.MeanSpeedMetresPerSecond.ShouldBe(0, Tolerance);
        tracker.PhaseCount.ShouldBe(1);
    }

    [Fact]
    public void A_gap_no_longer_than_max_gap_seconds_keeps_the_window()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still);
        Feed(tracker, 34.75, 36, 4, _ => Offset(0.05)); // 5 s after the last sample, at 29.75 s

        tracker.Current!.WindowStartUtc.ShouldBe(At(26));
        // 0.05 m of path over the 9.75 s from 26 s to 35.75 s.
        tracker.Current!.Horizontal.MeanSpeedMetresPerSecond.ShouldBe(0.05 / 9.75, Tolerance);
    }

    [Fact]
    public void A_gap_while_settling_restarts_settling()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 5, 4, _ => Offset(0.3));
        Feed(tracker, 15, 36, 4, Still);

        tracker.Current!.PhaseStartedUtc.ShouldBe(At(15));
        tracker.Current!.Settling.ShouldBeFalse();
        tracker.Current!.Ideal.ShouldBe(Seat);
    }

    [Fact]
    public void Late_repeated_and_non_finite_samples_are_ignored()
    {
        var tracker = Tracker();
        Feed(tracker, 0, 30, 4, Still);
        tracker.Add(At(29.75), 9, 9, 9, Posture.Sitting);
        tracker.Add(At(10), 9, 9, 9, Posture.Standing);
        tracker.Add(At(31), double.NaN, 3, 1.2, Posture.Sitting);
        tracker.Add(At(31), 2, double.PositiveInfinity, 1.2, Posture.Sitting);

        tracker.Ignored.ShouldBe(4);
        tracker.PhaseCount.ShouldBe(1);
        tracker.Current!.Horizontal.MaxDistanceMetres.ShouldBe(0);
        tracker.Current!.LastSampleUtc.ShouldBe(At(29.75));
    }

    [Fact]
    public void The_window_keeps_at_most_max_samples_per_window_dropping_the_oldest()
    {
        var tracker = Tracker(o => o.MaxSamplesPerWindow = 16);
        Feed(tracker, 0, 20, 100, Still);
        Feed(tracker, 20, 30, 100, t => Offset(t < 29.5 ? 0.5 : 0.01));

        var snapshot = tracker.Current!;
        snapshot.SampleCount.ShouldBe(16);
        snapshot.WindowStartUtc.ShouldBe(At(29.84));
        snapshot.Horizontal.MaxDistanceMetres.ShouldBe(0.01, Tolerance);
    }

    [Fact]
    public void Settling_past_max_samples_takes_the_ideal_from_the_first_samples()
    {
        var tracker = Tracker(o => o.MaxSamplesPerWindow = 16);
        Feed(tracker, 0, 20, 4, t => t < 4 ? Seat : Offset(1));
        Feed(tracker, 20, 21, 4, Still);

        tracker.Current!.Ideal.ShouldBe(Seat);
    }

    [Fact]
    public void Invalid_options_are_refused_with_their_messages()
    {
        var thrown = Should.Throw<ArgumentException>(() => new SwayTracker(new SwayOptions { WindowSeconds = 0 }));
        thrown.Message.ShouldContain("Dashboard:Sway:WindowSeconds must be between 1 and 600 (was 0).");
    }

    [Fact]
    public void The_tracker_copies_its_options_so_later_edits_do_not_change_it()
    {
        var options = new SwayOptions { SettlingSeconds = 5 };
        var tracker = new SwayTracker(options);
        options.SettlingSeconds = 100;
        Feed(tracker, 0, 6, 4, Still);

        tracker.Current!.Settling.ShouldBeFalse();
    }

    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(200).WithQuietOnSuccess(true);

    private static readonly Gen<(double X, double Y, double Z)[]> Wander =
        from n in Gen.Choose(2, 40)
        from steps in Gen.ArrayOf(
            from x in Gen.Choose(-1000, 1000)
            from y in Gen.Choose(-1000, 1000)
            from z in Gen.Choose(-1000, 1000)
            select (x / 10_000.0, y / 10_000.0, z / 10_000.0), n)
        select steps;

    [Fact]
    public void For_any_trace_the_figures_are_ordered_mean_rms_max_and_horizontal_within_three_d()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(Wander), offsets =>
        {
            var tracker = Tracker(o => o.SettlingSeconds = 1);
            Feed(tracker, 0, 1, 4, Still);
            for (var i = 0; i < offsets.Length; i++)
            {
                var (dx, dy, dz) = offsets[i];
                tracker.Add(At(1 + (i * 0.25)), Seat.X + dx, Seat.Y + dy, Seat.Z + dz, Posture.Sitting);
            }

            var s = tracker.Current!;
            s.SampleCount.ShouldBe(offsets.Length);
            foreach (var f in new[] { s.Horizontal, s.ThreeD })
            {
                f.MeanDistanceMetres.ShouldBeLessThanOrEqualTo(f.RmsDistanceMetres + Tolerance);
                f.RmsDistanceMetres.ShouldBeLessThanOrEqualTo(f.MaxDistanceMetres + Tolerance);
                f.MeanSpeedMetresPerSecond.ShouldBeGreaterThanOrEqualTo(0);
            }

            s.Horizontal.MaxDistanceMetres.ShouldBeLessThanOrEqualTo(s.ThreeD.MaxDistanceMetres + Tolerance);
            s.Horizontal.MeanSpeedMetresPerSecond.ShouldBeLessThanOrEqualTo(s.ThreeD.MeanSpeedMetresPerSecond + Tolerance);
        }));
    }

    [Fact]
    public void For_any_trace_moving_everything_moves_the_ideal_and_leaves_the_figures()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(Wander), offsets =>
        {
            var here = Tracker(o => o.SettlingSeconds = 1);
            var there = Tracker(o => o.SettlingSeconds = 1);
            for (var i = 0; i < offsets.Length; i++)
            {
                var (dx, dy, dz) = offsets[i];
                here.Add(At(i * 0.25), dx, dy, dz, Posture.Standing);
                there.Add(At(i * 0.25), dx + 5, dy - 2, dz + 1, Posture.Standing);
            }

            var a = here.Current!;
            var b = there.Current!;
            b.Settling.ShouldBe(a.Settling);
            b.SampleCount.ShouldBe(a.SampleCount);
            b.Horizontal.MeanDistanceMetres.ShouldBe(a.Horizontal.MeanDistanceMetres, 1e-6);
            b.ThreeD.MeanSpeedMetresPerSecond.ShouldBe(a.ThreeD.MeanSpeedMetresPerSecond, 1e-6);
            if (a.Ideal is { } ideal)
            {
                b.Ideal!.Value.X.ShouldBe(ideal.X + 5, 1e-9);
            }
        }));
    }
}

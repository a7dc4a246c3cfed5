using FsCheck;
using FsCheck.Fluent;
using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class SessionTests
{
    [Fact]
    public void Nothing_fires_outside_the_session_and_open_alerts_close_when_it_ends()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 80 });
        for (var t = -600.0; t < -1; t += 0.25)
        {
            s.Engine.ObserveHeart(Owner, Band, At(t), 190, 39, At(t));
        }
        s.Collect();
        s.Events.ShouldBeEmpty();
        s.Engine.Counters.OutsideSessionIgnored.ShouldBe(2396);

        s.Engine.ObserveDevice(Owner, Band, At(7180), At(7180));
        s.TickTo(7180).Heart(7180, 7260, 190).TickTo(8000);

        var high = s.Of(AlertKind.HeartRateHigh);
        high.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 7185.0), (AlertEventType.Cleared, 7200.0)]);
        high[1].Detail.ShouldBe("session ended");
        s.Events.ShouldAllBe(e => e.At <= At(7200));
        s.Engine.ActiveCount.ShouldBe(0);
    }

    [Fact]
    public void Removing_a_student_closes_their_alerts_and_stops_watching_them()
    {
        var s = new AlertScenario(checkIn: false).TickTo(600);
        s.Engine.RemoveStudent(Owner, At(605)).ShouldBeTrue();
        s.Engine.ObserveHeart(Owner, Band, At(606), 200, null, At(606));
        s.Collect().TickTo(900);

        s.Events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 600.0), (AlertEventType.Cleared, 605.0)]);
        s.Events[1].Detail.ShouldBe("no longer watched");
        s.Engine.RemoveStudent(Owner, At(906)).ShouldBeFalse();
    }

    [Fact]
    public void Any_heart_rate_trace_opens_at_most_one_alert_per_kind_and_every_clear_closes_the_open_one()
    {
        var segment = Gen.Choose(35, 200).SelectMany(bpm => Gen.Choose(1, 80).Select(quarterSeconds => (Bpm: bpm, Quarters: quarterSeconds)));
        var trace = Gen.Choose(1, 40).SelectMany(n => Gen.ListOf(segment, n));

        Check.One(Config.QuickThrowOnFailure.WithMaxTest(300).WithQuietOnSuccess(true), Prop.ForAll(Arb.From(trace), segments =>
        {
            var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 75 });
            var t = 0.0;
            foreach (var (bpm, quarters) in segments)
            {
                s.Heart(t, t + (quarters / 4.0), bpm);
                t += quarters / 4.0;
            }
            foreach (var kind in new[] { AlertKind.Tachycardia, AlertKind.HeartRateHigh, AlertKind.Bradycardia })
            {
                Guid? open = null;
                foreach (var e in s.Of(kind))
                {
                    if (e.Type == AlertEventType.Raised)
                    {
                        open.ShouldBeNull();
                        open = e.AlertId;
                    }
                    else
                    {
                        e.AlertId.ShouldBe(open!.Value);
                        if (e.Type == AlertEventType.Cleared)
                        {
                            open = null;
                        }
                    }
                }
            }
        }));
    }

    [Fact]
    public void Evaluating_a_reading_allocates_nothing_when_no_alert_changes()
    {
        var s = new AlertScenario(thresholds: new AlertThresholds { RestingHeartRate = 80 }, seatMat: true);
        var engine = s.Engine;
        Feed(engine, 0, 600); // warm: the trend's buffer has grown to its window, the code is jitted

        // Three windows of 1,000 s each: the engine's path is deterministic, so an allocation on it shows in every
        // window. Once in a full suite run (parallel tests, a GC or the JIT's tiering in between), one window counted
        // 16,344 bytes that the others did not; the runtime's, not the engine's.
        var allocated = new long[3];
        for (int window = 0; window < allocated.Length; window++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            Feed(engine, 600 + (window * 1000), 1600 + (window * 1000));
            allocated[window] = GC.GetAllocatedBytesForCurrentThread() - before;
        }

        allocated.Min().ShouldBe(0, $"bytes allocated per window: {string.Join(", ", allocated)}");
        engine.Counters.ReadingsEvaluated.ShouldBe(3 * 4 * 3600);
        s.Collect().Events.ShouldBeEmpty();
    }

    private static void Feed(AlertEngine engine, double from, double to)
    {
        for (var t = from; t < to; t += 0.25)
        {
            engine.ObserveHeart(Owner, Band, At(t), 82, 33.5, At(t));
            engine.ObserveSeat(Owner, Mat, At(t), true, At(t));
            engine.ObserveDevice(Owner, 999, At(t), At(t));
            if (t % 1 == 0)
            {
                engine.Tick(At(t));
            }
        }
    }
}

using Saito.Live.Alerts;
using static Saito.Live.Tests.Alerts.AlertScenario;

namespace Saito.Live.Tests.Alerts;

public sealed class PresenceAlertTests
{
    [Fact]
    public void Silent_sensor_fires_X_seconds_after_the_last_reading_and_clears_when_the_device_speaks()
    {
        var s = new AlertScenario().Heart(0, 100, 80).TickTo(149);
        s.Engine.ObserveDevice(Owner, Band, At(149.5), At(150));
        s.Collect().TickTo(175);

        var events = s.Of(AlertKind.SilentSensor);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 130.0), (AlertEventType.Cleared, 150.0)]);
        events[0].Detail.ShouldBe("device 101 sent nothing for 30 s");
        events[0].Value.ShouldBe(30);
    }

    [Fact]
    public void Silent_sensor_does_not_fire_unless_the_student_is_checked_in()
    {
        var s = new AlertScenario(checkIn: false).Heart(0, 10, 80).TickTo(500);

        s.Events.ShouldBeEmpty();
    }

    [Fact]
    public void A_device_never_heard_since_check_in_counts_from_check_in()
    {
        var s = new AlertScenario(checkIn: false).TickTo(60);
        s.Engine.SetCheckedIn(Owner, true, At(60), At(60));
        s.TickTo(120);

        Seconds(s.Single(AlertKind.SilentSensor, AlertEventType.Raised)).ShouldBe(90);
    }

    [Fact]
    public void Checking_out_clears_the_silent_sensor_and_stops_it()
    {
        var s = new AlertScenario().TickTo(40);
        s.Engine.SetCheckedIn(Owner, false, At(40), At(40));
        s.Collect().TickTo(300);

        s.Of(AlertKind.SilentSensor).Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 30.0), (AlertEventType.Cleared, 40.0)]);
        s.Of(AlertKind.NotCheckedIn).ShouldBeEmpty();
    }

    [Fact]
    public void Not_checked_in_fires_after_the_grace_period_and_clears_on_check_in()
    {
        var s = new AlertScenario(checkIn: false).TickTo(599);
        s.Events.ShouldBeEmpty();

        s.TickTo(610);
        s.Engine.SetCheckedIn(Owner, true, At(610), At(610));
        s.Collect();

        var events = s.Of(AlertKind.NotCheckedIn);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 600.0), (AlertEventType.Cleared, 610.0)]);
        events[0].Value.ShouldBe(10);
        events[0].Detail.ShouldBe("not checked in 10 min after the session started at 08:00");
    }

    [Fact]
    public void Off_seat_fires_after_Y_seconds_and_clears_when_back_for_ClearSeconds()
    {
        var s = new AlertScenario(seatMat: true).Seat(0, true).Seat(100, false).TickTo(159);
        s.Of(AlertKind.OffSeat).ShouldBeEmpty();

        s.TickTo(170).Seat(200, true).TickTo(209);
        s.Of(AlertKind.OffSeat).Count.ShouldBe(1);

        s.TickTo(210).Seat(300, false).Seat(330, true).TickTo(400);
        var events = s.Of(AlertKind.OffSeat);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 160.0), (AlertEventType.Cleared, 210.0)]);
        events[0].Detail.ShouldBe("out of seat for 60 s");
    }

    [Fact]
    public void Off_seat_needs_a_seat_mat_and_follows_the_students_own_limit()
    {
        new AlertScenario(seatMat: false).Seat(0, false).TickTo(300).Of(AlertKind.OffSeat).ShouldBeEmpty();

        var s = new AlertScenario(thresholds: new AlertThresholds { OffSeatSeconds = 20 }, seatMat: true).Seat(100, false).TickTo(300);
        Seconds(s.Single(AlertKind.OffSeat, AlertEventType.Raised)).ShouldBe(120);
    }

    [Fact]
    public void One_silent_sensor_alert_covers_all_silent_devices_and_clears_when_none_is_left_silent()
    {
        var s = new AlertScenario();
        s.Engine.SetDevices(Owner, [Band, Mat, 103], At(0));
        s.Engine.ObserveDevice(Owner, 103, At(20), At(20));
        s.TickTo(60);
        s.Engine.ObserveDevice(Owner, Band, At(60), At(60));
        s.Engine.ObserveDevice(Owner, 103, At(60), At(60));
        s.Engine.SetDevices(Owner, [Band, 103], At(61));
        s.Collect().TickTo(62);

        var events = s.Of(AlertKind.SilentSensor);
        events.Select(e => (e.Type, Seconds(e))).ShouldBe([(AlertEventType.Raised, 30.0), (AlertEventType.Cleared, 61.0)]);
        events[0].Detail.ShouldBe("device 101 (and 1 more) sent nothing for 30 s");
    }
}

using Saito.Live.Alerts;
using Saito.Live.Classroom;
using static Saito.Live.Tests.Classroom.ClassroomScenario;

namespace Saito.Live.Tests.Classroom;

public sealed class LiveViewTests
{
    private const int Ada = 7;
    private const int Basil = 8;
    private const int Band = 101;

    /// <summary>Class 1 in session with Ada on it, checked in at 0 and wearing <see cref="Band"/>.</summary>
    private static ClassroomScenario AdaInClass()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1]).Device(Band, "wrist-ada", "wristband", Ada);
        s.Apply();
        return s;
    }

    [Fact]
    public void A_reading_shows_on_the_tile_of_the_student_who_wears_the_device()
    {
        var s = AdaInClass().Biosensor(Band, 5, 80, temp: 33.2);

        var tile = s.Take(5)[1].Full.ShouldHaveSingleItem();
        (tile.OwnerId, tile.Name, tile.ExternalRef, tile.HeartRate, tile.SkinTemperature).ShouldBe((Ada, "Ada", "ext-7", 80d, 33.2));
        tile.VitalsAt.ShouldBe(new DateTimeOffset(At(5)));
        tile.Devices.ShouldHaveSingleItem().ShouldBe(new DeviceView(Band, "wrist-ada", "wristband", new DateTimeOffset(At(5)), false));
    }

    [Fact]
    public void A_reading_of_a_device_no_watched_student_wears_changes_no_tile()
    {
        var s = AdaInClass();
        s.Take(0);

        s.Biosensor(999, 5, 80);

        s.View.HasChangedTiles.ShouldBeFalse();
        s.Take(5).ShouldBeEmpty();
        s.Tile(Ada).HeartRate.ShouldBeNull();
    }

    [Fact]
    public void The_newest_reading_wins_and_an_older_one_arriving_late_is_not_shown()
    {
        var s = AdaInClass().Biosensor(Band, 10, 80).Biosensor(Band, 5, 140, received: 12);

        s.Take(12);

        s.Tile(Ada).HeartRate.ShouldBe(80);
        s.Tile(Ada).VitalsAt.ShouldBe(new DateTimeOffset(At(10)));
        s.Tile(Ada).Devices[0].LastReading.ShouldBe(new DateTimeOffset(At(12)));
    }

    [Fact]
    public void A_device_handed_over_shows_on_the_new_wearer_only_with_readings_taken_after_the_hand_over()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1]).Student(Basil, "Basil", [1]).Device(Band, "wrist-1", "wristband", Ada);
        s.Apply();
        s.Biosensor(Band, 10, 80);
        s.Take(10);

        s.Device(Band, "wrist-1", "wristband", Basil, from: 60).Apply(60);
        // Taken by Ada's wrist before the hand-over, delivered late by a hub catching up.
        s.Biosensor(Band, 50, 143, received: 61);
        s.Take(61);

        s.Tile(Basil).HeartRate.ShouldBeNull();
        s.Tile(Basil).Devices.ShouldHaveSingleItem().DeviceId.ShouldBe(Band);
        s.Tile(Ada).Devices.ShouldBeEmpty();
        s.Tile(Ada).HeartRate.ShouldBeNull("the wristband is Basil's now: its last value must not stay on Ada's tile as if it were hers");
        s.Tile(Ada).VitalsAt.ShouldBeNull();

        s.Biosensor(Band, 62, 77);
        s.Take(62)[1].Full.ShouldHaveSingleItem().ShouldSatisfyAllConditions(t => t.OwnerId.ShouldBe(Basil), t => t.HeartRate.ShouldBe(77));
    }

    [Fact]
    public void A_handed_over_device_catching_up_with_older_readings_is_alive_for_the_silent_sensor_rule()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1]).Student(Basil, "Basil", [1]).Device(Band, "wrist-1", "wristband", Basil, from: 60);
        s.Apply(60);
        s.Drain();
        // Every second from 61 to 120 a reading taken 50 s earlier (all before the hand-over but the last ten).
        for (var t = 61; t <= 120; t++)
        {
            s.Biosensor(Band, t - 50, 70, received: t);
            s.TickTo(t, t);
        }

        s.Drain().ShouldNotContain(e => e.Event.OwnerId == Basil && e.Event.Kind == AlertKind.SilentSensor);

        s.TickTo(121, 150);
        s.Drain().ShouldContain(e => e.Event.OwnerId == Basil && e.Event.Kind == AlertKind.SilentSensor && e.Event.Type == AlertEventType.Raised);
    }

    [Fact]
    public void A_device_is_silent_on_the_tile_once_it_has_sent_nothing_for_SilentSensorSeconds()
    {
        var s = AdaInClass().Biosensor(Band, 10, 80);

        s.Refresh(40);
        s.Tile(Ada).Devices[0].Silent.ShouldBeFalse();

        s.Refresh(41);
        s.Tile(Ada).Devices[0].Silent.ShouldBeTrue();
        s.Tile(Ada, seesBloodPressure: false).Devices[0].Silent.ShouldBeTrue();
    }

    [Fact]
    public void A_device_never_heard_is_silent_counted_from_check_in_and_only_while_checked_in()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1], checkedInAt: 100).Device(Band, "wrist-ada", "wristband", Ada)
            .Student(Basil, "Basil", [1], checkedInAt: null).Device(102, "wrist-basil", "wristband", Basil);

        s.Refresh(130);
        s.Tile(Ada).Devices[0].Silent.ShouldBeFalse();

        s.Refresh(131);
        s.Tile(Ada).Devices[0].Silent.ShouldBeTrue();
        s.Tile(Basil).Devices[0].Silent.ShouldBeFalse();

        s.CheckOut(Ada, 140).Refresh(200);
        s.Tile(Ada).Devices[0].Silent.ShouldBeFalse();
    }

    [Fact]
    public void The_tile_says_whether_the_student_has_checked_in_and_since_when()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1], checkedInAt: 5).Student(Basil, "Basil", [1], checkedInAt: null)
            .Student(9, "Cy", [1], checkedInAt: 1).CheckOut(9, 20);

        s.Refresh(30);

        (s.Tile(Ada).CheckIn, s.Tile(Ada).CheckedInAt).ShouldBe(("in", new DateTimeOffset(At(5))));
        s.Tile(Basil).CheckIn.ShouldBe("not-yet");
        s.Tile(Basil).CheckedInAt.ShouldBeNull();
        s.Tile(9).CheckIn.ShouldBe("out");
    }

    [Fact]
    public void Blood_pressure_reaches_only_those_who_see_it_and_its_arrival_pushes_the_others_nothing()
    {
        var s = AdaInClass().Biosensor(Band, 5, 80);
        s.Take(5);

        s.Biosensor(Band, 10, null, sys: 120, dia: 80);
        var pushed = s.Take(10)[1];

        pushed.Full.ShouldHaveSingleItem().ShouldSatisfyAllConditions(t => t.Systolic.ShouldBe(120), t => t.Diastolic.ShouldBe(80),
            t => t.VitalsAt.ShouldBe(new DateTimeOffset(At(10))));
        pushed.WithoutBloodPressure.ShouldBeEmpty();
        var reduced = s.Tile(Ada, seesBloodPressure: false);
        reduced.Systolic.ShouldBeNull();
        reduced.Diastolic.ShouldBeNull();
        reduced.VitalsAt.ShouldBe(new DateTimeOffset(At(5)));
        reduced.Devices[0].LastReading.ShouldBe(new DateTimeOffset(At(5)));

        s.Biosensor(Band, 15, 84);
        s.Take(15)[1].WithoutBloodPressure.ShouldHaveSingleItem().ShouldSatisfyAllConditions(t => t.HeartRate.ShouldBe(84),
            t => t.Systolic.ShouldBeNull(), t => t.Diastolic.ShouldBeNull(), t => t.VitalsAt.ShouldBe(new DateTimeOffset(At(15))));
    }

    [Fact]
    public void Changed_tiles_go_to_every_class_of_the_student_once()
    {
        var s = new ClassroomScenario().Class(1).Class(2).Class(3).Student(Ada, "Ada", [1, 2]).Student(Basil, "Basil", [3])
            .Device(Band, "wrist-ada", "wristband", Ada).Device(102, "wrist-basil", "wristband", Basil);
        s.Apply();
        s.Take(0).Keys.Order().ShouldBe([1, 2, 3]);

        s.Biosensor(Band, 5, 80);
        var pushed = s.Take(5);

        pushed.Keys.Order().ShouldBe([1, 2]);
        pushed[1].Full.ShouldHaveSingleItem().OwnerId.ShouldBe(Ada);
        pushed[2].Full.ShouldHaveSingleItem().OwnerId.ShouldBe(Ada);
        s.View.HasChangedTiles.ShouldBeFalse();
        s.Take(6).ShouldBeEmpty();
    }

    [Fact]
    public void An_alert_names_the_device_by_serial_is_filed_under_the_class_in_session_and_counts_on_the_tile()
    {
        var s = new ClassroomScenario().Class(1, inSession: false).Class(2).Student(Ada, "Ada", [1, 2]).Device(Band, "wrist-ada", "wristband", Ada);
        s.Apply();
        s.TickTo(1, 31);

        var raised = s.Drain().ShouldHaveSingleItem();
        (raised.Event.Kind, raised.Event.Type, raised.Event.Detail).ShouldBe((AlertKind.SilentSensor, AlertEventType.Raised, "wrist-ada sent nothing for 30 s"));
        raised.ClassId.ShouldBe(2);
        raised.Classes.ShouldBe([1, 2]);
        raised.View.ShouldBe(new AlertView(AlertId(1), Ada, "Ada", "silent-sensor", "device", AlertKinds.Text(AlertKind.SilentSensor), AlertLevels.Aide,
            "in the room", 30, "wrist-ada sent nothing for 30 s", new DateTimeOffset(At(30)), null, null, null));
        s.View.ActiveAlerts.ShouldBe([raised.View]);
        s.Take(31);
        s.Tile(Ada).OpenAlerts.ShouldBe(1);
        s.Tile(Ada).Alert.ShouldBe(new TileAlert("silent-sensor", "device", AlertKinds.Text(AlertKind.SilentSensor), 30, Acknowledged: false));
        s.Tile(Ada).Devices[0].Silent.ShouldBeTrue();

        s.View.Acknowledge(AlertId(1), "teacher-1", At(35)).ShouldBeTrue();
        var acknowledged = s.Drain().ShouldHaveSingleItem();
        acknowledged.Event.Type.ShouldBe(AlertEventType.Acknowledged);
        acknowledged.View.AcknowledgedBy.ShouldBe("teacher-1");
        s.View.ActiveAlerts.ShouldHaveSingleItem().ShouldSatisfyAllConditions(
            a => a.AcknowledgedBy.ShouldBe("teacher-1"), a => a.AcknowledgedAt.ShouldBe(new DateTimeOffset(At(35))));
        s.Take(35);
        s.Tile(Ada).Alert!.Acknowledged.ShouldBeTrue("acknowledged but still open: the tile still names it, marked as seen");
    }

    [Fact]
    public void An_alert_closed_after_the_session_ended_is_filed_under_the_student_s_first_class_and_leaves_the_tile()
    {
        var s = new ClassroomScenario().Class(1).Class(2).Student(Ada, "Ada", [1, 2]).Device(Band, "wrist-ada", "wristband", Ada);
        s.Apply();
        s.TickTo(1, 30);
        s.Drain().ShouldHaveSingleItem();

        s.Class(1, inSession: false).Class(2, inSession: false).Student(Ada, "Ada", [1, 2]).Apply(7200);
        s.TickTo(7200, 7200);

        var cleared = s.Drain().ShouldHaveSingleItem();
        (cleared.Event.Type, cleared.ClassId).ShouldBe((AlertEventType.Cleared, 1));
        cleared.View.ClearedAt.ShouldBe(new DateTimeOffset(At(7200)));
        s.View.ActiveAlerts.ShouldBeEmpty();
        s.Take(7200);
        s.Tile(Ada).OpenAlerts.ShouldBe(0);
        s.Tile(Ada).Alert.ShouldBeNull();
    }

    [Fact]
    public void A_student_no_longer_on_a_roster_loses_their_tile_and_their_open_alerts()
    {
        var s = AdaInClass();
        s.TickTo(1, 30);
        s.Drain().ShouldHaveSingleItem();
        s.Take(30);
        s.View.Tiles.Keys.ShouldBe([Ada]);

        s.Without(Ada).Apply(31);

        s.View.Tiles.ShouldBeEmpty();
        s.Drain().ShouldHaveSingleItem().Event.Type.ShouldBe(AlertEventType.Cleared);
        s.View.ActiveAlerts.ShouldBeEmpty();
        s.Take(31).ShouldBeEmpty();
        s.Biosensor(Band, 32, 80);
        s.View.HasChangedTiles.ShouldBeFalse();
    }

    [Fact]
    public void Thresholds_that_do_not_fit_together_are_reported_and_the_student_is_watched_with_the_defaults()
    {
        var s = new ClassroomScenario().Class(1).Student(Ada, "Ada", [1], thresholds: new AlertThresholds { HeartRateMin = 110, HeartRateMax = 100 })
            .Device(Band, "wrist-ada", "wristband", Ada);

        var problem = s.Apply().ShouldHaveSingleItem();

        problem.OwnerId.ShouldBe(Ada);
        problem.Problem.ShouldContain("minimum 110 must be below maximum 100");
        s.Take(0)[1].Full.ShouldHaveSingleItem().OwnerId.ShouldBe(Ada);
        // The default maximum (Alerts:HeartRateMax) applies: a heart rate above it for its onset raises an alert.
        for (var t = 1; t <= 40; t++)
        {
            s.Biosensor(Band, t, s.Alerts.HeartRateMax + 10);
            s.TickTo(t, t);
        }

        s.Drain().ShouldContain(e => e.Event.Kind == AlertKind.HeartRateHigh && e.Event.Type == AlertEventType.Raised);
    }

    [Fact]
    public void A_seat_mat_gives_the_seat_and_the_posture_for_head_sway_and_a_foot_mat_does_not()
    {
        var s = AdaInClass().Device(102, "mat-ada", "pressure-mat", Ada).Device(103, "head-ada", "location", Ada).Device(104, "foot-ada", "foot-mat", Ada);
        s.Apply();
        s.Take(0);
        s.Tile(Ada).Seat.ShouldBeNull();

        s.MatFrame(104, 1, 1.0).MatFrame(104, 2, 1.0);
        s.Take(2);
        s.Tile(Ada).Seat.ShouldBeNull();

        s.MatFrame(102, 1, 1.0).MatFrame(102, 2, 1.0);
        s.Location(103, HeadChannel + 1, 2.5, 0.1, 0.2, 1.2);
        s.Take(3);
        var seat = s.Tile(Ada).Seat.ShouldNotBeNull();
        (seat.Occupied, seat.TotalKpa, seat.At).ShouldBe((true, 16d, new DateTimeOffset(At(1))));
        s.Tile(Ada).Sway.ShouldBeNull();

        s.Location(103, HeadChannel, 3, 0.1, 0.2, 1.2);
        s.Take(3);
        s.Tile(Ada).Sway.ShouldNotBeNull().ShouldSatisfyAllConditions(w => w.Posture.ShouldBe("sitting"), w => w.At.ShouldBe(new DateTimeOffset(At(3))));
    }
}

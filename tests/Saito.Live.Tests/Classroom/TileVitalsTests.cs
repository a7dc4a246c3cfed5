using Saito.Live.Classroom;
using Saito.Readings;

namespace Saito.Live.Tests.Classroom;

public sealed class TileVitalsTests
{
    private static readonly DateTime T0 = new(2026, 12, 5, 9, 0, 0, DateTimeKind.Utc);

    [Fact]
    public void A_reading_with_only_blood_pressure_moves_vitals_at_only_for_those_who_see_it()
    {
        var vitals = new TileVitals();
        vitals.Observe(7, Reading.Biosensor(7, 0, T0, T0.AddSeconds(1), 80, null, null, 33.1));
        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(30), T0.AddSeconds(31), null, 120, 80, null));

        vitals.VitalsAt(seesBloodPressure: false).ShouldBe(T0);
        vitals.LastReading(7, seesBloodPressure: false).ShouldBe(T0.AddSeconds(1));
        vitals.VitalsAt(seesBloodPressure: true).ShouldBe(T0.AddSeconds(30));
        vitals.LastReading(7, seesBloodPressure: true).ShouldBe(T0.AddSeconds(31));
        (vitals.HeartRate, vitals.Systolic, vitals.Diastolic, vitals.SkinTemperature).ShouldBe((80d, 120d, 80d, 33.1));

        // A late heart rate older than the blood pressure still counts for the aide (each side keeps its own time).
        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(10), T0.AddSeconds(40), 90, null, null, null));
        vitals.VitalsAt(seesBloodPressure: false).ShouldBe(T0.AddSeconds(10));
        vitals.HeartRate.ShouldBe(90);
        vitals.VitalsAt(seesBloodPressure: true).ShouldBe(T0.AddSeconds(30));
    }

    [Fact]
    public void The_newest_reading_wins_and_an_older_one_arriving_late_changes_no_value()
    {
        var vitals = new TileVitals();
        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(10), T0.AddSeconds(10), 80, 118, 76, 33.0));
        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(5), T0.AddSeconds(20), 140, 150, 95, 35.0));

        (vitals.HeartRate, vitals.Systolic, vitals.Diastolic, vitals.SkinTemperature).ShouldBe((80d, 118d, 76d, 33.0));
        vitals.VitalsAt(seesBloodPressure: true).ShouldBe(T0.AddSeconds(10));
        // The device did send something, though: its last reading is when that arrived.
        vitals.LastReading(7, seesBloodPressure: false).ShouldBe(T0.AddSeconds(20));

        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(11), T0.AddSeconds(21), 82, null, null, null));
        vitals.HeartRate.ShouldBe(82);
    }

    [Fact]
    public void A_reading_without_a_value_keeps_the_last_one_shown()
    {
        var vitals = new TileVitals();
        vitals.Observe(7, Reading.Biosensor(7, 0, T0, T0, 80, null, null, 33.0));
        vitals.Observe(7, Reading.Biosensor(7, 0, T0.AddSeconds(1), T0.AddSeconds(1), null, null, null, 33.4));

        vitals.HeartRate.ShouldBe(80);
        vitals.SkinTemperature.ShouldBe(33.4);
        vitals.VitalsAt(seesBloodPressure: false).ShouldBe(T0.AddSeconds(1));
    }

    [Fact]
    public void A_location_or_pressure_reading_counts_as_the_device_sending_but_is_no_vital()
    {
        var vitals = new TileVitals();
        vitals.Observe(9, Reading.Location(9, 3, T0, T0.AddSeconds(2), 1, 2, 1.2));

        vitals.LastReading(9, seesBloodPressure: false).ShouldBe(T0.AddSeconds(2));
        vitals.LastReading(9, seesBloodPressure: true).ShouldBe(T0.AddSeconds(2));
        vitals.LastReading(8, seesBloodPressure: true).ShouldBeNull();
        vitals.VitalsAt(seesBloodPressure: true).ShouldBeNull();
        vitals.HeartRate.ShouldBeNull();
    }
}

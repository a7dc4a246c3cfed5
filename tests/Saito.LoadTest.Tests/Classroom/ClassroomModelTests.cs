using System.Text;
using Saito.Ingestion;
using Saito.LoadTest.Classroom;
using Saito.Payloads;
using Saito.Readings;

namespace Saito.LoadTest.Tests.Classroom;

/// <summary>The simulated class without a broker: how sensors are spread, and that what they read is valid and repeatable.</summary>
public sealed class ClassroomModelTests
{
    [Fact]
    public void Twenty_sensors_are_a_wristband_six_garment_tags_nine_seat_cells_and_four_foot_cells()
    {
        ClassroomLayout.Split(20).ShouldBe((1, 6, 9, 4));
        ClassroomLayout.Split(1).ShouldBe((1, 0, 0, 0));
        for (int n = 1; n <= 100; n++)
        {
            var (wrist, garment, seat, foot) = ClassroomLayout.Split(n);
            (wrist + garment + seat + foot).ShouldBe(n);
            garment.ShouldBeGreaterThanOrEqualTo(0);
            seat.ShouldBeGreaterThanOrEqualTo(0);
            foot.ShouldBeGreaterThanOrEqualTo(0);
        }
    }

    [Fact]
    public void Layout_gives_each_student_a_hub_and_each_device_its_own_topic()
    {
        var layout = ClassroomLayout.Create("crtest", 16, 20);

        layout.Sensors.Count.ShouldBe(320);
        layout.Devices.Count.ShouldBe(64);
        layout.Devices.Select(d => d.Topic).Distinct().Count().ShouldBe(64);
        layout.Devices.Single(d => d.Student == 3 && d.Role == ClassroomRole.Seat).Topic.ShouldBe("saito/crtest-hub03/crtest-s03-seat/pressure");
        layout.Sensors.Select(s => (s.Device.Serial, s.Channel)).Distinct().Count().ShouldBe(320);
    }

    [Fact]
    public void Ten_minutes_of_a_class_pass_Saito_validation_and_show_episodes_standing_and_sway()
    {
        var layout = ClassroomLayout.Create("crtest", 16, 20);
        var values = new ClassroomValues(layout, seed: 7);
        var parser = new ReadingParser(new IngestionOptions(), TimeProvider.System);
        var readings = new List<Reading>();
        var deadLetters = new List<DeadLetter>();
        long start = ((DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) / 10) - 700_000_000; // 700 s ago
        var json = new StringBuilder();
        var byDevice = layout.Sensors.GroupBy(s => s.Device).ToList();
        for (double t = 0; t < 600; t += 0.5)
        {
            foreach (var device in byDevice)
            {
                json.Clear().Append('[');
                foreach (var sensor in device)
                {
                    if (json.Length > 1)
                    {
                        json.Append(',');
                    }

                    values.Append(json, sensor, t, start + (long)(t * 1_000_000));
                }

                json.Append(']');
                var context = new ReadingParseContext(device.Key.Kind, device.Key.Student * 10 + (int)device.Key.Role, device.Key.Topic, "test", default, null);
                parser.Parse(context, Encoding.UTF8.GetBytes(json.ToString()), readings, deadLetters);
            }
        }

        deadLetters.ShouldBeEmpty();
        readings.Count.ShouldBe(320 * 1200);

        var heart = readings.Where(r => r.Kind == ReadingKind.Biosensor).GroupBy(r => r.DeviceId).ToList();
        heart.Count(g => g.Max(r => r.HeartRate!.Value) > 1.6 * g.Min(r => r.HeartRate!.Value)).ShouldBeGreaterThan(0, "some student has a tachycardia episode");
        heart.ShouldAllBe(g => g.Count(r => r.Systolic != null) == g.Count() / 4, "blood pressure every fourth reading");

        var hood = readings.Where(r => r.Kind == ReadingKind.Location && r.Channel == 5).GroupBy(r => r.DeviceId).ToList();
        hood.Count(g => g.Max(r => r.Z!.Value) - g.Min(r => r.Z!.Value) > 0.4).ShouldBeGreaterThan(0, "some student stands up");
        foreach (var tag in hood)
        {
            (tag.Max(r => r.X!.Value) - tag.Min(r => r.X!.Value)).ShouldBeInRange(0.01, 0.3, "the head sways by centimetres, not metres");
        }

        var seats = readings.Where(r => r.Kind == ReadingKind.Pressure && r.DeviceId % 10 == (int)ClassroomRole.Seat).ToList();
        seats.Count(r => r.Kpa < 0.5).ShouldBeGreaterThan(0, "an empty seat while standing");
        seats.Count(r => r.Kpa > 3).ShouldBeGreaterThan(0, "a seat carrying a student");
    }

    [Fact]
    public void The_same_seed_gives_the_same_readings_and_another_seed_other_ones()
    {
        string Readings(int seed)
        {
            var layout = ClassroomLayout.Create("crtest", 2, 20);
            var values = new ClassroomValues(layout, seed);
            var json = new StringBuilder();
            for (int tick = 0; tick < 40; tick++)
            {
                foreach (var sensor in layout.Sensors)
                {
                    values.Append(json, sensor, tick * 0.25, 1_759_741_200_000_000 + (tick * 250_000));
                }
            }

            return json.ToString();
        }

        Readings(1).ShouldBe(Readings(1));
        Readings(2).ShouldNotBe(Readings(1));
    }
}

using Saito.Readings;

namespace Saito.LoadTest.Classroom;

/// <summary>What a device is on a student: the wristband, the over-garment, the chair seat, the foot mat.</summary>
internal enum ClassroomRole
{
    Wrist,
    Garment,
    Seat,
    Foot,
}

/// <summary>One device of one student: its serial, topic and how many channels (sensors) it has.</summary>
internal sealed record ClassroomDevice(int Student, ClassroomRole Role, string Hub, string Serial, string Topic, ReadingKind Kind, int Channels);

/// <summary>
/// One sensor: a channel of a device. It publishes its readings in order of <c>ts</c>; the readings it has published
/// and not yet seen committed wait in <see cref="Pending"/> (ts in microseconds, the Stopwatch time the message
/// carrying it was due), which the <see cref="ClassroomPoller"/> drains as it finds them in the database.
/// </summary>
internal sealed class ClassroomSensor(int id, ClassroomDevice device, int channel)
{
    private readonly Queue<(long TsMicros, long DueTicks)> _pending = new();

    public int Id { get; } = id;

    public ClassroomDevice Device { get; } = device;

    public int Channel { get; } = channel;

    /// <summary>Guards <see cref="Pending"/> (the publisher adds, the poller takes).</summary>
    public Lock Gate { get; } = new();

    /// <summary>Published, not yet seen committed, oldest first (take <see cref="Gate"/>).</summary>
    public Queue<(long TsMicros, long DueTicks)> Pending => _pending;

    /// <summary>The last ts given to a reading of this sensor (publisher only).</summary>
    public long LastTsMicros { get; set; }

    /// <summary>Readings of this sensor the generator has made (publisher only).</summary>
    public long Generated { get; set; }

    public void Published(long tsMicros, long dueTicks)
    {
        lock (Gate)
        {
            _pending.Enqueue((tsMicros, dueTicks));
        }
    }
}

/// <summary>
/// The simulated class: per student a hub and four devices, the student's sensors spread over them as
/// <see cref="Split"/> says, named after the run so that a run's rows can be told from any others in the database.
/// </summary>
internal sealed class ClassroomLayout
{
    private ClassroomLayout(string run, int students, int sensorsPerStudent, IReadOnlyList<ClassroomDevice> devices, IReadOnlyList<ClassroomSensor> sensors)
    {
        Run = run;
        Students = students;
        SensorsPerStudent = sensorsPerStudent;
        Devices = devices;
        Sensors = sensors;
    }

    public string Run { get; }

    public int Students { get; }

    public int SensorsPerStudent { get; }

    public IReadOnlyList<ClassroomDevice> Devices { get; }

    public IReadOnlyList<ClassroomSensor> Sensors { get; }

    /// <summary>Every device serial of the run starts with this.</summary>
    public string SerialPrefix => Run + "-";

    /// <summary>
    /// How a student's sensors are spread over the devices. The wristband is one sensor (channel 0: heart rate,
    /// skin temperature, and blood pressure every fourth reading); the other sensors go 6 : 9 : 4 to location tags on
    /// the over-garment (head sway), chair-seat pressure cells and foot-mat pressure cells, so the default 20 are
    /// 1 wristband + 6 garment tags + 9 seat cells (3 x 3) + 4 foot cells (2 x 2). Fewer sensors keep the proportions
    /// (5: 1 + 1 + 2 + 1); one sensor is the wristband alone.
    /// </summary>
    public static (int Wrist, int Garment, int Seat, int Foot) Split(int sensors)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(sensors, 1);
        int rest = sensors - 1;
        int garment = (int)Math.Round(rest * 6 / 19.0, MidpointRounding.AwayFromZero);
        int foot = (int)Math.Round(rest * 4 / 19.0, MidpointRounding.AwayFromZero);
        return (1, garment, rest - garment - foot, foot);
    }

    public static ClassroomLayout Create(string run, int students, int sensorsPerStudent, string topicPrefix = "saito")
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(students, 1);
        var (wrist, garment, seat, foot) = Split(sensorsPerStudent);
        var devices = new List<ClassroomDevice>();
        var sensors = new List<ClassroomSensor>();
        for (int student = 0; student < students; student++)
        {
            string hub = $"{run}-hub{student:D2}";
            foreach (var (role, kind, channels, name) in new[]
                     {
                         (ClassroomRole.Wrist, ReadingKind.Biosensor, wrist, "wrist"),
                         (ClassroomRole.Garment, ReadingKind.Location, garment, "coat"),
                         (ClassroomRole.Seat, ReadingKind.Pressure, seat, "seat"),
                         (ClassroomRole.Foot, ReadingKind.Pressure, foot, "foot"),
                     })
            {
                if (channels == 0)
                {
                    continue;
                }

                string serial = $"{run}-s{student:D2}-{name}";
                var device = new ClassroomDevice(student, role, hub, serial, $"{topicPrefix}/{hub}/{serial}/{Saito.Readings.ReadingKinds.Name(kind)}", kind, channels);
                devices.Add(device);
                for (int channel = 0; channel < channels; channel++)
                {
                    sensors.Add(new ClassroomSensor(sensors.Count, device, channel));
                }
            }
        }

        return new ClassroomLayout(run, students, sensorsPerStudent, devices, sensors);
    }
}

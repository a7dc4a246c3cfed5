using System.Globalization;
using System.Text;

namespace Saito.LoadTest.Classroom;

/// <summary>
/// Plausible readings for a simulated class, repeatable from a seed. What a student does is a function of time
/// (seconds since the run started, from the publisher's schedule, not the wall clock): each student gets seeded
/// traits (resting heart rate, blood pressure, skin temperature, seat, body weight, sway rhythm) and seeded events
/// drawn per time window (a tachycardia episode, standing meditation, a fidget). Each sensor adds its own seeded
/// noise. Every value stays inside Saito's validation ranges (docs/protocol.md, <c>ReadingLimits</c>).
/// <list type="bullet">
/// <item>Wristband: heart rate around the student's resting rate (70-95 beats/min), a slow drift, and now and then
/// (about one 30 s window in twelve) an episode where it climbs to 1.8-2.6 times resting and decays over ~20 s;
/// skin temperature 33-34.2 °C drifting, a little warmer during an episode; blood pressure every fourth reading,
/// following the heart rate.</item>
/// <item>Garment location tags: the student's seat in a 4-column room, each tag's place on the upper body, and the
/// head sway (two sines per axis, 1-3 cm at the head, 4-11 s periods) scaled by the tag's height above the hips;
/// 45 cm higher while standing (a quarter of 90 s windows); 3 mm of noise.</item>
/// <item>Seat and foot-mat cells: the body's weight spread over the cells, shifted towards where the body leans
/// (sway plus fidgets); the seat empties and the foot mat takes the weight while standing.</item>
/// </list>
/// </summary>
internal sealed class ClassroomValues
{
    private readonly Student[] _students;
    private readonly Random[] _noise;
    private readonly ulong _seed;

    public ClassroomValues(ClassroomLayout layout, int seed)
    {
        ArgumentNullException.ThrowIfNull(layout);
        _seed = (ulong)seed;
        _students = Enumerable.Range(0, layout.Students).Select(s => new Student(_seed, s)).ToArray();
        _noise = layout.Sensors.Select(s => new Random(HashCode.Combine(seed, s.Id, 0x5a17))).ToArray();
    }

    /// <summary>
    /// Appends one reading of <paramref name="sensor"/> at <paramref name="t"/> seconds into the run as a Saito JSON
    /// object, with <c>ts</c> (epoch milliseconds to the microsecond) and <c>ch</c>. Only the sensor's publisher calls
    /// this for a sensor (its noise generator is not shared).
    /// </summary>
    public void Append(StringBuilder json, ClassroomSensor sensor, double t, long tsMicros)
    {
        var student = _students[sensor.Device.Student];
        var noise = _noise[sensor.Id];
        long sequence = sensor.Generated++;
        json.Append(CultureInfo.InvariantCulture, $"{{\"ts\":{tsMicros / 1000}.{tsMicros % 1000:D3},\"ch\":{sensor.Channel}");
        switch (sensor.Device.Role)
        {
            case ClassroomRole.Wrist:
                AppendBiosensor(json, student, noise, t, sequence);
                break;
            case ClassroomRole.Garment:
                AppendLocation(json, student, noise, t, sensor.Channel);
                break;
            default:
                AppendPressure(json, student, noise, t, sensor.Device.Role, sensor.Channel, sensor.Device.Channels);
                break;
        }

        json.Append('}');
    }

    private static void AppendBiosensor(StringBuilder json, Student s, Random noise, double t, long sequence)
    {
        double episode = s.Episode(t);
        double hr = s.RestingHr * (1 + ((s.EpisodePeak - 1) * episode)) + (3 * Math.Sin((2 * Math.PI * t / 97) + s.Phase0)) + Gauss(noise, 1.5);
        hr = Math.Clamp(hr, 35, 240);
        double temp = s.SkinTemp + (0.3 * Math.Sin((2 * Math.PI * t / 300) + s.Phase1)) + (0.8 * episode) + Gauss(noise, 0.05);
        json.Append(CultureInfo.InvariantCulture, $",\"hr\":{hr:F1},\"temp\":{Math.Clamp(temp, 25, 42):F2}");
        if (sequence % 4 == 0)
        {
            double rise = hr - s.RestingHr;
            double sys = Math.Clamp(s.Systolic + (0.35 * rise) + Gauss(noise, 2), 70, 220);
            double dia = Math.Clamp(s.Diastolic + (0.15 * rise) + Gauss(noise, 1.5), 40, sys - 15);
            json.Append(CultureInfo.InvariantCulture, $",\"sys\":{sys:F0},\"dia\":{dia:F0}");
        }
    }

    /// <summary>Tag places on the upper body (metres from the seat's centre: x right, y back, z up from the floor, seated).</summary>
    private static readonly (double X, double Y, double Z)[] s_tags =
    [
        (0.00, 0.07, 1.00), // collar, back
        (0.00, -0.07, 0.98), // collar, front
        (-0.17, 0.00, 0.95), // left shoulder
        (0.17, 0.00, 0.95), // right shoulder
        (0.00, 0.10, 0.85), // upper back
        (0.00, 0.05, 1.15), // hood, at the head
    ];

    private const double HipHeight = 0.50;
    private const double HeadHeight = 1.15;

    private static void AppendLocation(StringBuilder json, Student s, Random noise, double t, int channel)
    {
        var tag = s_tags[channel % s_tags.Length];
        double extra = 0.02 * (channel / s_tags.Length); // more tags than places: a little further down the sleeve
        var (swayX, swayY) = s.Lean(t);
        double standing = s.Standing(t);
        double reach = (tag.Z - HipHeight) / (HeadHeight - HipHeight);
        double x = s.SeatX + tag.X + extra + (swayX * reach) + Gauss(noise, 0.003);
        double y = s.SeatY + tag.Y + (swayY * reach) + Gauss(noise, 0.003);
        double z = tag.Z - extra + (0.45 * standing) - (((swayX * swayX) + (swayY * swayY)) * reach / (2 * (HeadHeight - HipHeight))) + Gauss(noise, 0.003);
        json.Append(CultureInfo.InvariantCulture, $",\"x\":{x:F3},\"y\":{y:F3},\"z\":{z:F3}");
    }

    private static void AppendPressure(StringBuilder json, Student s, Random noise, double t, ClassroomRole role, int channel, int channels)
    {
        // Cells in a grid (3 x 3 for 9 cells, 2 x 2 for 4), at u, v in -1..1 across the mat.
        int columns = (int)Math.Ceiling(Math.Sqrt(channels));
        int rows = (channels + columns - 1) / columns;
        double u = columns == 1 ? 0 : ((2.0 * (channel % columns)) / (columns - 1)) - 1;
        double v = rows == 1 ? 0 : ((2.0 * (channel / columns)) / (rows - 1)) - 1;
        var (leanX, leanY) = s.Lean(t);
        double standing = s.Standing(t);
        double shift = Math.Clamp(((leanX * u) + (leanY * v)) / 0.05, -0.9, 0.9); // 5 cm of lean moves most of the load
        double profile = 1.2 - (0.3 * ((u * u) + (v * v)) / 2);
        double kpa = role == ClassroomRole.Seat
            ? ((1 - standing) * 4.5 * s.Weight * profile * (1 + (0.8 * shift))) + (standing * 0.05)
            : (((1 - standing) * 2.5) + (standing * 18)) * s.Weight * profile * (1 + (0.5 * shift));
        kpa = Math.Clamp(kpa + Gauss(noise, 0.08), 0, 900);
        json.Append(CultureInfo.InvariantCulture, $",\"kpa\":{kpa:F2}");
    }

    private static double Gauss(Random random, double sigma)
    {
        double u1 = 1.0 - random.NextDouble();
        double u2 = random.NextDouble();
        return sigma * Math.Sqrt(-2.0 * Math.Log(u1)) * Math.Cos(2.0 * Math.PI * u2);
    }

    /// <summary>SplitMix64: a repeatable 64-bit hash, for the seeded traits and the per-window events.</summary>
    internal static ulong Mix(ulong x)
    {
        x += 0x9E3779B97F4A7C15UL;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
        return x ^ (x >> 31);
    }

    /// <summary>A repeatable number in [0, 1) from the seed, the student and a salt.</summary>
    internal static double Uniform(ulong seed, int student, long salt) =>
        (Mix(Mix(seed ^ ((ulong)student << 40)) ^ (ulong)salt) >> 11) * (1.0 / (1UL << 53));

    /// <summary>A student's traits and, as functions of time, what the student is doing.</summary>
    private sealed class Student
    {
        private const long TraitSalt = 1L << 32;
        private const long EpisodeSalt = 2L << 32;
        private const long StandSalt = 3L << 32;
        private const long FidgetSalt = 4L << 32;
        private readonly ulong _seed;
        private readonly int _index;
        private readonly double[] _swayAmplitude = new double[4];
        private readonly double[] _swayPeriod = new double[4];
        private readonly double[] _swayPhase = new double[4];

        public Student(ulong seed, int index)
        {
            _seed = seed;
            _index = index;
            RestingHr = 70 + (25 * Trait(0));
            EpisodePeak = 1.8 + (0.8 * Trait(1));
            SkinTemp = 33.0 + (1.2 * Trait(2));
            Systolic = 100 + (15 * Trait(3));
            Diastolic = 60 + (10 * Trait(4));
            Weight = 0.8 + (0.4 * Trait(5));
            Phase0 = 2 * Math.PI * Trait(6);
            Phase1 = 2 * Math.PI * Trait(7);
            SeatX = 1.0 + (1.6 * (index % 4));
            SeatY = 1.0 + (1.8 * (index / 4));
            for (int i = 0; i < 4; i++)
            {
                _swayAmplitude[i] = 0.005 + (0.01 * Trait(10 + i)); // two sines per axis: 1-3 cm together at the head
                _swayPeriod[i] = 4 + (7 * Trait(20 + i));
                _swayPhase[i] = 2 * Math.PI * Trait(30 + i);
            }
        }

        public double RestingHr { get; }
        public double EpisodePeak { get; }
        public double SkinTemp { get; }
        public double Systolic { get; }
        public double Diastolic { get; }
        public double Weight { get; }
        public double Phase0 { get; }
        public double Phase1 { get; }
        public double SeatX { get; }
        public double SeatY { get; }

        private double Trait(int n) => Uniform(_seed, _index, TraitSalt + n);

        /// <summary>0 normally; during a tachycardia episode rises to 1 over 5 s and decays over ~20 s (30 s windows, one in twelve).</summary>
        public double Episode(double t)
        {
            double level = 0;
            long window = (long)Math.Floor(t / 30);
            for (long w = window - 1; w <= window; w++)
            {
                if (w < 0 || Uniform(_seed, _index, EpisodeSalt + (2 * w)) >= 1.0 / 12)
                {
                    continue;
                }

                double since = t - ((w * 30) + (20 * Uniform(_seed, _index, EpisodeSalt + (2 * w) + 1)));
                if (since >= 0)
                {
                    level = Math.Max(level, since < 5 ? since / 5 : Math.Exp(-(since - 5) / 20));
                }
            }

            return level;
        }

        /// <summary>1 while standing (a quarter of 90 s windows), 0 seated, with 2 s to stand up or sit down.</summary>
        public double Standing(double t)
        {
            long window = (long)Math.Floor(t / 90);
            bool now = IsStanding(window);
            double into = t - (window * 90);
            if (into < 2 && now != IsStanding(window - 1))
            {
                double f = into / 2;
                return now ? f : 1 - f;
            }

            return now ? 1 : 0;
        }

        private bool IsStanding(long window) => window >= 0 && Uniform(_seed, _index, StandSalt + window) < 0.25;

        /// <summary>How far the head is from its ideal place (metres, x and y): the sway, plus a fidget in one 10 s window in five.</summary>
        public (double X, double Y) Lean(double t)
        {
            double x = (_swayAmplitude[0] * Math.Sin((2 * Math.PI * t / _swayPeriod[0]) + _swayPhase[0]))
                + (_swayAmplitude[1] * Math.Sin((2 * Math.PI * t / _swayPeriod[1]) + _swayPhase[1]));
            double y = (_swayAmplitude[2] * Math.Sin((2 * Math.PI * t / _swayPeriod[2]) + _swayPhase[2]))
                + (_swayAmplitude[3] * Math.Sin((2 * Math.PI * t / _swayPeriod[3]) + _swayPhase[3]));
            long window = (long)Math.Floor(t / 10);
            if (window >= 0 && Uniform(_seed, _index, FidgetSalt + (3 * window)) < 0.2)
            {
                double into = (t - (window * 10)) / 10;
                double bump = Math.Sin(Math.PI * into); // leans over and comes back within the window
                x += bump * 0.06 * ((2 * Uniform(_seed, _index, FidgetSalt + (3 * window) + 1)) - 1);
                y += bump * 0.06 * ((2 * Uniform(_seed, _index, FidgetSalt + (3 * window) + 2)) - 1);
            }

            return (x, y);
        }
    }
}

using Saito.Live.Analytics;

namespace Saito.Live.Tests.Analytics;

/// <summary>Synthetic head traces: a position as a function of seconds since <see cref="Start"/>, sampled at a fixed rate.</summary>
internal static class SwayTrace
{
    public static readonly DateTime Start = new(2026, 3, 2, 9, 0, 0, DateTimeKind.Utc);

    public static readonly HeadPosition Seat = new(2.0, 3.0, 1.2);

    public static DateTime At(double seconds) => Start.AddTicks((long)Math.Round(seconds * TimeSpan.TicksPerSecond));

    /// <summary>Samples from <paramref name="from"/> (inclusive) to <paramref name="to"/> (exclusive) seconds at <paramref name="hertz"/>.</summary>
    public static void Feed(SwayTracker tracker, double from, double to, double hertz, Func<double, HeadPosition> at,
        Posture posture = Posture.Sitting)
    {
        var count = (int)Math.Round((to - from) * hertz);
        for (var i = 0; i < count; i++)
        {
            var t = from + (i / hertz);
            var p = at(t);
            tracker.Add(At(t), p.X, p.Y, p.Z, posture);
        }
    }

    public static HeadPosition Still(double seconds) => Seat;

    public static HeadPosition Offset(double dx, double dy = 0, double dz = 0) => new(Seat.X + dx, Seat.Y + dy, Seat.Z + dz);
}

using Saito.Live.Alerts;

namespace Saito.Live.Tests.Alerts;

/// <summary>
/// One student in one engine, replayed in reading time: readings arrive live (now = their timestamp unless
/// told otherwise) and the engine is ticked once a second, as the server does. Times are seconds after
/// <see cref="T0"/>, the session's start; every event the engine emits is collected in <see cref="Events"/>.
/// </summary>
internal sealed class AlertScenario
{
    public static readonly DateTime T0 = new(2026, 3, 2, 8, 0, 0, DateTimeKind.Utc);
    public const int Owner = 7;
    public const int Band = 101;
    public const int Mat = 102;

    private int _ids;
    private double _tickedTo = -1;

    public AlertScenario(AlertOptions? options = null, AlertThresholds? thresholds = null, bool seatMat = false, bool checkIn = true)
    {
        Options = options ?? new AlertOptions();
        Engine = new AlertEngine(Options, () => new Guid(++_ids, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
        Engine.SetStudent(Owner, thresholds ?? AlertThresholds.None, seatMat);
        Engine.SetSession(Owner, T0, T0.AddHours(2));
        Engine.SetDevices(Owner, [Band], T0);
        if (checkIn)
        {
            Engine.SetCheckedIn(Owner, true, T0, T0);
        }
    }

    public AlertOptions Options { get; }
    public AlertEngine Engine { get; }
    public List<AlertEvent> Events { get; } = [];

    public static DateTime At(double seconds) => T0.AddSeconds(seconds);

    public static double Seconds(AlertEvent e) => (e.At - T0).TotalSeconds;

    /// <summary>Heart-rate readings at <paramref name="hz"/> over [from, to), ticking every whole second on the way.</summary>
    public AlertScenario Heart(double from, double to, Func<double, double?> bpm, double hz = 4, int owner = Owner)
    {
        for (var i = 0; from + (i / hz) < to; i++)
        {
            var t = from + (i / hz);
            TickTo(t);
            Engine.ObserveHeart(owner, Band, At(t), bpm(t), null, At(t));
        }
        Collect();
        return this;
    }

    /// <summary>Constant heart rate over [from, to) at 4 Hz.</summary>
    public AlertScenario Heart(double from, double to, double bpm) => Heart(from, to, _ => bpm);

    /// <summary>Skin temperature readings at 1 Hz over [from, to).</summary>
    public AlertScenario Temperature(double from, double to, Func<double, double> celsius)
    {
        for (var t = from; t < to; t++)
        {
            TickTo(t);
            Engine.ObserveHeart(Owner, Band, At(t), null, celsius(t), At(t));
        }
        Collect();
        return this;
    }

    public AlertScenario Seat(double at, bool occupied)
    {
        TickTo(at);
        Engine.ObserveSeat(Owner, Mat, At(at), occupied, At(at));
        Collect();
        return this;
    }

    /// <summary>Ticks once a second up to and including <paramref name="seconds"/>.</summary>
    public AlertScenario TickTo(double seconds)
    {
        var next = Math.Floor(_tickedTo) + 1;
        for (; next <= seconds; next++)
        {
            Engine.Tick(At(next));
        }
        _tickedTo = Math.Max(_tickedTo, seconds);
        Collect();
        return this;
    }

    public AlertScenario Collect()
    {
        Engine.DrainEvents(Events);
        return this;
    }

    public List<AlertEvent> Of(AlertKind kind) => Events.Where(e => e.Kind == kind).ToList();

    public List<AlertEvent> Of(AlertKind kind, AlertEventType type) => Events.Where(e => e.Kind == kind && e.Type == type).ToList();

    public AlertEvent Single(AlertKind kind, AlertEventType type) => Of(kind, type).ShouldHaveSingleItem();
}

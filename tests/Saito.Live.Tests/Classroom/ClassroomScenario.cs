using Saito.Live.Alerts;
using Saito.Live.Analytics;
using Saito.Live.Classroom;
using Saito.Readings;

namespace Saito.Live.Tests.Classroom;

/// <summary>
/// A <see cref="LiveView"/> and the registry it is given, built up as staff would: classes in session from
/// <see cref="T0"/> for two hours, students on their rosters, devices assigned. Times are seconds after
/// <see cref="T0"/>; alert ids are 1, 2, 3... in the order raised.
/// </summary>
internal sealed class ClassroomScenario
{
    public static readonly DateTime T0 = new(2026, 3, 2, 8, 0, 0, DateTimeKind.Utc);
    public const int HeadChannel = 3;

    private readonly Dictionary<int, LiveClass> _classes = [];
    private readonly Dictionary<int, LiveStudent> _students = [];
    private readonly Dictionary<int, LiveDevice> _devices = [];
    private int _ids;

    public ClassroomScenario(AlertOptions? alerts = null)
    {
        Alerts = alerts ?? new AlertOptions();
        View = new LiveView(Alerts, new SwayOptions(), new MatOptions(), HeadChannel, () => new Guid(++_ids, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }

    public AlertOptions Alerts { get; }

    public LiveView View { get; }

    public static DateTime At(double seconds) => T0.AddSeconds(seconds);

    public static Guid AlertId(int n) => new(n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /// <summary>A class, in session from <see cref="T0"/> for two hours unless <paramref name="inSession"/> is false.</summary>
    public ClassroomScenario Class(int id, bool inSession = true)
    {
        _classes[id] = new LiveClass(id, "Class " + id, null, [], inSession ? new LiveSession(id * 10, T0, T0.AddHours(2)) : null);
        return this;
    }

    /// <summary>A student on the rosters of <paramref name="classes"/>, checked in at <paramref name="checkedInAt"/> seconds unless null.</summary>
    public ClassroomScenario Student(int ownerId, string name, int[] classes, double? checkedInAt = 0, AlertThresholds? thresholds = null)
    {
        _students[ownerId] = new LiveStudent(ownerId, name, "ext-" + ownerId, classes,
            checkedInAt is { } s ? new LiveCheckIn(At(s), null) : null, thresholds ?? AlertThresholds.None);
        foreach (int c in classes)
        {
            var k = _classes[c];
            _classes[c] = k with { Roster = [.. k.Roster.Where(o => o != ownerId), ownerId] };
        }

        return this;
    }

    public ClassroomScenario CheckOut(int ownerId, double at)
    {
        var s = _students[ownerId];
        _students[ownerId] = s with { CheckIn = s.CheckIn! with { CheckedOutAt = At(at) } };
        return this;
    }

    /// <summary>Off every roster (the registry no longer lists them).</summary>
    public ClassroomScenario Without(int ownerId)
    {
        _students.Remove(ownerId);
        foreach (var id in _classes.Keys.ToList())
        {
            _classes[id] = _classes[id] with { Roster = [.. _classes[id].Roster.Where(o => o != ownerId)] };
        }

        foreach (var d in _devices.Values.Where(d => d.OwnerId == ownerId).ToList())
        {
            _devices.Remove(d.DeviceId);
        }

        return this;
    }

    /// <summary>The device is <paramref name="ownerId"/>'s from <paramref name="from"/> seconds (a hand-over when it was someone else's).</summary>
    public ClassroomScenario Device(int deviceId, string serial, string kind, int ownerId, double from = -3600)
    {
        _devices[deviceId] = new LiveDevice(deviceId, serial, kind, ownerId, At(from));
        return this;
    }

    /// <summary>Gives the view the registry as built so far, at <paramref name="now"/> seconds.</summary>
    public IReadOnlyList<ThresholdProblem> Apply(double now = 0) =>
        View.SetRegistry(new LiveRegistry(new Dictionary<int, LiveClass>(_classes), new Dictionary<int, LiveStudent>(_students), new Dictionary<int, LiveDevice>(_devices)), At(now));

    /// <summary>The registry read again at <paramref name="now"/> seconds, and every tile taken then (a refresh marks them all changed).</summary>
    public ClassroomScenario Refresh(double now)
    {
        Apply(now);
        View.TakeChangedTiles(At(now));
        return this;
    }

    /// <summary>A heart rate (and optionally the rest) taken at <paramref name="taken"/>, arriving at <paramref name="received"/> (default: when taken).</summary>
    public ClassroomScenario Biosensor(int deviceId, double taken, double? hr, double? sys = null, double? dia = null, double? temp = null, double? received = null)
    {
        var at = received ?? taken;
        View.Observe(Reading.Biosensor(deviceId, 0, At(taken), At(at), hr, sys, dia, temp), At(at));
        return this;
    }

    public ClassroomScenario Location(int deviceId, int channel, double taken, double x, double y, double z)
    {
        View.Observe(Reading.Location(deviceId, channel, At(taken), At(taken), x, y, z), At(taken));
        return this;
    }

    /// <summary>A whole 16-cell frame of a mat at <paramref name="taken"/>, every cell at <paramref name="kpa"/>.</summary>
    public ClassroomScenario MatFrame(int deviceId, double taken, double kpa)
    {
        for (int cell = 0; cell < 16; cell++)
        {
            View.Observe(Reading.Pressure(deviceId, cell, At(taken), At(taken), kpa), At(taken));
        }

        return this;
    }

    /// <summary>Ticks the engine every second from <paramref name="from"/> to <paramref name="to"/> seconds.</summary>
    public ClassroomScenario TickTo(double from, double to)
    {
        for (var t = from; t <= to; t++)
        {
            View.Tick(At(t));
        }

        return this;
    }

    public List<LiveAlertEvent> Drain()
    {
        var events = new List<LiveAlertEvent>();
        View.DrainAlerts(events);
        return events;
    }

    /// <summary>The changed tiles at <paramref name="now"/> seconds, by class id.</summary>
    public Dictionary<int, ClassTiles> Take(double now) => View.TakeChangedTiles(At(now)).ToDictionary(c => c.ClassId);

    /// <summary>The student's tile as last taken (for those who see blood pressure, or not).</summary>
    public TileView Tile(int ownerId, bool seesBloodPressure = true) =>
        seesBloodPressure ? View.Tiles[ownerId].Full : View.Tiles[ownerId].WithoutBloodPressure;
}

using System.Collections.Concurrent;
using Saito.Live.Alerts;
using Saito.Live.Analytics;
using Saito.Readings;

namespace Saito.Live.Classroom;

/// <summary>
/// The live class model: who is watched (<see cref="SetRegistry"/>), each student's latest vitals, head sway and seat
/// folded from committed readings (<see cref="Observe"/>), the <see cref="AlertEngine"/> fed from them, and the tiles
/// and alert events the dashboards are sent (<see cref="TakeChangedTiles"/>, <see cref="DrainAlerts"/>). No clock, no
/// I/O: every call is given <c>now</c> (UTC), so a scenario replays exactly. One thread makes every call; any thread
/// may read <see cref="Tiles"/>, <see cref="ActiveAlerts"/> and <see cref="Registry"/>, which are replaced, never changed.
/// The server's hosting loop (Saito.Server's <c>LiveClassroom</c>) reads the registry, feeds readings and pushes.
/// </summary>
public sealed class LiveView
{
    private readonly AlertEngine _engine;
    private readonly int _headChannel;
    private readonly SwayOptions _swayOptions;
    private readonly MatOptions _matOptions;
    private readonly TimeSpan _silentAfter;
    private readonly Dictionary<int, WatchedStudent> _students = [];
    private readonly HashSet<int> _dirty = [];
    private readonly List<AlertEvent> _events = [];
    private readonly List<ActiveAlert> _active = [];
    private readonly ConcurrentDictionary<int, LiveTile> _tiles = new();
    private LiveRegistry _registry = LiveRegistry.Empty;
    private IReadOnlyList<AlertView> _activeAlerts = [];

    /// <param name="alerts">The alert engine's settings; <see cref="AlertOptions.SilentSensorSeconds"/> also marks a tile's device silent.</param>
    /// <param name="sway">Head sway settings, one tracker per student.</param>
    /// <param name="mat">Seat mat settings, one tracker per mat.</param>
    /// <param name="headChannel">The channel of a location device that is the head tag (Dashboard:HeadChannel).</param>
    /// <param name="newAlertId">For tests: a source of alert ids (default <see cref="Guid.CreateVersion7()"/>).</param>
    public LiveView(AlertOptions alerts, SwayOptions sway, MatOptions mat, int headChannel, Func<Guid>? newAlertId = null)
    {
        ArgumentNullException.ThrowIfNull(alerts);
        ArgumentNullException.ThrowIfNull(sway);
        ArgumentNullException.ThrowIfNull(mat);
        _engine = new AlertEngine(alerts, newAlertId);
        _swayOptions = sway;
        _matOptions = mat;
        _headChannel = headChannel;
        _silentAfter = TimeSpan.FromSeconds(alerts.SilentSensorSeconds);
    }

    /// <summary>Each student's tile as last taken, for those who see blood pressure and for those who do not.</summary>
    public IReadOnlyDictionary<int, LiveTile> Tiles => _tiles;

    /// <summary>The alerts open now, as of the last <see cref="DrainAlerts"/>.</summary>
    public IReadOnlyList<AlertView> ActiveAlerts => Volatile.Read(ref _activeAlerts);

    /// <summary>Who is where, as last given to <see cref="SetRegistry"/>.</summary>
    public LiveRegistry Registry => Volatile.Read(ref _registry);

    /// <summary>Whether some tile changed since the last <see cref="TakeChangedTiles"/>.</summary>
    public bool HasChangedTiles => _dirty.Count > 0;

    /// <summary>
    /// Who is where now: students new to a roster are watched, those on none any more are dropped (their open alerts
    /// close), and each student's devices, session, check-in and thresholds go to the engine. Every student's tile is
    /// marked changed. Returns the students whose thresholds do not fit together; they are watched with the defaults.
    /// </summary>
    public IReadOnlyList<ThresholdProblem> SetRegistry(LiveRegistry registry, DateTime now)
    {
        ArgumentNullException.ThrowIfNull(registry);
        Volatile.Write(ref _registry, registry);
        var problems = new List<ThresholdProblem>();
        var sessions = new Dictionary<int, LiveSession>();
        foreach (var c in registry.Classes.Values)
        {
            if (c.Session is { } s)
            {
                foreach (int owner in c.Roster)
                {
                    sessions[owner] = s;
                }
            }
        }

        var devicesByOwner = registry.Devices.Values.GroupBy(d => d.OwnerId).ToDictionary(g => g.Key, g => g.ToList());
        foreach (var info in registry.Students.Values)
        {
            if (!_students.TryGetValue(info.OwnerId, out var student))
            {
                student = new WatchedStudent(info, new SwayTracker(_swayOptions));
                _students[info.OwnerId] = student;
            }

            student.Info = info;
            var devices = devicesByOwner.GetValueOrDefault(info.OwnerId) ?? [];
            foreach (var left in student.Devices.Where(d => !devices.Any(n => n.DeviceId == d.DeviceId)))
            {
                // Handed over or unassigned: what it measured was someone's, maybe not this student's any more, and a
                // value that stays on the tile would look like theirs. The student's other devices refill it.
                student.Forget(left.DeviceId);
            }

            student.Devices = devices;
            bool hasSeat = devices.Any(d => WatchedStudent.IsSeatMat(d.Kind));
            try
            {
                _engine.SetStudent(info.OwnerId, info.Thresholds, hasSeat);
            }
            catch (ArgumentException ex)
            {
                // A clinician's thresholds that do not fit with the defaults (a minimum above the maximum): watch with the defaults.
                problems.Add(new ThresholdProblem(info.OwnerId, ex.Message));
                _engine.SetStudent(info.OwnerId, AlertThresholds.None, hasSeat);
            }

            if (sessions.TryGetValue(info.OwnerId, out var session))
            {
                _engine.SetSession(info.OwnerId, session.StartsAt.UtcDateTime, session.EndsAt.UtcDateTime);
            }

            var checkIn = info.CheckIn;
            bool checkedIn = checkIn is not null && checkIn.CheckedOutAt is null;
            var checkInAt = checkIn is null ? now : (checkIn.CheckedOutAt ?? checkIn.CheckedInAt).UtcDateTime;
            _engine.SetCheckedIn(info.OwnerId, checkedIn, checkInAt, now);
            _engine.SetDevices(info.OwnerId, [.. devices.Select(d => d.DeviceId)], now);
            _dirty.Add(info.OwnerId);
        }

        foreach (int gone in _students.Keys.Where(id => !registry.Students.ContainsKey(id)).ToList())
        {
            _engine.RemoveStudent(gone, now);
            _students.Remove(gone);
            _tiles.TryRemove(gone, out _);
        }

        return problems;
    }

    /// <summary>
    /// One committed reading. A device not assigned to a watched student is passed over. A reading taken before the
    /// device became the student's (a hub catching up after a hand-over) still tells the engine the device is alive,
    /// but is the previous owner's, so it changes nothing on the tile.
    /// </summary>
    public void Observe(in Reading reading, DateTime now)
    {
        if (!_registry.Devices.TryGetValue(reading.DeviceId, out var device) || !_students.TryGetValue(device.OwnerId, out var student))
        {
            return;
        }

        int owner = device.OwnerId;
        var ts = reading.Timestamp;
        // Alive when its message arrives, whatever time its readings carry: no silent-sensor alert for a device that is sending.
        _engine.ObserveDevice(owner, device.DeviceId, reading.ReceivedAt, now);
        if (ts < device.From)
        {
            return;
        }

        student.Vitals.Observe(device.DeviceId, reading);
        switch (reading.Kind)
        {
            case ReadingKind.Biosensor:
                _engine.ObserveHeart(owner, device.DeviceId, ts, reading.HeartRate, reading.SkinTemperature, now);
                break;
            case ReadingKind.Location when reading.Channel == _headChannel:
                student.Sway.Add(ts, reading.V0 ?? 0, reading.V1 ?? 0, reading.V2 ?? 0, student.Posture);
                break;
            case ReadingKind.Pressure when WatchedStudent.IsSeatMat(device.Kind):
                if (student.AddSeatCell(device.DeviceId, _matOptions, reading) is { } frame)
                {
                    _engine.ObserveSeat(owner, device.DeviceId, frame.FrameUtc, frame.Occupied, now);
                }

                break;
            default:
                break;
        }

        _dirty.Add(owner);
    }

    /// <summary>Lets time-driven rules (silent sensor, check-in, seat, escalation, session end) fire.</summary>
    public void Tick(DateTime now) => _engine.Tick(now);

    /// <summary>Acknowledges an open alert; false when it is not open.</summary>
    public bool Acknowledge(Guid alertId, string userName, DateTime now) => _engine.Acknowledge(alertId, userName, now);

    /// <summary>
    /// Hands over the alert events since the last call, in order, and refreshes <see cref="ActiveAlerts"/> when there
    /// were any. Each event's student's tile is marked changed (its count of open alerts, its silent devices).
    /// </summary>
    public int DrainAlerts(List<LiveAlertEvent> into)
    {
        ArgumentNullException.ThrowIfNull(into);
        _events.Clear();
        if (_engine.DrainEvents(_events) == 0)
        {
            return 0;
        }

        var registry = _registry;
        _active.Clear();
        _engine.CopyActive(_active);
        var open = _active.Select(a => AlertViews.Of(registry, a)).ToList();
        Volatile.Write(ref _activeAlerts, open);
        foreach (var e in _events)
        {
            var student = registry.Students.GetValueOrDefault(e.OwnerId);
            var named = e with { Detail = AlertViews.WithSerials(registry, e.Detail) };
            var view = open.FirstOrDefault(a => a.Id == e.AlertId) ?? AlertViews.Of(registry, named);
            into.Add(new LiveAlertEvent(named, AlertViews.HistoryClassOf(registry, student), student?.Classes ?? [], view));
            _dirty.Add(e.OwnerId);
        }

        return _events.Count;
    }

    /// <summary>
    /// The tiles changed since the last call, by class (a class with none changed is left out), made as of
    /// <paramref name="now"/>; <see cref="Tiles"/> is updated. Those who do not see blood pressure get a tile only when
    /// what they see changed: the moment of a push would otherwise tell them a blood pressure was taken.
    /// </summary>
    public IReadOnlyList<ClassTiles> TakeChangedTiles(DateTime now)
    {
        var registry = _registry;
        var changed = new List<TileView>(_dirty.Count);
        var reducedChanged = new List<TileView>(_dirty.Count);
        var openByOwner = ActiveAlerts.GroupBy(a => a.OwnerId).ToDictionary(g => g.Key, g => (IReadOnlyList<AlertView>)[.. g.Order(AlertView.Order)]);
        foreach (int owner in _dirty)
        {
            if (_students.TryGetValue(owner, out var student))
            {
                var open = openByOwner.GetValueOrDefault(owner) ?? [];
                var tile = new LiveTile(student.Tile(now, _silentAfter, open, seesBloodPressure: true), student.Tile(now, _silentAfter, open, seesBloodPressure: false));
                changed.Add(tile.Full);
                if (!_tiles.TryGetValue(owner, out var before) || !LiveTile.SameView(before.WithoutBloodPressure, tile.WithoutBloodPressure))
                {
                    reducedChanged.Add(tile.WithoutBloodPressure);
                }

                _tiles[owner] = tile;
            }
        }

        _dirty.Clear();
        var byClass = new List<ClassTiles>();
        foreach (var c in registry.Classes.Values)
        {
            var mine = changed.Where(t => registry.Students.TryGetValue(t.OwnerId, out var s) && s.Classes.Contains(c.Id)).ToList();
            var reduced = reducedChanged.Where(t => registry.Students.TryGetValue(t.OwnerId, out var s) && s.Classes.Contains(c.Id)).ToList();
            if (mine.Count > 0)
            {
                byClass.Add(new ClassTiles(c.Id, mine, reduced));
            }
        }

        return byClass;
    }
}

/// <summary>A student's thresholds that do not fit together (<paramref name="Problem"/> says why): the defaults apply.</summary>
public sealed record ThresholdProblem(int OwnerId, string Problem);

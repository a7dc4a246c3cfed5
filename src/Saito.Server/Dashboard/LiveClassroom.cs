using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.Extensions.Options;
using Saito.Live;
using Saito.Live.Alerts;
using Saito.Live.Analytics;
using Saito.Readings;
using Saito.Registry.Hosting;

namespace Saito.Server.Dashboard;

/// <summary>
/// The live view's one thread: it takes committed readings from <see cref="LiveFeed"/>, keeps each student's
/// latest vitals, head sway and seat, feeds the <see cref="AlertEngine"/>, and hands tile changes and alert events
/// to <see cref="LivePublisher"/> (dashboards) and <see cref="AlertRecorder"/> (the alert table). Everything it
/// owns is touched only here, so none of it needs a lock; others read <see cref="Tiles"/> and
/// <see cref="ActiveAlerts"/>, which are replaced, never changed.
/// </summary>
public sealed partial class LiveClassroom : BackgroundService
{
    private readonly LiveFeed _feed;
    private readonly LiveSignal _signal;
    private readonly LivePublisher _publisher;
    private readonly AlertRecorder _recorder;
    private readonly RegistryContextFactory _contexts;
    private readonly RegistryMigrator _migrator;
    private readonly DashboardOptions _options;
    private readonly SchoolOptions _school;
    private readonly SwayOptions _swayOptions;
    private readonly MatOptions _matOptions;
    private readonly TimeProvider _time;
    private readonly ILogger<LiveClassroom> _logger;
    private readonly AlertEngine _engine;
    private readonly Channel<Acknowledgement> _acks = Channel.CreateUnbounded<Acknowledgement>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Dictionary<int, Student> _students = [];
    private readonly HashSet<int> _dirty = [];
    private readonly List<AlertEvent> _events = [];
    private readonly List<ActiveAlert> _active = [];
    private readonly ConcurrentDictionary<int, LiveTile> _tiles = new();
    private LiveRegistry _registry = LiveRegistry.Empty;
    private IReadOnlyList<AlertView> _activeAlerts = [];
    private readonly TimeSpan _silentAfter;
    private long _lastSkippedLogged;

    public LiveClassroom(LiveFeed feed, LiveSignal signal, LivePublisher publisher, AlertRecorder recorder, RegistryContextFactory contexts,
        RegistryMigrator migrator, IOptions<DashboardOptions> options, IOptions<SchoolOptions> school, IOptions<AlertOptions> alerts,
        IOptions<SwayOptions> sway, IOptions<MatOptions> mat, TimeProvider time, ILogger<LiveClassroom> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(school);
        ArgumentNullException.ThrowIfNull(alerts);
        ArgumentNullException.ThrowIfNull(sway);
        ArgumentNullException.ThrowIfNull(mat);
        _feed = feed;
        _signal = signal;
        _publisher = publisher;
        _recorder = recorder;
        _contexts = contexts;
        _migrator = migrator;
        _options = options.Value;
        _school = school.Value;
        _swayOptions = sway.Value;
        _matOptions = mat.Value;
        _time = time;
        _logger = logger;
        _engine = new AlertEngine(alerts.Value);
        _silentAfter = TimeSpan.FromSeconds(alerts.Value.SilentSensorSeconds);
    }

    /// <summary>Each student's tile as last pushed, for those who see blood pressure and for those who do not.</summary>
    public IReadOnlyDictionary<int, LiveTile> Tiles => _tiles;

    /// <summary>The alerts open now.</summary>
    public IReadOnlyList<AlertView> ActiveAlerts => Volatile.Read(ref _activeAlerts);

    /// <summary>Who is where, as last read from the registry.</summary>
    public LiveRegistry Registry => Volatile.Read(ref _registry);

    public AlertEngineCounters Counters { get; private set; }

    /// <summary>Acknowledge an alert (from a dashboard); the engine does it on its thread.</summary>
    public void Acknowledge(Guid alertId, string userName) => _acks.Writer.TryWrite(new Acknowledgement(alertId, userName));

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            await _migrator.Ready.WaitAsync(stoppingToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            LogRegistryUnavailable();
            return;
        }

        var refreshEvery = TimeSpan.FromSeconds(_options.RefreshSeconds);
        var pushEvery = TimeSpan.FromMilliseconds(_options.PushIntervalMilliseconds);
        var tickEvery = TimeSpan.FromMilliseconds(250);
        DateTime nextRefresh = DateTime.MinValue, nextTick = DateTime.MinValue, nextPush = DateTime.MinValue;
        while (!stoppingToken.IsCancellationRequested)
        {
            var now = _time.GetUtcNow().UtcDateTime;
            if (now >= nextRefresh || _signal.TakeChanged())
            {
                await RefreshAsync(now, stoppingToken);
                nextRefresh = now + refreshEvery;
            }

            int readings = DrainReadings(now);
            while (_acks.Reader.TryRead(out var ack))
            {
                _engine.Acknowledge(ack.AlertId, ack.UserName, now);
            }

            if (now >= nextTick || readings > 0)
            {
                _engine.Tick(now);
                nextTick = now + tickEvery;
            }

            await PublishEventsAsync(stoppingToken);
            if (_dirty.Count > 0 && now >= nextPush)
            {
                PushTiles(now);
                nextPush = now + pushEvery;
            }

            // Wait for readings, an acknowledgement, a registry change or the next tick; never longer than the tick.
            var wake = _dirty.Count > 0 ? Min(nextPush, nextTick) : Min(nextTick, nextRefresh);
            var delay = wake - _time.GetUtcNow().UtcDateTime;
            if (delay > TimeSpan.Zero && !_feed.Reader.TryPeek(out _) && !_acks.Reader.TryPeek(out _))
            {
                using var wait = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
                wait.CancelAfter(delay);
                try
                {
                    await Task.WhenAny(_feed.Reader.WaitToReadAsync(wait.Token).AsTask(), _acks.Reader.WaitToReadAsync(wait.Token).AsTask(),
                        _signal.WaitAsync(wait.Token));
                }
                catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
                {
                }
            }
        }
    }

    private static DateTime Min(DateTime a, DateTime b) => a < b ? a : b;

    private async Task RefreshAsync(DateTime now, CancellationToken cancellationToken)
    {
        LiveRegistry registry;
        try
        {
            await using var db = _contexts.Create();
            registry = await LiveRegistry.LoadAsync(db, _school, new DateTimeOffset(now), cancellationToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            LogRefreshFailed(ex);
            return;
        }

        Volatile.Write(ref _registry, registry);
        var sessions = new Dictionary<int, (DateTime Start, DateTime End)>();
        foreach (var c in registry.Classes.Values)
        {
            if (c.Session is { } s)
            {
                foreach (int owner in c.Roster)
                {
                    sessions[owner] = (s.StartsAt.UtcDateTime, s.EndsAt.UtcDateTime);
                }
            }
        }

        var devicesByOwner = registry.Devices.Values.GroupBy(d => d.OwnerId).ToDictionary(g => g.Key, g => g.ToList());
        foreach (var info in registry.Students.Values)
        {
            if (!_students.TryGetValue(info.OwnerId, out var student))
            {
                student = new Student(info, new SwayTracker(_swayOptions));
                _students[info.OwnerId] = student;
            }

            student.Info = info;
            var devices = devicesByOwner.GetValueOrDefault(info.OwnerId) ?? [];
            student.Devices = devices;
            bool hasSeat = devices.Any(d => IsSeatMat(d.Kind));
            var t = info.Thresholds;
            var thresholds = t is null ? AlertThresholds.None : new AlertThresholds
            {
                RestingHeartRate = t.RestingHeartRate,
                TachycardiaFactor = t.TachycardiaFactor,
                HeartRateMax = t.HeartRateMax,
                HeartRateMin = t.HeartRateMin,
                OverheatCelsius = t.OverheatCelsius,
            };
            try
            {
                _engine.SetStudent(info.OwnerId, thresholds, hasSeat);
            }
            catch (ArgumentException ex)
            {
                // A clinician's thresholds that do not fit with the defaults (a minimum above the maximum): watch with the defaults.
                LogBadThresholds(info.OwnerId, ex.Message);
                _engine.SetStudent(info.OwnerId, AlertThresholds.None, hasSeat);
            }
            if (sessions.TryGetValue(info.OwnerId, out var session))
            {
                _engine.SetSession(info.OwnerId, session.Start, session.End);
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
    }

    /// <summary>A pressure device counts as the student's seat unless it is a foot mat.</summary>
    private static bool IsSeatMat(string? kind) => kind is "pressure-mat" or "pressure" or null;

    private int DrainReadings(DateTime now)
    {
        int total = 0;
        var registry = _registry;
        while (total < 200_000 && _feed.Reader.TryRead(out var chunk))
        {
            try
            {
                foreach (ref readonly var reading in chunk.Readings)
                {
                    if (registry.Devices.TryGetValue(reading.DeviceId, out var device) && _students.TryGetValue(device.OwnerId, out var student))
                    {
                        Observe(student, device, reading, now);
                    }
                }

                total += chunk.Count;
            }
            finally
            {
                _feed.Consumed(chunk);
            }
        }

        long skipped = _feed.Skipped;
        if (skipped > _lastSkippedLogged)
        {
            LogBehind(skipped - _lastSkippedLogged, skipped);
            _lastSkippedLogged = skipped;
        }

        return total;
    }

    private void Observe(Student student, LiveDevice device, in Reading reading, DateTime now)
    {
        int owner = student.Info.OwnerId;
        var ts = reading.Timestamp;
        // A device is alive when its message arrives, whatever time its readings carry (a hub catching up is alive, even
        // with readings from before the hand-over: no silent-sensor alert for a device that is sending).
        _engine.ObserveDevice(owner, device.DeviceId, reading.ReceivedAt, now);
        if (ts < device.From)
        {
            // Taken before the device was this student's (a hub catching up after a hand-over): the previous owner's.
            return;
        }

        student.Vitals.Observe(device.DeviceId, reading);
        switch (reading.Kind)
        {
            case ReadingKind.Biosensor:
                _engine.ObserveHeart(owner, device.DeviceId, ts, reading.HeartRate, reading.SkinTemperature, now);
                break;
            case ReadingKind.Location when reading.Channel == _options.HeadChannel:
                student.Sway.Add(ts, reading.V0 ?? 0, reading.V1 ?? 0, reading.V2 ?? 0, student.Posture);
                break;
            case ReadingKind.Pressure when IsSeatMat(device.Kind):
                if (!student.Mats.TryGetValue(device.DeviceId, out var mat))
                {
                    mat = new MatTracker(_matOptions);
                    student.Mats[device.DeviceId] = mat;
                }

                var before = mat.Current;
                mat.Add(ts, reading.Channel, reading.V0 ?? 0);
                if (mat.Current is { } frame && !ReferenceEquals(before, frame))
                {
                    student.Posture = frame.Occupied ? Posture.Sitting : Posture.Standing;
                    _engine.ObserveSeat(owner, device.DeviceId, frame.FrameUtc, frame.Occupied, now);
                }

                break;
            default:
                break;
        }

        _dirty.Add(owner);
    }

    private async Task PublishEventsAsync(CancellationToken cancellationToken)
    {
        _events.Clear();
        if (_engine.DrainEvents(_events) == 0)
        {
            return;
        }

        var registry = _registry;
        _active.Clear();
        _engine.CopyActive(_active);
        var open = _active.Select(a => View(registry, a)).ToList();
        Volatile.Write(ref _activeAlerts, open);
        foreach (var e in _events)
        {
            var student = registry.Students.GetValueOrDefault(e.OwnerId);
            int? classId = student?.Classes.FirstOrDefault(c => registry.Classes.TryGetValue(c, out var k) && k.Session is not null);
            if (classId == 0)
            {
                classId = student?.Classes.Count > 0 ? student.Classes[0] : null;
            }

            var named = e with { Detail = WithSerials(registry, e.Detail) };
            await _recorder.RecordAsync(named, classId, cancellationToken);
            _dirty.Add(e.OwnerId);
            var view = open.FirstOrDefault(a => a.Id == e.AlertId) ?? View(registry, named);
            foreach (int c in student?.Classes ?? [])
            {
                _publisher.Alert(c, e.Type, view);
            }
        }
    }

    /// <summary>The engine knows devices by id; staff know them by serial ("device 4" becomes "wrist-basil").</summary>
    private static string WithSerials(LiveRegistry registry, string detail) =>
        DeviceId().Replace(detail, m => registry.Devices.TryGetValue(int.Parse(m.Groups[1].ValueSpan, System.Globalization.CultureInfo.InvariantCulture), out var d)
            ? d.Serial : m.Value);

    [System.Text.RegularExpressions.GeneratedRegex(@"\bdevice (\d{1,9})\b")]
    private static partial System.Text.RegularExpressions.Regex DeviceId();

    private static AlertView View(LiveRegistry registry, ActiveAlert a) => new(a.AlertId, a.OwnerId, NameOf(registry, a.OwnerId), AlertKinds.Name(a.Kind),
        AlertKinds.Text(a.Kind), a.Level, LevelNames.Name(a.Level), a.Value, WithSerials(registry, a.Detail), new DateTimeOffset(a.RaisedAt), null, a.AcknowledgedBy, null);

    private static AlertView View(LiveRegistry registry, AlertEvent e) => new(e.AlertId, e.OwnerId, NameOf(registry, e.OwnerId), AlertKinds.Name(e.Kind),
        AlertKinds.Text(e.Kind), e.Level, LevelNames.Name(e.Level), e.Value, e.Detail, new DateTimeOffset(e.At),
        e.Type == AlertEventType.Acknowledged ? new DateTimeOffset(e.At) : null, e.AcknowledgedBy,
        e.Type == AlertEventType.Cleared ? new DateTimeOffset(e.At) : null);

    private static string NameOf(LiveRegistry registry, int ownerId) => registry.Students.TryGetValue(ownerId, out var s) ? s.Name : "#" + ownerId;

    private void PushTiles(DateTime now)
    {
        var registry = _registry;
        var silentAfter = _silentAfter;
        var changed = new List<TileView>(_dirty.Count);
        var reducedChanged = new List<TileView>(_dirty.Count);
        var openByOwner = ActiveAlerts.GroupBy(a => a.OwnerId).ToDictionary(g => g.Key, g => g.Count());
        foreach (int owner in _dirty)
        {
            if (_students.TryGetValue(owner, out var student))
            {
                int open = openByOwner.GetValueOrDefault(owner);
                var tile = new LiveTile(student.Tile(now, silentAfter, open, seesBloodPressure: true), student.Tile(now, silentAfter, open, seesBloodPressure: false));
                changed.Add(tile.Full);
                // Those who do not see blood pressure get a tile only when what they see changed: the moment of a push
                // would otherwise tell them a blood pressure was taken.
                if (!_tiles.TryGetValue(owner, out var before) || !LiveTile.SameView(before.WithoutBloodPressure, tile.WithoutBloodPressure))
                {
                    reducedChanged.Add(tile.WithoutBloodPressure);
                }

                _tiles[owner] = tile;
            }
        }

        _dirty.Clear();
        Counters = _engine.Counters;
        foreach (var c in registry.Classes.Values)
        {
            var mine = changed.Where(t => registry.Students.TryGetValue(t.OwnerId, out var s) && s.Classes.Contains(c.Id)).ToList();
            var reduced = reducedChanged.Where(t => registry.Students.TryGetValue(t.OwnerId, out var s) && s.Classes.Contains(c.Id)).ToList();
            if (mine.Count > 0)
            {
                _publisher.Tiles(c.Id, mine, reduced);
            }
        }
    }

    private readonly record struct Acknowledgement(Guid AlertId, string UserName);

    /// <summary>One student as the live view holds them.</summary>
    private sealed class Student(LiveStudent info, SwayTracker sway)
    {
        public LiveStudent Info { get; set; } = info;

        public IReadOnlyList<LiveDevice> Devices { get; set; } = [];

        public SwayTracker Sway { get; } = sway;

        public Dictionary<int, MatTracker> Mats { get; } = [];

        public TileVitals Vitals { get; } = new();

        public Posture Posture { get; set; }

        /// <summary>The tile as a viewer who does, or does not, see blood pressure sees it.</summary>
        public TileView Tile(DateTime now, TimeSpan silentAfter, int openAlerts, bool seesBloodPressure)
        {
            var checkIn = Info.CheckIn;
            string state = checkIn is null ? "not-yet" : checkIn.CheckedOutAt is null ? "in" : "out";
            SwayView? sway = Sway.Current is { } s
                ? new SwayView(s.Posture.ToString().ToLowerInvariant(), s.Settling, s.Horizontal.MeanDistanceMetres, s.Horizontal.MaxDistanceMetres,
                    s.Horizontal.MeanSpeedMetresPerSecond, s.SampleCount, new DateTimeOffset(s.LastSampleUtc))
                : null;
            SeatView? seat = null;
            foreach (var mat in Mats.Values)
            {
                if (mat.Current is { } m && (seat is null || m.FrameUtc > seat.At))
                {
                    seat = new SeatView(m.Occupied, m.Occupied ? m.OccupiedSince : m.VacantSince, m.TotalKpa, m.CopX, m.CopY, m.RestlessnessMps ?? 0, new DateTimeOffset(m.FrameUtc));
                }
            }

            var devices = Devices.Select(d =>
            {
                DateTime? last = Vitals.LastReading(d.DeviceId, seesBloodPressure);
                return new DeviceView(d.DeviceId, d.Serial, d.Kind, last is { } l ? new DateTimeOffset(l) : null,
                    checkIn is { CheckedOutAt: null } && (last is null ? now - checkIn.CheckedInAt.UtcDateTime > silentAfter : now - last > silentAfter));
            }).ToList();
            var vitalsAt = Vitals.VitalsAt(seesBloodPressure);
            return new TileView(Info.OwnerId, Info.Name, Info.ExternalRef, state, checkIn?.CheckedInAt, Vitals.HeartRate,
                seesBloodPressure ? Vitals.Systolic : null, seesBloodPressure ? Vitals.Diastolic : null, Vitals.SkinTemperature,
                vitalsAt is { } v ? new DateTimeOffset(v) : null, sway, seat, devices, openAlerts);
        }
    }

    [LoggerMessage(5001, LogLevel.Warning, "The live view could not read the registry (rosters, devices, check-ins); it keeps the last it read and tries again")]
    private partial void LogRefreshFailed(Exception exception);

    [LoggerMessage(5002, LogLevel.Error, "The registry is not available, so the live view and its alerts are off; readings are still stored")]
    private partial void LogRegistryUnavailable();

    [LoggerMessage(5004, LogLevel.Warning, "The alert thresholds of student {OwnerId} do not fit together ({Problem}); the Alerts:* defaults apply until they are fixed")]
    private partial void LogBadThresholds(int ownerId, string problem);

    [LoggerMessage(5003, LogLevel.Warning, "The live view fell behind and skipped {Skipped} committed readings ({Total} since start; Dashboard:MaxBacklogReadings); they are stored, but no alert was evaluated on them")]
    private partial void LogBehind(long skipped, long total);
}

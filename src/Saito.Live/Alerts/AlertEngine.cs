namespace Saito.Live.Alerts;

/// <summary>
/// The live alert rules, as a pure single-threaded state machine: no clock, no timers, no I/O. The server
/// tells it who is watched (<see cref="SetStudent"/>, <see cref="SetSession"/>, <see cref="SetCheckedIn"/>,
/// <see cref="SetDevices"/>), feeds it every committed reading (<see cref="ObserveHeart"/>,
/// <see cref="ObserveSeat"/>, <see cref="ObserveDevice"/>), calls <see cref="Tick"/> about once a second,
/// and stores and pushes what <see cref="DrainEvents"/> hands back. Every call is given <c>now</c> (UTC), so a
/// recorded trace replays exactly. Evaluating a reading is O(1) and allocates nothing unless an alert
/// changes. Not thread-safe: call it from one thread. docs/alerts.md describes every rule.
/// </summary>
public sealed partial class AlertEngine
{
    private readonly AlertOptions _options;
    private readonly Func<Guid> _newId;
    private readonly Dictionary<int, StudentState> _students = [];
    private readonly Dictionary<Guid, RuleState> _open = [];
    private readonly List<AlertEvent> _events = [];

    private readonly TimeSpan _lateAfter;
    private readonly TimeSpan _maxGap;
    private readonly TimeSpan _clear;
    private readonly TimeSpan _escalateAfter;
    private readonly TimeSpan _baselineSpan;

    private long _evaluated;
    private long _late;
    private long _outOfOrder;
    private long _outside;
    private long _future;

    /// <summary>An engine with these settings (read once, here) and, for tests, a source of alert ids (default <see cref="Guid.CreateVersion7()"/>).</summary>
    /// <exception cref="ArgumentException">The options do not validate; the message lists every error.</exception>
    public AlertEngine(AlertOptions options, Func<Guid>? newId = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        var errors = string.Join("; ", options.Validate());
        if (errors.Length > 0)
        {
            throw new ArgumentException(errors, nameof(options));
        }
        _options = options;
        _newId = newId ?? Guid.CreateVersion7;
        _lateAfter = TimeSpan.FromSeconds(options.LateAfterSeconds);
        _maxGap = TimeSpan.FromSeconds(options.MaxGapSeconds);
        _clear = TimeSpan.FromSeconds(options.ClearSeconds);
        _escalateAfter = TimeSpan.FromSeconds(options.EscalateAfterSeconds);
        _baselineSpan = TimeSpan.FromSeconds(options.BaselineSeconds);
        _tachycardiaOnset = TimeSpan.FromSeconds(options.TachycardiaSeconds);
        _heartRateMaxOnset = TimeSpan.FromSeconds(options.HeartRateMaxSeconds);
        _heartRateMinOnset = TimeSpan.FromSeconds(options.HeartRateMinSeconds);
        _overheatOnset = TimeSpan.FromSeconds(options.OverheatSeconds);
        _trendWindow = TimeSpan.FromMinutes(options.OverheatTrendMinutes);
        _silentAfter = TimeSpan.FromSeconds(options.SilentSensorSeconds);
        _checkInGrace = TimeSpan.FromMinutes(options.CheckInGraceMinutes);
    }

    /// <summary>What happened to the readings so far.</summary>
    public AlertEngineCounters Counters => new(_evaluated, _late, _outOfOrder, _outside, _future);

    /// <summary>How many alerts are open.</summary>
    public int ActiveCount => _open.Count;

    /// <summary>
    /// Watches a student (on the roster of a session running now), or updates their thresholds and seat mat.
    /// Open alerts stay open and clear by the new limits.
    /// </summary>
    /// <exception cref="ArgumentException">A threshold is out of range, or the resolved minimum is not below the maximum.</exception>
    public void SetStudent(int ownerId, AlertThresholds thresholds, bool hasSeatMat)
    {
        ArgumentNullException.ThrowIfNull(thresholds);
        var errors = string.Join("; ", thresholds.Validate());
        var max = thresholds.HeartRateMax ?? _options.HeartRateMax;
        var min = thresholds.HeartRateMin ?? _options.HeartRateMin;
        var hot = thresholds.OverheatCelsius ?? _options.OverheatCelsius;
        var warm = thresholds.OverheatWarnCelsius ?? _options.OverheatWarnCelsius;
        if (errors.Length == 0 && (min >= max || warm >= hot))
        {
            errors = FormattableString.Invariant($"Thresholds for student {ownerId}: heart-rate minimum {min} must be below maximum {max}, and warn temperature {warm} below overheat {hot}");
        }
        if (errors.Length > 0)
        {
            throw new ArgumentException(errors, nameof(thresholds));
        }
        if (!_students.TryGetValue(ownerId, out var s))
        {
            s = new StudentState(ownerId);
            _students.Add(ownerId, s);
        }
        s.ClinicianBaseline = thresholds.RestingHeartRate;
        s.Factor = thresholds.TachycardiaFactor ?? _options.TachycardiaFactor;
        s.HeartRateMax = max;
        s.HeartRateMin = min;
        s.OverheatCelsius = hot;
        s.OverheatWarnCelsius = warm;
        s.OffSeat = TimeSpan.FromSeconds(thresholds.OffSeatSeconds ?? _options.OffSeatSeconds);
        s.HasSeatMat = hasSeatMat;
    }

    /// <summary>
    /// Stops watching a student. Their open alerts close with a Cleared event ("no longer watched") at
    /// <paramref name="now"/>, so every stored alert has an end. False when the student was not watched.
    /// </summary>
    public bool RemoveStudent(int ownerId, DateTime now)
    {
        if (!_students.Remove(ownerId, out var s))
        {
            return false;
        }
        CloseAll(s, now, "no longer watched");
        return true;
    }

    /// <summary>
    /// The student's current session [start, end). Nothing fires outside it; a new start forgets the learned
    /// baseline, the trend and the rule timers (open alerts close at the next <see cref="Tick"/> outside a session).
    /// </summary>
    public void SetSession(int ownerId, DateTime startsAtUtc, DateTime endsAtUtc)
    {
        if (endsAtUtc <= startsAtUtc)
        {
            throw new ArgumentException("A session must end after it starts.", nameof(endsAtUtc));
        }
        var s = Student(ownerId);
        var changed = !s.HasSession || s.SessionStart != startsAtUtc;
        s.HasSession = true;
        s.SessionStart = startsAtUtc;
        s.SessionEnd = endsAtUtc;
        if (changed)
        {
            s.ResetForSession();
        }
    }

    /// <summary>
    /// Check-in (at <paramref name="atUtc"/>) clears NotCheckedIn and starts the silent-sensor and seat rules;
    /// check-out clears SilentSensor and OffSeat (they only apply while checked in). Events at <paramref name="now"/>.
    /// </summary>
    public void SetCheckedIn(int ownerId, bool checkedIn, DateTime atUtc, DateTime now)
    {
        var s = Student(ownerId);
        s.CheckedIn = checkedIn;
        if (checkedIn)
        {
            s.EverCheckedIn = true;
            s.CheckedInAt = atUtc;
            CloseIfOpen(s.Rules[(int)AlertKind.NotCheckedIn], now, 0, FormattableString.Invariant($"checked in at {atUtc:HH:mm:ss}"));
        }
        else
        {
            CloseIfOpen(s.Rules[(int)AlertKind.SilentSensor], now, 0, "checked out");
            CloseIfOpen(s.Rules[(int)AlertKind.OffSeat], now, 0, "checked out");
        }
    }

    /// <summary>
    /// The devices assigned to the student. A newly assigned device counts as heard at <paramref name="now"/>
    /// (and never earlier than check-in); one no longer assigned stops being watched.
    /// </summary>
    public void SetDevices(int ownerId, IReadOnlyCollection<int> deviceIds, DateTime now)
    {
        ArgumentNullException.ThrowIfNull(deviceIds);
        var s = Student(ownerId);
        List<int>? gone = null;
        foreach (var id in s.Devices.Keys)
        {
            if (!deviceIds.Contains(id))
            {
                (gone ??= []).Add(id);
            }
        }
        if (gone is not null)
        {
            foreach (var id in gone)
            {
                s.Devices.Remove(id);
            }
        }
        foreach (var id in deviceIds)
        {
            s.Devices.TryAdd(id, now);
        }
    }

    /// <summary>
    /// Time-driven rules at <paramref name="now"/>: silent sensor, not checked in, off seat, escalation, and
    /// closing alerts of students whose session is over. Call about once a second and after each batch.
    /// </summary>
    public void Tick(DateTime now)
    {
        foreach (var s in _students.Values)
        {
            if (!s.InSession(now))
            {
                CloseAll(s, now, "session ended");
                continue;
            }
            EvaluateNotCheckedIn(s, now);
            EvaluateSilent(s, now);
            EvaluateSeat(s, now);
            foreach (var rule in s.Rules)
            {
                Escalate(rule, now);
            }
        }
    }

    /// <summary>
    /// Acknowledges an open alert: it stops escalating and stays open until its condition clears. False when
    /// the id is unknown, the alert is closed, or it was already acknowledged (no second event).
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="byUser"/> is null, empty or white space.</exception>
    public bool Acknowledge(Guid alertId, string byUser, DateTime now)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(byUser);
        if (!_open.TryGetValue(alertId, out var rule) || rule.AcknowledgedBy is not null)
        {
            return false;
        }
        rule.AcknowledgedBy = byUser;
        rule.AcknowledgedAt = now;
        _events.Add(new AlertEvent(rule.AlertId, rule.Student.OwnerId, rule.Kind, AlertEventType.Acknowledged, now, rule.Level, rule.Value,
            FormattableString.Invariant($"acknowledged by {byUser} at level {rule.Level}"), byUser));
        return true;
    }

    /// <summary>Moves the events since the last drain into <paramref name="into"/> (appended, oldest first); returns how many.</summary>
    public int DrainEvents(List<AlertEvent> into)
    {
        ArgumentNullException.ThrowIfNull(into);
        var count = _events.Count;
        into.AddRange(_events);
        _events.Clear();
        return count;
    }

    /// <summary>Appends the alerts open now to <paramref name="into"/>; returns how many.</summary>
    public int CopyActive(List<ActiveAlert> into)
    {
        ArgumentNullException.ThrowIfNull(into);
        foreach (var rule in _open.Values)
        {
            into.Add(new ActiveAlert(rule.AlertId, rule.Student.OwnerId, rule.Kind, rule.RaisedAt, rule.Level, rule.Value, rule.Detail, rule.AcknowledgedBy, rule.AcknowledgedAt));
        }
        return _open.Count;
    }

    private StudentState Student(int ownerId) =>
        _students.TryGetValue(ownerId, out var s)
            ? s
            : throw new InvalidOperationException(FormattableString.Invariant($"Student {ownerId} is not watched: call SetStudent first."));

    private void Raise(RuleState rule, DateTime at, DateTime now, double value, string detail)
    {
        rule.IsOpen = true;
        rule.AlertId = _newId();
        rule.Level = AlertLevels.Aide;
        rule.RaisedAt = at;
        rule.NextEscalationAt = now + _escalateAfter;
        rule.Value = value;
        rule.Detail = detail;
        rule.AcknowledgedBy = null;
        rule.AcknowledgedAt = null;
        rule.OnsetSince = null;
        rule.ClearSince = null;
        _open.Add(rule.AlertId, rule);
        _events.Add(new AlertEvent(rule.AlertId, rule.Student.OwnerId, rule.Kind, AlertEventType.Raised, at, rule.Level, value, detail));
    }

    private void CloseIfOpen(RuleState rule, DateTime at, double value, string detail)
    {
        if (!rule.IsOpen)
        {
            return;
        }
        rule.IsOpen = false;
        rule.OnsetSince = null;
        rule.ClearSince = null;
        _open.Remove(rule.AlertId);
        _events.Add(new AlertEvent(rule.AlertId, rule.Student.OwnerId, rule.Kind, AlertEventType.Cleared, at, rule.Level, value, detail));
    }

    private void CloseAll(StudentState s, DateTime now, string reason)
    {
        foreach (var rule in s.Rules)
        {
            CloseIfOpen(rule, now, rule.Value, reason);
        }
    }

    private void Escalate(RuleState rule, DateTime now)
    {
        while (rule.IsOpen && rule.AcknowledgedBy is null && rule.Level < AlertLevels.Admin && now >= rule.NextEscalationAt)
        {
            rule.Level++;
            rule.NextEscalationAt += _escalateAfter;
            var who = rule.Level == AlertLevels.Teacher ? "teacher" : "admin";
            _events.Add(new AlertEvent(rule.AlertId, rule.Student.OwnerId, rule.Kind, AlertEventType.Escalated, now, rule.Level, rule.Value,
                FormattableString.Invariant($"not acknowledged for {_options.EscalateAfterSeconds} s, escalated to {who}: {rule.Detail}")));
        }
    }

    /// <summary>The common gate of every reading: watched, not late, inside the session.</summary>
    private bool Admit(int ownerId, DateTime timestamp, DateTime now, out StudentState s)
    {
        if (!_students.TryGetValue(ownerId, out s!))
        {
            _outside++;
            return false;
        }
        if (timestamp < now - _lateAfter)
        {
            _late++;
            return false;
        }
        if (timestamp > now + _lateAfter)
        {
            // A clock far ahead: evaluated, it would make every true reading after it look out of order.
            _future++;
            return false;
        }
        if (!s.InSession(timestamp))
        {
            _outside++;
            return false;
        }
        return true;
    }
}

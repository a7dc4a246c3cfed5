namespace Saito.Live.Alerts;

// The time-driven rules: silent sensor, not checked in, off seat. Timed against "now".
public sealed partial class AlertEngine
{
    private readonly TimeSpan _silentAfter;
    private readonly TimeSpan _checkInGrace;

    /// <summary>Any reading of any kind from <paramref name="deviceId"/> (location tag, mat, …): the device is alive.</summary>
    public void ObserveDevice(int ownerId, int deviceId, DateTime timestampUtc, DateTime now)
    {
        if (!Admit(ownerId, timestampUtc, now, out var s))
        {
            return;
        }
        Heard(s, deviceId, timestampUtc, now);
        _evaluated++;
    }

    /// <summary>
    /// The seat mat's occupancy (from the mat analytics); a change is timed from <paramref name="timestampUtc"/>.
    /// It also tells the silent-sensor rule that the mat is alive.
    /// </summary>
    public void ObserveSeat(int ownerId, int deviceId, DateTime timestampUtc, bool occupied, DateTime now)
    {
        if (!Admit(ownerId, timestampUtc, now, out var s))
        {
            return;
        }
        Heard(s, deviceId, timestampUtc, now);
        if (timestampUtc <= s.LastSeatAt)
        {
            _outOfOrder++;
            return;
        }
        _evaluated++;
        s.LastSeatAt = timestampUtc;
        if (s.SeatOccupied != occupied)
        {
            s.SeatOccupied = occupied;
            s.SeatChangedAt = timestampUtc < now ? timestampUtc : now;
        }
        if (s.InSession(now))
        {
            EvaluateSeat(s, now);
        }
    }

    private void Heard(StudentState s, int deviceId, DateTime timestamp, DateTime now)
    {
        if (!s.Devices.TryGetValue(deviceId, out var last))
        {
            return;
        }
        var at = timestamp < now ? timestamp : now;
        if (at > last)
        {
            s.Devices[deviceId] = at;
        }
        if (s.Rules[(int)AlertKind.SilentSensor].IsOpen && s.InSession(now))
        {
            EvaluateSilent(s, now);
        }
    }

    private void EvaluateNotCheckedIn(StudentState s, DateTime now)
    {
        var rule = s.Rules[(int)AlertKind.NotCheckedIn];
        if (s.EverCheckedIn)
        {
            CloseIfOpen(rule, now, 0, "checked in");
            return;
        }
        var late = now - s.SessionStart;
        if (!rule.IsOpen && late >= _checkInGrace)
        {
            Raise(rule, now, now, Math.Floor(late.TotalMinutes),
                FormattableString.Invariant($"not checked in {late.TotalMinutes:0} min after the session started at {s.SessionStart:HH:mm}"));
        }
    }

    private void EvaluateSilent(StudentState s, DateTime now)
    {
        var rule = s.Rules[(int)AlertKind.SilentSensor];
        if (!s.CheckedIn || s.Devices.Count == 0)
        {
            CloseIfOpen(rule, now, 0, "no device to watch");
            return;
        }
        var floor = s.CheckedInAt > s.SessionStart ? s.CheckedInAt : s.SessionStart;
        var silentCount = 0;
        var longest = TimeSpan.Zero;
        var longestDevice = 0;
        foreach (var (device, heard) in s.Devices)
        {
            var silent = now - (heard > floor ? heard : floor);
            if (silent >= _silentAfter)
            {
                silentCount++;
                if (silent > longest)
                {
                    longest = silent;
                    longestDevice = device;
                }
            }
        }
        if (silentCount > 0 && !rule.IsOpen)
        {
            var others = silentCount > 1 ? FormattableString.Invariant($" (and {silentCount - 1} more)") : "";
            Raise(rule, now, now, Math.Floor(longest.TotalSeconds),
                FormattableString.Invariant($"device {longestDevice}{others} sent nothing for {longest.TotalSeconds:0} s"));
        }
        else if (silentCount == 0)
        {
            CloseIfOpen(rule, now, 0, "every assigned device heard again");
        }
    }

    private void EvaluateSeat(StudentState s, DateTime now)
    {
        var rule = s.Rules[(int)AlertKind.OffSeat];
        if (!s.HasSeatMat || !s.CheckedIn || s.SeatOccupied is not { } occupied)
        {
            CloseIfOpen(rule, now, 0, "seat not watched");
            return;
        }
        if (!occupied)
        {
            var since = Latest(s.SeatChangedAt, s.CheckedInAt, s.SessionStart);
            var off = now - since;
            if (!rule.IsOpen && off >= s.OffSeat)
            {
                Raise(rule, now, now, Math.Floor(off.TotalSeconds), FormattableString.Invariant($"out of seat for {off.TotalSeconds:0} s"));
            }
        }
        else if (rule.IsOpen && now - s.SeatChangedAt >= _clear)
        {
            CloseIfOpen(rule, now, 0, FormattableString.Invariant($"back in seat for {(now - s.SeatChangedAt).TotalSeconds:0} s"));
        }
    }

    private static DateTime Latest(DateTime a, DateTime b, DateTime c)
    {
        var ab = a > b ? a : b;
        return ab > c ? ab : c;
    }
}

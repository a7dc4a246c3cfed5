using Saito.Live.Analytics;
using Saito.Readings;

namespace Saito.Live.Classroom;

/// <summary>One student as the live view holds them: latest vitals, head sway, seat mats, posture; and their tile.</summary>
internal sealed class WatchedStudent(LiveStudent info, SwayTracker sway)
{
    public LiveStudent Info { get; set; } = info;

    public IReadOnlyList<LiveDevice> Devices { get; set; } = [];

    public SwayTracker Sway { get; } = sway;

    public Dictionary<int, MatTracker> Mats { get; } = [];

    public TileVitals Vitals { get; private set; } = new();

    public Posture Posture { get; set; }

    /// <summary>
    /// Drops what <paramref name="deviceId"/> showed on the tile, now that it is no longer the student's: the vitals
    /// (which device each value came from is not kept, so all of them: another wristband refills them with its next
    /// reading) and, if it was a seat mat, the seat.
    /// </summary>
    public void Forget(int deviceId)
    {
        Vitals = new TileVitals();
        Mats.Remove(deviceId);
    }

    /// <summary>A pressure device counts as the student's seat unless it is a foot mat.</summary>
    public static bool IsSeatMat(string? kind) => kind is "pressure-mat" or "pressure" or null;

    /// <summary>
    /// Adds one cell of a seat mat; returns the mat's new frame when the reading completed one (the seat changes only
    /// then), else null.
    /// </summary>
    public MatSnapshot? AddSeatCell(int deviceId, MatOptions options, in Reading reading)
    {
        if (!Mats.TryGetValue(deviceId, out var mat))
        {
            mat = new MatTracker(options);
            Mats[deviceId] = mat;
        }

        var before = mat.Current;
        mat.Add(reading.Timestamp, reading.Channel, reading.V0 ?? 0);
        if (mat.Current is not { } frame || ReferenceEquals(before, frame))
        {
            return null;
        }

        Posture = frame.Occupied ? Posture.Sitting : Posture.Standing;
        return frame;
    }

    /// <summary>The tile as a viewer who does, or does not, see blood pressure sees it; <paramref name="openAlerts"/> are the student's, most pressing first.</summary>
    public TileView Tile(DateTime now, TimeSpan silentAfter, IReadOnlyList<AlertView> openAlerts, bool seesBloodPressure)
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
            vitalsAt is { } v ? new DateTimeOffset(v) : null, sway, seat, devices, openAlerts.Count,
            openAlerts.Count > 0 ? TileAlert.Of(openAlerts[0]) : null);
    }
}

using Saito.Live.Alerts;

namespace Saito.Live.Classroom;

/// <summary>
/// One student's tile as the dashboards receive it (JSON over SignalR, camelCase). Blood pressure is left out
/// (null) for those who may not see it: the server never sends it to them.
/// </summary>
public sealed record TileView(
    int OwnerId,
    string Name,
    string? ExternalRef,
    string CheckIn,
    DateTimeOffset? CheckedInAt,
    double? HeartRate,
    double? Systolic,
    double? Diastolic,
    double? SkinTemperature,
    DateTimeOffset? VitalsAt,
    SwayView? Sway,
    SeatView? Seat,
    IReadOnlyList<DeviceView> Devices,
    int OpenAlerts,
    TileAlert? Alert);

/// <summary>The student's most pressing open alert (<see cref="AlertView.Order"/>), which the tile names in a few words (<see cref="AlertClasses.ShortText"/>).</summary>
public sealed record TileAlert(string Kind, string Class, string Title, double? Value, bool Acknowledged)
{
    public static TileAlert Of(AlertView alert)
    {
        ArgumentNullException.ThrowIfNull(alert);
        string title = AlertKinds.TryParse(alert.Kind, out var kind) ? AlertClasses.ShortText(kind) : alert.Title;
        return new(alert.Kind, alert.Class, title, alert.Value, alert.AcknowledgedBy is not null);
    }
}

/// <summary>A student's tile as it stands: for those who see blood pressure, and without it (no values, no time of it).</summary>
public sealed record LiveTile(TileView Full, TileView WithoutBloodPressure)
{
    /// <summary>Whether two tiles show the same (records compare their device lists by reference, so those are compared item by item).</summary>
    public static bool SameView(TileView a, TileView b)
    {
        ArgumentNullException.ThrowIfNull(a);
        ArgumentNullException.ThrowIfNull(b);
        return a with { Devices = [] } == b with { Devices = [] } && a.Devices.SequenceEqual(b.Devices);
    }
}

/// <summary>Head sway over the last window (metres, metres per second).</summary>
public sealed record SwayView(string Posture, bool Settling, double MeanDistance, double MaxDistance, double MeanSpeed, int Samples, DateTimeOffset At);

/// <summary>The seat mat: occupied or not since when, centre of pressure (metres), restlessness (m/s of the centre of pressure).</summary>
public sealed record SeatView(bool Occupied, DateTimeOffset? Since, double TotalKpa, double? CopX, double? CopY, double Restlessness, DateTimeOffset At);

/// <summary>A device of the student's: what it is, when it last sent a reading, and whether it has gone silent.</summary>
public sealed record DeviceView(int DeviceId, string Serial, string? Kind, DateTimeOffset? LastReading, bool Silent);

/// <summary>The tiles of one class that changed since the last push: all of them for those who see blood pressure, and
/// those whose view changed for those who do not (<see cref="LiveTile.SameView"/>; possibly none).</summary>
public sealed record ClassTiles(int ClassId, IReadOnlyList<TileView> Full, IReadOnlyList<TileView> WithoutBloodPressure);

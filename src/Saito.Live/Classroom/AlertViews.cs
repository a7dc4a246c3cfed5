using System.Globalization;
using System.Text.RegularExpressions;
using Saito.Live.Alerts;

namespace Saito.Live.Classroom;

/// <summary>An alert as dashboards and the history page show it; <see cref="Class"/> is its <see cref="AlertClasses.Name"/>.</summary>
public sealed record AlertView(
    Guid Id,
    int OwnerId,
    string StudentName,
    string Kind,
    string Class,
    string Title,
    int Level,
    string LevelName,
    double? Value,
    string Detail,
    DateTimeOffset RaisedAt,
    DateTimeOffset? AcknowledgedAt,
    string? AcknowledgedBy,
    DateTimeOffset? ClearedAt)
{
    /// <summary>The most pressing first (<see cref="AlertClasses.Compare"/>).</summary>
    public static IComparer<AlertView> Order { get; } = Comparer<AlertView>.Create(static (a, b) => AlertClasses.Compare(
        ClassOf(a), a.AcknowledgedBy is not null, a.Level, a.RaisedAt, ClassOf(b), b.AcknowledgedBy is not null, b.Level, b.RaisedAt));

    private static AlertClass ClassOf(AlertView alert) =>
        AlertKinds.TryParse(alert.Kind, out var kind) ? AlertClasses.Of(kind) : AlertClass.Attendance;
}

/// <summary>
/// One alert event as the server stores and pushes it: <see cref="Event"/> with devices named by serial,
/// <see cref="ClassId"/> for the alert history (the student's class in session now, else their first class), the
/// classes whose dashboards are told (<see cref="Classes"/>), and the alert as they show it.
/// </summary>
public sealed record LiveAlertEvent(AlertEvent Event, int? ClassId, IReadOnlyList<int> Classes, AlertView View);

/// <summary>How the engine's alerts read to staff: student names, level names, devices by serial.</summary>
internal static partial class AlertViews
{
    public static string LevelName(int level) => level switch
    {
        0 => "in the room",
        1 => "escalated to the teacher",
        _ => "escalated to admins",
    };

    /// <summary>The engine knows devices by id; staff know them by serial ("device 4" becomes "wrist-basil").</summary>
    public static string WithSerials(LiveRegistry registry, string detail) =>
        DeviceId().Replace(detail, m => registry.Devices.TryGetValue(int.Parse(m.Groups[1].ValueSpan, CultureInfo.InvariantCulture), out var d)
            ? d.Serial : m.Value);

    public static AlertView Of(LiveRegistry registry, ActiveAlert a) => new(a.AlertId, a.OwnerId, registry.NameOf(a.OwnerId), AlertKinds.Name(a.Kind),
        AlertClasses.Name(AlertClasses.Of(a.Kind)), AlertKinds.Text(a.Kind), a.Level, LevelName(a.Level), a.Value, WithSerials(registry, a.Detail), new DateTimeOffset(a.RaisedAt),
        a.AcknowledgedAt is { } at ? new DateTimeOffset(at) : null, a.AcknowledgedBy, null);

    /// <summary>An alert no longer open (cleared), or not yet among the open ones: as its event tells it.</summary>
    public static AlertView Of(LiveRegistry registry, AlertEvent e) => new(e.AlertId, e.OwnerId, registry.NameOf(e.OwnerId), AlertKinds.Name(e.Kind),
        AlertClasses.Name(AlertClasses.Of(e.Kind)), AlertKinds.Text(e.Kind), e.Level, LevelName(e.Level), e.Value, e.Detail, new DateTimeOffset(e.At),
        e.Type == AlertEventType.Acknowledged ? new DateTimeOffset(e.At) : null, e.AcknowledgedBy,
        e.Type == AlertEventType.Cleared ? new DateTimeOffset(e.At) : null);

    /// <summary>Where the alert history files an event: the student's class in session now, else their first class.</summary>
    public static int? HistoryClassOf(LiveRegistry registry, LiveStudent? student)
    {
        if (student is null)
        {
            return null;
        }

        foreach (int c in student.Classes)
        {
            if (registry.Classes.TryGetValue(c, out var k) && k.Session is not null)
            {
                return c;
            }
        }

        return student.Classes.Count > 0 ? student.Classes[0] : null;
    }

    [GeneratedRegex(@"\bdevice (\d{1,9})\b")]
    private static partial Regex DeviceId();
}

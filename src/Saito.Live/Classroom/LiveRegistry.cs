using Saito.Live.Alerts;

namespace Saito.Live.Classroom;

/// <summary>A class, its roster (owner ids) and the session running now, if any.</summary>
public sealed record LiveClass(int Id, string Name, string? Room, IReadOnlyList<int> Roster, LiveSession? Session);

/// <summary>A class's session (times as stored; the tile and the engine use their UTC instants).</summary>
public sealed record LiveSession(int Id, DateTimeOffset StartsAt, DateTimeOffset EndsAt);

/// <summary>Today's check-in of a student; <paramref name="CheckedOutAt"/> is null while they are in.</summary>
public sealed record LiveCheckIn(DateTimeOffset CheckedInAt, DateTimeOffset? CheckedOutAt);

/// <summary>
/// A student on some roster: the classes they are on, today's check-in (null: not yet), and a clinician's thresholds
/// (<see cref="AlertThresholds.None"/> where none are set).
/// </summary>
public sealed record LiveStudent(int OwnerId, string Name, string? ExternalRef, IReadOnlyList<int> Classes, LiveCheckIn? CheckIn, AlertThresholds Thresholds);

/// <summary>A device a student has now, since <paramref name="From"/> (UTC): readings taken before then are not theirs.</summary>
public sealed record LiveDevice(int DeviceId, string Serial, string? Kind, int OwnerId, DateTime From);

/// <summary>
/// Who is where: the classes, their rosters and the session running now, today's check-ins, the devices each student
/// has now, and clinicians' thresholds. The server reads it from the registry; <see cref="LiveView"/> takes it whole
/// each time, so it is never changed once made.
/// </summary>
public sealed class LiveRegistry(IReadOnlyDictionary<int, LiveClass> classes, IReadOnlyDictionary<int, LiveStudent> students, IReadOnlyDictionary<int, LiveDevice> devices)
{
    public static LiveRegistry Empty { get; } = new(new Dictionary<int, LiveClass>(), new Dictionary<int, LiveStudent>(), new Dictionary<int, LiveDevice>());

    public IReadOnlyDictionary<int, LiveClass> Classes { get; } = classes;

    public IReadOnlyDictionary<int, LiveStudent> Students { get; } = students;

    /// <summary>Devices assigned now to a student on some roster, by device id.</summary>
    public IReadOnlyDictionary<int, LiveDevice> Devices { get; } = devices;

    /// <summary>The students' name for staff, or "#id" for one no longer on a roster.</summary>
    public string NameOf(int ownerId) => Students.TryGetValue(ownerId, out var s) ? s.Name : "#" + ownerId;
}

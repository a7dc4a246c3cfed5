using Saito.Readings;

namespace Saito.Archiver.Tests.Infrastructure;

/// <summary>
/// <see cref="TestReadings"/> with their keys and times kept and their values moved inside ingestion's ranges
/// (<see cref="ReadingLimits"/>): readings ingestion could have stored, so restore takes every one of them. (TestReadings'
/// awkward values, 1.8e308 among them, test that exports round-trip; restore refuses such rows.)
/// </summary>
public static class RestorableReadings
{
    public static List<Reading> Of(ReadingKind kind, int count, int firstIndex = 0, int devices = 3) =>
        TestReadings.Of(kind, count, firstIndex, devices).Select(Plausible).ToList();

    public static List<Reading> All(int count, int firstIndex = 0, int devices = 3) =>
        ReadingKinds.All.SelectMany(kind => Of(kind, count, firstIndex, devices)).ToList();

    private static double Within(double value, double min, double max) => min + (Math.Abs(value) % (max - min));

    public static Reading Plausible(Reading r) => r.Kind switch
    {
        ReadingKind.Biosensor => Reading.Biosensor(r.DeviceId, r.Channel, r.Timestamp, r.ReceivedAt,
            r.V0 is { } hr ? Within(hr, 40, 200) : r.V1 is null && r.V2 is null && r.V3 is null ? 72 : null,
            r.V1 is { } sys ? Within(sys, 120, 180) : null,
            r.V2 is { } dia ? Within(dia, 40, 110) : null,
            r.V3 is { } temp ? Within(temp, 25, 40) : null),
        ReadingKind.Location => Reading.Location(r.DeviceId, r.Channel, r.Timestamp, r.ReceivedAt,
            Within(r.V0!.Value, -500, 500), Within(r.V1!.Value, -500, 500), Within(r.V2!.Value, -500, 500)),
        _ => Reading.Pressure(r.DeviceId, r.Channel, r.Timestamp, r.ReceivedAt, Within(r.V0!.Value, 0, 900)),
    };
}

using Saito.Readings;

namespace Saito.Live.Classroom;

/// <summary>
/// A student's latest vitals and when each device last sent something, as the live tile shows them, kept so that a
/// viewer who may not see blood pressure learns nothing of it: not its values, and not when it was measured (issue 32,
/// item 9). Heart rate and skin temperature on one side and blood pressure on the other each keep their own time; a
/// reading that carried only blood pressure moves neither "vitals at" nor a device's last reading for such a viewer.
/// No clock, no I/O: <see cref="LiveView"/> feeds it.
/// </summary>
public sealed class TileVitals
{
    private readonly Dictionary<int, (DateTime Any, DateTime? Visible)> _lastReading = [];

    public double? HeartRate { get; private set; }

    public double? SkinTemperature { get; private set; }

    public double? Systolic { get; private set; }

    public double? Diastolic { get; private set; }

    /// <summary>When the newest reading with a heart rate or skin temperature was taken.</summary>
    public DateTime? OthersAt { get; private set; }

    /// <summary>When the newest reading with blood pressure was taken.</summary>
    public DateTime? BloodPressureAt { get; private set; }

    /// <summary>"Vitals at": the newest of the vitals <paramref name="seesBloodPressure"/> lets the viewer see.</summary>
    public DateTime? VitalsAt(bool seesBloodPressure) =>
        !seesBloodPressure || BloodPressureAt is not { } bp ? OthersAt : OthersAt is { } others && others > bp ? others : bp;

    /// <summary>When <paramref name="deviceId"/>'s newest message the viewer may know of arrived (received time).</summary>
    public DateTime? LastReading(int deviceId, bool seesBloodPressure) =>
        _lastReading.TryGetValue(deviceId, out var last) ? seesBloodPressure ? last.Any : last.Visible : null;

    /// <summary>Takes one reading of the student's device <paramref name="deviceId"/>; a reading older than the one shown does not replace it.</summary>
    public void Observe(int deviceId, in Reading reading)
    {
        bool bloodPressure = reading.Kind == ReadingKind.Biosensor && (reading.Systolic is not null || reading.Diastolic is not null);
        bool others = reading.Kind != ReadingKind.Biosensor || reading.HeartRate is not null || reading.SkinTemperature is not null;
        var received = reading.ReceivedAt;
        _lastReading.TryGetValue(deviceId, out var last);
        _lastReading[deviceId] = (Later(last.Any, received), others ? Later(last.Visible ?? DateTime.MinValue, received) : last.Visible);
        if (reading.Kind != ReadingKind.Biosensor)
        {
            return;
        }

        var ts = reading.Timestamp;
        if (others && (OthersAt is null || ts >= OthersAt))
        {
            OthersAt = ts;
            HeartRate = reading.HeartRate ?? HeartRate;
            SkinTemperature = reading.SkinTemperature ?? SkinTemperature;
        }

        if (bloodPressure && (BloodPressureAt is null || ts >= BloodPressureAt))
        {
            BloodPressureAt = ts;
            Systolic = reading.Systolic ?? Systolic;
            Diastolic = reading.Diastolic ?? Diastolic;
        }
    }

    private static DateTime Later(DateTime a, DateTime b) => a > b ? a : b;
}

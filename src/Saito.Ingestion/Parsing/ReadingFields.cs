using Saito.Storage.Readings;

namespace Saito.Ingestion.Parsing;

/// <summary>The eight values a reading can carry, in the order of the storage columns per kind.</summary>
internal enum ValueField : byte
{
    HeartRate,
    Systolic,
    Diastolic,
    SkinTemperature,
    X,
    Y,
    Z,
    Pressure,
}

/// <summary>Per value: its kind, its slot (<see cref="Reading.V0"/>..<see cref="Reading.V3"/>), its name and its range.</summary>
internal static class ReadingFields
{
    public static ReadingKind KindOf(ValueField field) => field switch
    {
        <= ValueField.SkinTemperature => ReadingKind.Biosensor,
        <= ValueField.Z => ReadingKind.Location,
        _ => ReadingKind.Pressure,
    };

    public static int SlotOf(ValueField field) => field switch
    {
        ValueField.HeartRate or ValueField.X or ValueField.Pressure => 0,
        ValueField.Systolic or ValueField.Y => 1,
        ValueField.Diastolic or ValueField.Z => 2,
        _ => 3,
    };

    /// <summary>The field's name in Saito JSON (and the canonical SenML name).</summary>
    public static string NameOf(ValueField field) => field switch
    {
        ValueField.HeartRate => "hr",
        ValueField.Systolic => "sys",
        ValueField.Diastolic => "dia",
        ValueField.SkinTemperature => "temp",
        ValueField.X => "x",
        ValueField.Y => "y",
        ValueField.Z => "z",
        _ => "kpa",
    };

    public static string UnitOf(ValueField field) => field switch
    {
        ValueField.HeartRate => "beats/min",
        ValueField.Systolic or ValueField.Diastolic => "mmHg",
        ValueField.SkinTemperature => "°C",
        ValueField.X or ValueField.Y or ValueField.Z => "m",
        _ => "kPa",
    };

    public static double MinOf(ValueField field) => field switch
    {
        ValueField.HeartRate => ReadingLimits.HeartRateMin,
        ValueField.Systolic => ReadingLimits.SystolicMin,
        ValueField.Diastolic => ReadingLimits.DiastolicMin,
        ValueField.SkinTemperature => ReadingLimits.SkinTemperatureMin,
        ValueField.X or ValueField.Y or ValueField.Z => -ReadingLimits.LocationMaxAbs,
        _ => ReadingLimits.PressureMin,
    };

    public static double MaxOf(ValueField field) => field switch
    {
        ValueField.HeartRate => ReadingLimits.HeartRateMax,
        ValueField.Systolic => ReadingLimits.SystolicMax,
        ValueField.Diastolic => ReadingLimits.DiastolicMax,
        ValueField.SkinTemperature => ReadingLimits.SkinTemperatureMax,
        ValueField.X or ValueField.Y or ValueField.Z => ReadingLimits.LocationMaxAbs,
        _ => ReadingLimits.PressureMax,
    };

    public static bool InRange(ValueField field, double value) => value >= MinOf(field) && value <= MaxOf(field);

    /// <summary>"hr 350 is outside 20..300 beats/min".</summary>
    public static string OutOfRangeDetail(ValueField field, double value) =>
        FormattableString.Invariant($"{NameOf(field)} {value} is outside {MinOf(field)}..{MaxOf(field)} {UnitOf(field)}");

    /// <summary>The field names of a kind, for messages: "hr, sys, dia, temp".</summary>
    public static string NamesOf(ReadingKind kind) => kind switch
    {
        ReadingKind.Biosensor => "hr, sys, dia, temp",
        ReadingKind.Location => "x, y, z",
        _ => "kpa",
    };

    /// <summary>Which slots a kind needs: biosensor any one of four, location all three, pressure the one.</summary>
    public static byte RequiredMask(ReadingKind kind) => kind switch
    {
        ReadingKind.Location => 0b111,
        ReadingKind.Pressure => 0b1,
        _ => 0,
    };
}

/// <summary>Up to four values of one reading, with a bit per slot that is set.</summary>
internal struct ValueSet
{
    public double V0;
    public double V1;
    public double V2;
    public double V3;
    public byte Mask;

    public readonly bool Has(int slot) => (Mask & (1 << slot)) != 0;

    public void Set(int slot, double value)
    {
        switch (slot)
        {
            case 0:
                V0 = value;
                break;
            case 1:
                V1 = value;
                break;
            case 2:
                V2 = value;
                break;
            default:
                V3 = value;
                break;
        }

        Mask |= (byte)(1 << slot);
    }

    public void Clear(int slot) => Mask &= (byte)~(1 << slot);

    public readonly double Get(int slot) => slot switch
    {
        0 => V0,
        1 => V1,
        2 => V2,
        _ => V3,
    };

    public readonly Reading ToReading(ReadingKind kind, int deviceId, int channel, long ticks, DateTime receivedAt) =>
        new(kind, deviceId, channel, new DateTime(ticks, DateTimeKind.Utc), receivedAt,
            Has(0) ? V0 : null, Has(1) ? V1 : null, Has(2) ? V2 : null, Has(3) ? V3 : null);

    /// <summary>For a biosensor reading: a diastolic pressure must be below the systolic.</summary>
    public readonly bool DiastolicNotBelowSystolic => Has(1) && Has(2) && V2 >= V1;
}

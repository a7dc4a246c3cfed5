using System.Text;

namespace Saito.Readings;

/// <summary>The eight values a reading can carry, in the order of the storage columns per kind.</summary>
public enum ValueField : byte
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
public static class ReadingFields
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

    /// <summary>The field's name in Saito JSON (and the canonical SenML name), as UTF-8: the one place the names are written.</summary>
    public static ReadOnlySpan<byte> Utf8NameOf(ValueField field) => field switch
    {
        ValueField.HeartRate => "hr"u8,
        ValueField.Systolic => "sys"u8,
        ValueField.Diastolic => "dia"u8,
        ValueField.SkinTemperature => "temp"u8,
        ValueField.X => "x"u8,
        ValueField.Y => "y"u8,
        ValueField.Z => "z"u8,
        _ => "kpa"u8,
    };

    private static readonly string[] s_names = Enum.GetValues<ValueField>().Select(f => Encoding.UTF8.GetString(Utf8NameOf(f))).ToArray();

    /// <summary>The field's name in Saito JSON (and the canonical SenML name): "hr", "sys", ... "kpa".</summary>
    public static string NameOf(ValueField field) => s_names[(int)field];

    /// <summary>The field a name (UTF-8, unescaped) stands for, if it is one of <see cref="Utf8NameOf"/>.</summary>
    public static bool TryParseName(ReadOnlySpan<byte> name, out ValueField field)
    {
        // Eight short comparisons; a length mismatch returns at once, so this costs no more than a switch on length.
        for (field = ValueField.HeartRate; field <= ValueField.Pressure; field++)
        {
            if (name.SequenceEqual(Utf8NameOf(field)))
            {
                return true;
            }
        }

        field = default;
        return false;
    }

    /// <summary>The fields of a kind, in slot order (worked out once: restore asks for every row).</summary>
    public static IReadOnlyList<ValueField> FieldsOf(ReadingKind kind) => s_fieldsOfKind[(int)kind];

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

    private static readonly ValueField[][] s_fieldsOfKind =
        ReadingKinds.All.Select(k => Enum.GetValues<ValueField>().Where(f => KindOf(f) == k).ToArray()).ToArray();

    private static readonly string[] s_namesOfKind = ReadingKinds.All.Select(k => string.Join(", ", FieldsOf(k).Select(NameOf))).ToArray();

    /// <summary>The field names of a kind, for messages: "hr, sys, dia, temp".</summary>
    public static string NamesOf(ReadingKind kind) => s_namesOfKind[(int)kind];

    /// <summary>Which slots a kind needs: biosensor any one of four, location all three, pressure the one.</summary>
    public static byte RequiredMask(ReadingKind kind) => kind switch
    {
        ReadingKind.Location => 0b111,
        ReadingKind.Pressure => 0b1,
        _ => 0,
    };
}

using System.Text.Json;
using Saito.Readings;

namespace Saito.Payloads;

/// <summary>SenML units: which a field takes, and K to °C, Pa to kPa.</summary>
internal static partial class SenMLFormat
{
    internal enum Unit : byte
    {
        None,
        BeatPerMinute,
        PerMinute,
        MillimetreOfMercury,
        Celsius,
        Kelvin,
        Metre,
        Kilopascal,
        Pascal,
        Other,
    }

    /// <summary>Checks the unit against the field and converts K to °C and Pa to kPa. No unit means the field's own.</summary>
    private static bool TryConvert(ValueField field, Unit unit, ref double value)
    {
        switch (field)
        {
            case ValueField.HeartRate:
                return unit is Unit.None or Unit.BeatPerMinute or Unit.PerMinute;
            case ValueField.Systolic or ValueField.Diastolic:
                return unit is Unit.None or Unit.MillimetreOfMercury;
            case ValueField.SkinTemperature:
                if (unit == Unit.Kelvin)
                {
                    // Rounded to a micro-kelvin: 309.75 K reads as 36.6 °C, not 36.600000000000023.
                    value = Math.Round(value - 273.15, 6);
                    return true;
                }

                return unit is Unit.None or Unit.Celsius;
            case ValueField.X or ValueField.Y or ValueField.Z:
                return unit is Unit.None or Unit.Metre;
            default:
                if (unit == Unit.Pascal)
                {
                    value /= 1000;
                    return true;
                }

                return unit is Unit.None or Unit.Kilopascal;
        }
    }

    private static string UnitsOf(ValueField field) => field switch
    {
        ValueField.HeartRate => "beat/min or 1/min",
        ValueField.Systolic or ValueField.Diastolic => "mmHg",
        ValueField.SkinTemperature => "Cel or K",
        ValueField.X or ValueField.Y or ValueField.Z => "m",
        _ => "kPa or Pa",
    };

    private static string NameOf(Unit unit) => unit switch
    {
        Unit.BeatPerMinute => "beat/min",
        Unit.PerMinute => "1/min",
        Unit.MillimetreOfMercury => "mmHg",
        Unit.Celsius => "Cel",
        Unit.Kelvin => "K",
        Unit.Metre => "m",
        Unit.Kilopascal => "kPa",
        Unit.Pascal => "Pa",
        _ => "?",
    };

    private static Unit ParseUnit(ReadOnlySpan<byte> text) => text.Length switch
    {
        1 when text[0] == (byte)'K' => Unit.Kelvin,
        1 when text[0] == (byte)'m' => Unit.Metre,
        2 when text.SequenceEqual("Pa"u8) => Unit.Pascal,
        3 when text.SequenceEqual("Cel"u8) => Unit.Celsius,
        3 when text.SequenceEqual("kPa"u8) => Unit.Kilopascal,
        4 when text.SequenceEqual("mmHg"u8) => Unit.MillimetreOfMercury,
        5 when text.SequenceEqual("1/min"u8) => Unit.PerMinute,
        8 when text.SequenceEqual("beat/min"u8) => Unit.BeatPerMinute,
        _ => Unit.Other,
    };

    private static ReadOnlySpan<byte> UnitText(ref Utf8JsonReader reader, byte[] buffer)
    {
        if (!reader.ValueIsEscaped)
        {
            return reader.ValueSpan;
        }

        return ReadingParser.TryUnescape(ref reader, buffer, out int length) ? buffer.AsSpan(0, length) : "?"u8;
    }

    private static bool TryCopyString(ref Utf8JsonReader reader, byte[] destination, out int length)
    {
        if (!reader.ValueIsEscaped)
        {
            var value = reader.ValueSpan;
            length = value.Length;
            if (length > destination.Length)
            {
                length = 0;
                return false;
            }

            value.CopyTo(destination);
            return true;
        }

        if (ReadingParser.TryUnescape(ref reader, destination, out length))
        {
            return true;
        }

        length = 0;
        return false;
    }
}

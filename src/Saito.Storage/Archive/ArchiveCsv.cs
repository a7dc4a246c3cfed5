using System.Globalization;
using System.IO.Compression;
using System.Text;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>
/// The export files: CSV with a header of the table's columns (<see cref="ReadingTables.Columns"/>), one row a line,
/// <c>\n</c> line ends, UTF-8 without BOM. GUID keys as 36-character GUIDs; times as ISO-8601 UTC with six fractional
/// digits (<c>2026-03-01T12:00:00.123456Z</c>); values in .NET's shortest round-trip form, an empty field for NULL.
/// So a file reads back to exactly the rows that were exported, and loads into any database with its CSV importer.
/// </summary>
public static class ArchiveCsv
{
    internal const string TimeFormat = "yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'";

    public static string Header(ReadingKind kind, KeyStrategy keys) => string.Join(',', ReadingTables.Columns(kind, keys));

    /// <summary>The longest line <see cref="TryFormatRow"/> writes (a GUID key, four values, two times: 36 + 2 * 11 + 2 * 27 + 4 * 24 bytes, 8 commas and the line end, 217) with room to spare.</summary>
    public const int MaxRowBytes = 256;

    /// <summary>
    /// Writes one row as a line of UTF-8 (with its <c>\n</c>) into <paramref name="destination"/>, formatting each value
    /// straight to bytes (no characters, no encoder); false when it does not fit (nothing usable was written). A
    /// destination of <see cref="MaxRowBytes"/> always fits.
    /// </summary>
    public static bool TryFormatRow(Span<byte> destination, in ArchiveRow row, KeyStrategy keys, int valueCount, out int written)
    {
        var reading = row.Reading;
        var invariant = CultureInfo.InvariantCulture;
        written = 0;
        int n;
        if (keys != KeyStrategy.Natural)
        {
            if (!row.Id.TryFormat(destination, out n, "D") || !Comma(destination, ref n))
            {
                return false;
            }

            written = n;
        }

        if (!reading.DeviceId.TryFormat(destination[written..], out n, default, invariant) || !Comma(destination[written..], ref n))
        {
            return false;
        }

        written += n;
        if (!reading.Channel.TryFormat(destination[written..], out n, default, invariant) || !Comma(destination[written..], ref n))
        {
            return false;
        }

        written += n;
        if (!TryFormatTime(destination[written..], reading.Timestamp, out n))
        {
            return false;
        }

        written += n;
        for (int i = 0; i < valueCount; i++)
        {
            if (!Put(destination, ref written, (byte)','))
            {
                return false;
            }

            double? value = ReadingTables.Value(reading, i);
            if (value.HasValue)
            {
                if (!TryFormatValue(destination[written..], value.GetValueOrDefault(), out n))
                {
                    return false;
                }

                written += n;
            }
        }

        if (!Put(destination, ref written, (byte)',') ||
            !TryFormatTime(destination[written..], reading.ReceivedAt, out n))
        {
            return false;
        }

        written += n;
        return Put(destination, ref written, (byte)'\n');
    }

    /// <summary>The length of a time as <see cref="TimeFormat"/> writes it (<c>2026-03-01T12:00:00.123456Z</c>).</summary>
    private const int TimeBytes = 27;

    /// <summary>
    /// <paramref name="time"/> as <see cref="TimeFormat"/> writes it (microseconds truncated, as <c>ffffff</c> does), written
    /// digit by digit: .NET's custom format parses its pattern for every value, and with four archiver workers the two
    /// times of a row were a seventh of the archiver's samples (docs/archiver.md#speed). A test holds it to <see cref="TimeFormat"/>.
    /// </summary>
    internal static bool TryFormatTime(Span<byte> destination, DateTime time, out int written)
    {
        written = 0;
        if (destination.Length < TimeBytes)
        {
            return false;
        }

        time.Deconstruct(out int year, out int month, out int day);
        long ofDay = time.Ticks % TimeSpan.TicksPerDay;
        int seconds = (int)(ofDay / TimeSpan.TicksPerSecond);
        int micros = (int)(ofDay % TimeSpan.TicksPerSecond / 10);
        Digits(destination[..4], year);
        destination[4] = (byte)'-';
        Digits(destination.Slice(5, 2), month);
        destination[7] = (byte)'-';
        Digits(destination.Slice(8, 2), day);
        destination[10] = (byte)'T';
        Digits(destination.Slice(11, 2), seconds / 3600);
        destination[13] = (byte)':';
        Digits(destination.Slice(14, 2), seconds / 60 % 60);
        destination[16] = (byte)':';
        Digits(destination.Slice(17, 2), seconds % 60);
        destination[19] = (byte)'.';
        Digits(destination.Slice(20, 6), micros);
        destination[26] = (byte)'Z';
        written = TimeBytes;
        return true;
    }

    /// <summary><paramref name="value"/> (not negative, below 10^length) as exactly <paramref name="destination"/>.Length digits, zero-padded.</summary>
    private static void Digits(Span<byte> destination, int value)
    {
        for (int i = destination.Length - 1; i >= 0; i--)
        {
            destination[i] = (byte)('0' + (value % 10));
            value /= 10;
        }
    }

    private static ReadOnlySpan<double> Scales => [1, 10, 100, 1000];

    /// <summary>
    /// <paramref name="value"/> in .NET's shortest round-trip form (<c>"R"</c>), the same bytes. What sensors send (whole
    /// numbers, or up to three decimals, below 10^9 in size) is written here as an integer and its decimals; the rest goes
    /// to .NET's formatter. Why that is the same text: for such a value and the fewest decimals d whose nearest d-decimal
    /// number n / 10^d gives the value back exactly (IEEE division of two exact integers is correctly rounded, as parsing
    /// is), that number is the shortest that round-trips, and no other with d decimals does (one unit in the last place of
    /// a double below 10^9 is under 10^-6). A test compares the two over many values.
    /// </summary>
    internal static bool TryFormatValue(Span<byte> destination, double value, out int written)
    {
        double magnitude = Math.Abs(value);
        if (magnitude is >= 1e-3 and < 1e9)
        {
            for (int d = 0; d < Scales.Length; d++)
            {
                double scaled = Math.Round(magnitude * Scales[d]);
                if (scaled / Scales[d] == magnitude)
                {
                    return TryFormatDecimal(destination, value < 0, (long)scaled, d, out written);
                }
            }
        }

        return value.TryFormat(destination, out written, "R", CultureInfo.InvariantCulture);
    }

    /// <summary><paramref name="units"/> / 10^<paramref name="decimals"/> with exactly that many decimals (the last not zero).</summary>
    private static bool TryFormatDecimal(Span<byte> destination, bool negative, long units, int decimals, out int written)
    {
        written = 0;
        long scale = (long)Scales[decimals];
        long whole = units / scale;
        int wholeDigits = 1;
        for (long rest = whole / 10; rest > 0; rest /= 10)
        {
            wholeDigits++;
        }

        int length = (negative ? 1 : 0) + wholeDigits + (decimals > 0 ? 1 + decimals : 0);
        if (destination.Length < length)
        {
            return false;
        }

        int at = 0;
        if (negative)
        {
            destination[at++] = (byte)'-';
        }

        Digits(destination.Slice(at, wholeDigits), (int)whole);
        at += wholeDigits;
        if (decimals > 0)
        {
            destination[at++] = (byte)'.';
            Digits(destination.Slice(at, decimals), (int)(units % scale));
        }

        written = length;
        return true;
    }

    private static bool Comma(Span<byte> destination, ref int written) => Put(destination, ref written, (byte)',');

    private static bool Put(Span<byte> destination, ref int written, byte value)
    {
        if (written >= destination.Length)
        {
            return false;
        }

        destination[written++] = value;
        return true;
    }

    /// <summary>Every row of an export file, in file order. Throws <see cref="InvalidDataException"/> on a malformed line.</summary>
    public static IEnumerable<ArchiveRow> Read(string path, ReadingKind kind, KeyStrategy keys)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16);
        Stream stream = IsGzip(path) ? new GZipStream(file, CompressionMode.Decompress) : file;
        using var reader = new StreamReader(stream, Encoding.UTF8, false, 1 << 16);
        string header = Header(kind, keys);
        string? first = reader.ReadLine();
        if (!string.Equals(first, header, StringComparison.Ordinal))
        {
            throw new InvalidDataException($"{path}: the header is '{first}', expected '{header}'.");
        }

        int valueCount = ReadingTables.ValueColumns(kind).Count;
        int expectedFields = ReadingTables.Columns(kind, keys).Count;
        var values = new double?[4];
        long line = 1;
        while (reader.ReadLine() is { } text)
        {
            line++;
            yield return ParseRow(text, kind, keys, valueCount, expectedFields, values, path, line);
        }
    }

    public static bool IsGzip(string path) => path.EndsWith(".gz", StringComparison.Ordinal);

    private static ArchiveRow ParseRow(string text, ReadingKind kind, KeyStrategy keys, int valueCount, int expectedFields,
        double?[] values, string path, long line) =>
        TryParseRow(text, kind, keys, valueCount, expectedFields, values, out var row, out string? error)
            ? row
            : throw new InvalidDataException($"{path} line {line}: {error}");

    /// <summary>One line of an export file as a row; false with the reason when it is not one.</summary>
    internal static bool TryParseRow(string text, ReadingKind kind, KeyStrategy keys, int valueCount, int expectedFields,
        double?[] values, out ArchiveRow row, out string? error)
    {
        row = default;
        error = null;
        try
        {
            var span = text.AsSpan();
            Span<Range> fields = stackalloc Range[9];
            int count = span.Split(fields, ',');
            if (count != expectedFields)
            {
                throw new FormatException($"{count} fields, expected {expectedFields}");
            }

            int f = 0;
            Guid id = keys == KeyStrategy.Natural ? Guid.Empty : Guid.ParseExact(span[fields[f++]], "D");
            int device = int.Parse(span[fields[f++]], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
            int channel = int.Parse(span[fields[f++]], NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture);
            var ts = ParseTime(span[fields[f++]]);
            Array.Clear(values);
            for (int i = 0; i < valueCount; i++)
            {
                var field = span[fields[f++]];
                values[i] = field.IsEmpty ? null : double.Parse(field, NumberStyles.Float, CultureInfo.InvariantCulture);
            }

            var received = ParseTime(span[fields[f]]);
            row = new ArchiveRow(id, new Reading(kind, device, channel, ts, received, values[0], values[1], values[2], values[3]));
            return true;
        }
        catch (Exception e) when (e is FormatException or OverflowException)
        {
            error = e.Message;
            return false;
        }
    }

    private static DateTime ParseTime(ReadOnlySpan<char> text) =>
        DateTime.ParseExact(text, TimeFormat, CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal);
}

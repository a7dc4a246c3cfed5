using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.Files;

public sealed class ExportFormatTests : IDisposable
{
    private readonly string _folder = Path.Combine(Path.GetTempPath(), $"saito-export-test-{Guid.NewGuid():N}");

    [Theory]
    [InlineData(KeyStrategy.Natural, false)]
    [InlineData(KeyStrategy.Guid, true)]
    public void An_export_file_reads_back_to_exactly_the_rows_written(KeyStrategy keys, bool gzip)
    {
        foreach (var kind in ReadingKinds.All)
        {
            var rows = TestReadings.Of(kind, 500).Select(r => new ArchiveRow(ReadingKeys.For(r, keys, StorageProvider.Postgres) ?? Guid.Empty, r)).ToList();
            string path = ExportFiles.DataPath(_folder, $"b-{kind}", kind, gzip);

            string sha = ExportFiles.WriteData(path, rows, kind, keys, gzip);

            ArchiveCsv.Read(path, kind, keys).ToList().ShouldBe(rows);
            sha.ShouldBe(ExportFiles.Sha256Of(path));
            File.Exists(path + ExportFiles.TempSuffix).ShouldBeFalse();
        }
    }

    [Fact]
    public void A_row_is_written_as_the_documented_csv_line()
    {
        var at = new DateTime(2026, 3, 1, 12, 0, 0, DateTimeKind.Utc).AddTicks(1_234_560);
        var id = Guid.Parse("0196f0c2-1b2a-7c3d-8e4f-5a6b7c8d9e0f");
        var rows = new List<ArchiveRow>
        {
            new(id, new Reading(ReadingKind.Biosensor, -7, 3, at, at.AddSeconds(1), 82, 0.1, null, -1.5e-300)),
            new(id, new Reading(ReadingKind.Biosensor, int.MaxValue, 0, at, at, double.MaxValue, double.MinValue, -0.0, double.Epsilon)),
        };
        string path = ExportFiles.DataPath(_folder, "golden", ReadingKind.Biosensor, gzip: false);

        ExportFiles.WriteData(path, rows, ReadingKind.Biosensor, KeyStrategy.Guid, gzip: false);

        File.ReadAllText(path).ShouldBe(
            ArchiveCsv.Header(ReadingKind.Biosensor, KeyStrategy.Guid) + "\n" +
            "0196f0c2-1b2a-7c3d-8e4f-5a6b7c8d9e0f,-7,3,2026-03-01T12:00:00.123456Z,82,0.1,,-1.5E-300,2026-03-01T12:00:01.123456Z\n" +
            "0196f0c2-1b2a-7c3d-8e4f-5a6b7c8d9e0f,2147483647,0,2026-03-01T12:00:00.123456Z,1.7976931348623157E+308,-1.7976931348623157E+308,-0,5E-324,2026-03-01T12:00:00.123456Z\n");
    }

    [Fact]
    public void A_time_is_written_byte_for_byte_as_the_documented_format_writes_it()
    {
        var random = new Random(20261127);
        var times = new List<DateTime>
        {
            DateTime.MinValue, DateTime.MaxValue, new(2024, 2, 29, 23, 59, 59, DateTimeKind.Utc),
            new DateTime(2026, 12, 31, 23, 59, 59, DateTimeKind.Utc).AddTicks(9_999_999), new(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc),
        };
        for (int i = 0; i < 100_000; i++)
        {
            times.Add(new DateTime(random.NextInt64(DateTime.MaxValue.Ticks + 1), DateTimeKind.Utc));
        }

        Span<byte> buffer = stackalloc byte[64];
        foreach (var time in times)
        {
            ArchiveCsv.TryFormatTime(buffer, time, out int written).ShouldBeTrue();
            System.Text.Encoding.ASCII.GetString(buffer[..written]).ShouldBe(time.ToString(ArchiveCsv.TimeFormat, System.Globalization.CultureInfo.InvariantCulture));
        }

        ArchiveCsv.TryFormatTime(buffer[..26], times[0], out _).ShouldBeFalse();
    }

    [Fact]
    public void A_value_is_written_byte_for_byte_as_dotnets_round_trip_form()
    {
        var random = new Random(20261127);
        var values = new List<double>
        {
            0, -0.0, double.NaN, double.PositiveInfinity, double.NegativeInfinity, double.Epsilon, double.MaxValue, double.MinValue,
            1e-3, 9.99e-4, 1e-4, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 999_999_999, 999_999_999.999, 1e9, 1e9 + 0.5, 123_456_789.125,
            72, 33.4, 36.6, -40.25, 1e15, 1e16, 123456789012345680, 0.000123, 5e-5,
        };
        for (int k = -100_000; k <= 100_000; k++)
        {
            values.Add(k);
            values.Add(k / 10.0);
            values.Add(k / 100.0);
            values.Add(k / 1000.0);
            values.Add(k / 10_000.0);
        }

        for (int i = 0; i < 200_000; i++)
        {
            // Every magnitude a double has (random bits), and numbers of a sensor's size with a random number of decimals.
            values.Add(BitConverter.Int64BitsToDouble(random.NextInt64()));
            values.Add(Math.Round((random.NextDouble() - 0.5) * Math.Pow(10, random.Next(0, 12)), random.Next(0, 6)));
        }

        Span<byte> buffer = stackalloc byte[64];
        foreach (double value in values)
        {
            ArchiveCsv.TryFormatValue(buffer, value, out int written).ShouldBeTrue();
            string text = System.Text.Encoding.ASCII.GetString(buffer[..written]);
            string expected = value.ToString("R", System.Globalization.CultureInfo.InvariantCulture);
            if (text != expected)
            {
                // Only on a difference: a Shouldly assertion for each of 1.4 million values would make the test slow.
                text.ShouldBe(expected, $"bits {BitConverter.DoubleToInt64Bits(value):x16}");
            }
        }

        ArchiveCsv.TryFormatValue(buffer[..3], 33.4, out _).ShouldBeFalse();
        ArchiveCsv.TryFormatValue(buffer[..4], -33.4, out _).ShouldBeFalse();
        ArchiveCsv.TryFormatValue(buffer[..5], -33.4, out int fits).ShouldBeTrue();
        fits.ShouldBe(5);
    }

    [Fact]
    public void Flushing_a_folder_works_on_a_real_folder_and_names_a_missing_one()
    {
        Directory.CreateDirectory(_folder);
        Should.NotThrow(() => ExportFiles.SyncDirectory(_folder));
        if (OperatingSystem.IsLinux())
        {
            // The call is real: a folder that is not there fails with its name (a no-op would pass silently).
            string missing = Path.Combine(_folder, "not-there");
            Should.Throw<IOException>(() => ExportFiles.SyncDirectory(missing)).Message.ShouldContain(missing);
        }
    }

    [Fact]
    public void A_malformed_line_is_reported_with_its_file_and_line_number()
    {
        var rows = TestReadings.Of(ReadingKind.Pressure, 3).Select(r => new ArchiveRow(Guid.Empty, r)).ToList();
        string path = ExportFiles.DataPath(_folder, "bad", ReadingKind.Pressure, gzip: false);
        ExportFiles.WriteData(path, rows, ReadingKind.Pressure, KeyStrategy.Natural, gzip: false);
        File.AppendAllText(path, "1,2,not-a-time,3,4\n");

        var error = Should.Throw<InvalidDataException>(() => ArchiveCsv.Read(path, ReadingKind.Pressure, KeyStrategy.Natural).ToList());

        error.Message.ShouldContain("line 5");
    }

    [Theory]
    [InlineData(1, 100, 4)]
    [InlineData(5, 6, 4)]
    [InlineData(0, uint.MaxValue, 3)]
    public void Slices_cover_the_range_without_gaps_or_overlaps(long min, long max, int parts)
    {
        var slices = ArchiveSlice.Split(ReadingKind.Biosensor, min, max, parts);

        slices[0].Low.ShouldBeNull();
        slices[^1].High.ShouldBeNull();
        for (int i = 1; i < slices.Count; i++)
        {
            slices[i].Low.ShouldBe(slices[i - 1].High + 1);
        }

        slices.Count.ShouldBeLessThanOrEqualTo(parts);
    }

    [Fact]
    public void A_key_written_as_text_parses_back()
    {
        var natural = RowKey.Natural(7, 3, 1_772_366_400_123_456);
        var id = RowKey.ForId(Guid.NewGuid());

        RowKey.Parse(natural.ToString()).ShouldBe(natural);
        RowKey.Parse(id.ToString()).ShouldBe(id);
    }

    public void Dispose()
    {
        if (Directory.Exists(_folder))
        {
            Directory.Delete(_folder, recursive: true);
        }
    }
}

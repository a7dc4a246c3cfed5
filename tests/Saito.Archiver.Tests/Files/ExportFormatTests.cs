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

using System.IO.Compression;
using System.Text;
using System.Text.Json;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Readings;
using Saito.Storage.Archive;
using Saito.Storage.Keys;

namespace Saito.Archiver.Tests.Restore;

/// <summary>
/// <c>saito-archiver restore</c> (the real process, on SQLite files) on a folder someone crafted (issue 32, item 10):
/// link loops, a gzip bomb, rows ingestion would never have stored, a bad line among good ones, and SIGTERM.
/// </summary>
public sealed class RestoreAttackTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static string[] Settings(ArchiveTestStorage storage) => storage.Settings().Select(s => "--" + s).ToArray();

    private static async Task<SqliteArchiveTestStorage> StorageWithDevicesAsync()
    {
        var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);
        await storage.RegisterDevicesAsync(3);
        return storage;
    }

    /// <summary>A genuine-looking biosensor export in <paramref name="folder"/>: its lines as given, a manifest with their SHA-256.</summary>
    private static string WriteExport(string folder, string name, IEnumerable<string> lines, long? rows = null, bool gzip = false)
    {
        Directory.CreateDirectory(folder);
        string data = Path.Combine(folder, name + (gzip ? ".csv.gz" : ".csv"));
        var all = lines.ToList();
        using (var file = File.Create(data))
        using (Stream target = gzip ? new GZipStream(file, CompressionLevel.Fastest) : file)
        {
            target.Write(Encoding.UTF8.GetBytes(ArchiveCsv.Header(ReadingKind.Biosensor, KeyStrategy.Natural) + "\n"));
            foreach (string line in all)
            {
                target.Write(Encoding.UTF8.GetBytes(line + "\n"));
            }
        }

        ExportFiles.WriteManifest(data, new ExportManifest
        {
            BatchId = name,
            Kind = "biosensor",
            KeyStrategy = "natural",
            Table = "reading_biosensor",
            File = Path.GetFileName(data),
            Gzip = gzip,
            Rows = rows ?? all.Count,
            Sha256 = ExportFiles.Sha256Of(data),
            CutoffUtc = DateTime.UtcNow,
            CreatedUtc = DateTime.UtcNow,
        });
        return data;
    }

    /// <summary>Export lines of biosensor readings within ingestion's ranges on devices 1..3.</summary>
    private static List<string> GoodLines(int count, int firstIndex = 0)
    {
        var lines = new List<string>();
        var buffer = new byte[ArchiveCsv.MaxRowBytes];
        foreach (var reading in RestorableReadings.Of(ReadingKind.Biosensor, count, firstIndex))
        {
            ArchiveCsv.TryFormatRow(buffer, new ArchiveRow(Guid.Empty, reading), KeyStrategy.Natural, 4, out int written).ShouldBeTrue();
            lines.Add(Encoding.UTF8.GetString(buffer, 0, written - 1));
        }

        return lines;
    }

    /// <summary>A good line with one field replaced (device_id 0, channel 1, ts 2, hr 3, sys 4, dia 5, temp 6, received_at 7).</summary>
    private static string With(string line, params (int Field, string Value)[] changes)
    {
        var fields = line.Split(',');
        foreach (var (field, value) in changes)
        {
            fields[field] = value;
        }

        return string.Join(',', fields);
    }

    [Fact]
    public async Task Restore_skips_each_bad_line_names_it_keeps_it_in_a_rejects_file_and_restores_the_good_ones()
    {
        await using var storage = await StorageWithDevicesAsync();
        var good = GoodLines(20);
        var spare = GoodLines(9, firstIndex: 100);
        var bad = new (string Line, string Reason)[]
        {
            ("not,a,row", "fields, expected 8"),
            (With(spare[0], (3, "NaN")), "hr NaN is not a finite number"),
            (With(spare[1], (3, "Infinity")), "is not a finite number"),
            (With(spare[2], (3, "1e308")), "hr 1E+308 is outside 20..300"),
            (With(spare[3], (0, "999")), "device id 999 is not in the device registry"),
            (With(spare[4], (0, "-1")), "device id -1: the device registry's ids start at 1"),
            (With(spare[5], (4, "120"), (5, "130")), "dia 130 is not below sys 120"),
            (new string('9', 5000), "longer than 256 bytes"),
            (With(spare[6], (1, "\u001b[31mforged")), "\\x1b[31mforged"),
        };
        // Good and bad lines interleaved, a bad one first: the run must go on past each.
        var lines = new List<string>();
        for (int i = 0; i < good.Count; i++)
        {
            if (i < bad.Length)
            {
                lines.Add(bad[i].Line);
            }

            lines.Add(good[i]);
        }

        // The manifest claims room for the 5,000-byte line (rows x 256 bytes bound the file's size).
        string data = WriteExport(Path.Combine(storage.ExportDirectory, "biosensor"), "crafted", lines, rows: lines.Count + 20);
        string rejectsFile = Path.Combine(storage.Folder, "rejects.tsv");

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(
            ["restore", storage.ExportDirectory, "--into", "hot", "--json", "--rejects", rejectsFile, .. Settings(storage)]);

        exitCode.ShouldBe(1, stdout + stderr);
        using var summary = JsonDocument.Parse(stdout);
        summary.RootElement.GetProperty("rowsInserted").GetInt64().ShouldBe(good.Count, stdout);
        summary.RootElement.GetProperty("rowsRejected").GetInt64().ShouldBe(bad.Length);
        summary.RootElement.GetProperty("rejectsFile").GetString().ShouldBe(rejectsFile);
        var problems = summary.RootElement.GetProperty("problems").EnumerateArray().Select(p => p.GetString()!).ToList();
        problems.Count.ShouldBe(bad.Length);
        for (int i = 0; i < bad.Length; i++)
        {
            // Header on line 1, then bad i on line 2 + 2i.
            problems[i].ShouldStartWith($"{data}:{2 + (2 * i)}: ");
            problems[i].ShouldContain(bad[i].Reason);
        }

        stderr.ShouldNotContain("\u001b", Case.Sensitive, "a crafted line's control characters never reach the log");
        (await storage.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(good.Count);
        var rejected = File.ReadAllLines(rejectsFile).Where(l => !l.StartsWith('#')).ToList();
        rejected.Count.ShouldBe(bad.Length);
        for (int i = 0; i < bad.Length; i++)
        {
            var columns = rejected[i].Split('\t');
            columns[0].ShouldBe(data);
            columns[1].ShouldBe($"{2 + (2 * i)}");
            columns[3].ShouldBe(bad[i].Line.Length > 256 ? string.Empty : bad[i].Line, "the line as it was, so nothing is lost");
        }
    }

    [Fact]
    public async Task Restore_does_not_follow_a_folder_link_loop_and_names_the_links_it_skipped()
    {
        await using var storage = await StorageWithDevicesAsync();
        string folder = Path.Combine(storage.ExportDirectory, "biosensor");
        WriteExport(folder, "genuine", GoodLines(30));
        // Three links back up the tree: followed, they make 3^depth paths to walk (the hang of issue 32).
        File.CreateSymbolicLink(Path.Combine(folder, "up"), "..");
        File.CreateSymbolicLink(Path.Combine(folder, "up2"), "..");
        File.CreateSymbolicLink(Path.Combine(storage.ExportDirectory, "self"), ".");

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(
            ["restore", storage.ExportDirectory, "--into", "hot", "--json", .. Settings(storage)], TimeSpan.FromSeconds(60));

        exitCode.ShouldBe(0, stdout + stderr);
        using var summary = JsonDocument.Parse(stdout);
        summary.RootElement.GetProperty("files").GetInt32().ShouldBe(1);
        summary.RootElement.GetProperty("rowsInserted").GetInt64().ShouldBe(30);
        var links = summary.RootElement.GetProperty("skippedLinks").EnumerateArray().Select(l => l.GetString()!).ToList();
        links.Count.ShouldBe(3);
        links.ShouldContain(l => l.StartsWith(Path.Combine(folder, "up") + " -> ..", StringComparison.Ordinal));
        links.ShouldContain(l => l.StartsWith(Path.Combine(storage.ExportDirectory, "self") + " -> .", StringComparison.Ordinal));
        stderr.ShouldContain("did not follow the symbolic link");
    }

    [Fact]
    public async Task Restore_refuses_a_gzip_bomb_by_its_decompressed_size_and_reads_nothing_of_it()
    {
        await using var storage = await StorageWithDevicesAsync();
        string folder = Path.Combine(storage.ExportDirectory, "biosensor");
        // 40 MB of one valid line, a few tens of KB compressed: once claiming 10 rows (held to its manifest), once
        // claiming 5,000,000 (held to Archiver:RestoreMaxFileMegabytes, here 8).
        string line = GoodLines(1)[0];
        WriteExport(folder, "bomb-small-manifest", Enumerable.Repeat(line, 40_000_000 / (line.Length + 1)), rows: 10, gzip: true);
        WriteExport(folder, "bomb-large-manifest", Enumerable.Repeat(line, 40_000_000 / (line.Length + 1)), rows: 5_000_000, gzip: true);
        new FileInfo(Path.Combine(folder, "bomb-small-manifest.csv.gz")).Length.ShouldBeLessThan(1_000_000);

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(
            ["restore", storage.ExportDirectory, "--into", "hot", "--json", "--Archiver:RestoreMaxFileMegabytes=8", .. Settings(storage)]);

        exitCode.ShouldBe(1, stdout + stderr);
        using var summary = JsonDocument.Parse(stdout);
        var problems = summary.RootElement.GetProperty("problems").EnumerateArray().Select(p => p.GetString()!).ToList();
        problems.Count.ShouldBe(2);
        problems.ShouldContain(p => p.Contains("bomb-small-manifest.csv.gz", StringComparison.Ordinal)
                                    && p.Contains($"decompresses to more than {ArchiveCsv.Header(ReadingKind.Biosensor, KeyStrategy.Natural).Length + 1 + (10 * 256):N0} bytes", StringComparison.Ordinal)
                                    && p.Contains("gzip bomb", StringComparison.Ordinal));
        problems.ShouldContain(p => p.Contains("bomb-large-manifest.csv.gz", StringComparison.Ordinal)
                                    && p.Contains($"decompresses to more than {8L << 20:N0} bytes", StringComparison.Ordinal));
        summary.RootElement.GetProperty("rowsRead").GetInt64().ShouldBe(0);
        (await storage.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(0);
    }

    [Fact]
    public async Task Restore_stopped_with_SIGTERM_ends_cleanly_with_a_message_and_exit_code_130()
    {
        await using var storage = await StorageWithDevicesAsync();
        WriteExport(Path.Combine(storage.ExportDirectory, "biosensor"), "genuine", GoodLines(30));
        string resume = Path.Combine(storage.Folder, "resume");
        using var archiver = ArchiverProcess.Start(["restore", storage.ExportDirectory, "--into", "hot", .. Settings(storage)],
            new Dictionary<string, string>
            {
                [ArchivePausePoints.EnvironmentVariable] = ArchivePausePoints.RestoreFile,
                [ArchivePausePoints.ResumeFileVariable] = resume,
            });
        (await archiver.WaitForPauseAsync(TimeSpan.FromSeconds(60))).ShouldBeTrue(archiver.Stderr);

        archiver.Terminate();
        await File.WriteAllTextAsync(resume, "go", Token);
        var (exitCode, stdout, stderr) = await ArchiverProcess.WaitAsync(archiver);

        exitCode.ShouldBe(130, stdout + stderr);
        stderr.ShouldContain("saito-archiver stopped: it was asked to stop (SIGTERM or Ctrl+C) before it finished");
        stderr.ShouldNotContain("Unhandled exception");
        (await storage.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(0);
    }
}

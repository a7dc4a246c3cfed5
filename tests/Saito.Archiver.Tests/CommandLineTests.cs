using System.Globalization;
using System.Text.Json;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests;

/// <summary>saito-archiver as a scheduler sees it: exit codes, JSON on stdout, messages that name the problem.</summary>
public sealed class CommandLineTests
{
    private static readonly DateTime Cutoff = TestReadings.Start.AddMilliseconds(600);

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static string[] Settings(ArchiveTestStorage storage) => storage.Settings().Select(s => "--" + s).ToArray();

    private static async Task<SqliteArchiveTestStorage> SeededAsync()
    {
        // Within ingestion's ranges, on registered devices: readings restore takes back.
        var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);
        await storage.RegisterDevicesAsync(3);
        await storage.WriteAsync(RestorableReadings.All(1000));
        return storage;
    }

    [Fact]
    public async Task Run_without_a_cutoff_exits_with_code_2_and_says_what_to_give()
    {
        await using var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);

        var (exitCode, _, stderr) = await ArchiverProcess.RunAsync(["run", .. Settings(storage)]);

        exitCode.ShouldBe(2);
        stderr.ShouldContain("--older-than 7d");
    }

    [Fact]
    public async Task An_invalid_setting_exits_with_code_2_and_names_it()
    {
        await using var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);

        var (exitCode, _, stderr) = await ArchiverProcess.RunAsync(["run", "--older-than", "7d", .. Settings(storage), "--Storage:BatchSize=0", "--batch-rows", "0"]);

        exitCode.ShouldBe(2);
        stderr.ShouldContain("Storage:BatchSize");
        stderr.ShouldContain("--batch-rows");
    }

    [Fact]
    public async Task An_unknown_option_exits_with_code_2()
    {
        var (exitCode, _, stderr) = await ArchiverProcess.RunAsync(["run", "--older-than", "7d", "--colour", "blue"]);

        exitCode.ShouldBe(2);
        stderr.ShouldContain("--colour");
    }

    [Fact]
    public async Task Run_with_nothing_older_than_the_cutoff_exits_with_code_3()
    {
        await using var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(["run", "--older-than", "7d", .. Settings(storage)]);

        exitCode.ShouldBe(3, stdout + stderr);
        stdout.ShouldContain("Nothing to do");
    }

    [Fact]
    public async Task Run_with_json_prints_a_summary_a_script_can_read()
    {
        await using var storage = await SeededAsync();

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(
            ["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--json", "--export-dir", storage.ExportDirectory, .. Settings(storage)]);

        exitCode.ShouldBe(0, stderr);
        using var summary = JsonDocument.Parse(stdout);
        summary.RootElement.GetProperty("rowsMoved").GetInt64().ShouldBe(1800);
        summary.RootElement.GetProperty("dryRun").GetBoolean().ShouldBeFalse();
        summary.RootElement.GetProperty("kinds").GetArrayLength().ShouldBe(3);
        stderr.ShouldContain("rows deleted from reading_pressure");
    }

    [Fact]
    public async Task Dry_run_with_json_counts_and_leaves_the_tables_alone()
    {
        await using var storage = await SeededAsync();

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(
            ["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--dry-run", "--json", "--kind", "location", .. Settings(storage)]);

        exitCode.ShouldBe(0, stderr);
        using var summary = JsonDocument.Parse(stdout);
        summary.RootElement.GetProperty("rowsOlder").GetInt64().ShouldBe(600);
        summary.RootElement.GetProperty("rowsMoved").GetInt64().ShouldBe(0);
        (await storage.Store.CountAsync(Saito.Readings.ReadingKind.Location, StorageTier.Hot, Token)).ShouldBe(1000);
        (await storage.Store.CountAsync(Saito.Readings.ReadingKind.Location, StorageTier.Archive, Token)).ShouldBe(0);
    }

    [Fact]
    public async Task Verify_exits_with_code_1_and_names_the_batch_when_an_export_was_tampered_with()
    {
        await using var storage = await SeededAsync();
        var run = await ArchiverProcess.RunAsync(["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--export-dir", storage.ExportDirectory, .. Settings(storage)]);
        run.ExitCode.ShouldBe(0, run.Stderr);
        string file = Directory.EnumerateFiles(storage.ExportDirectory, "*.csv", SearchOption.AllDirectories).First();
        File.WriteAllText(file, File.ReadAllText(file).Replace("2026-03-01T12:00:00.1", "2026-03-01T12:00:00.2", StringComparison.Ordinal));

        var (exitCode, stdout, _) = await ArchiverProcess.RunAsync(["verify", .. Settings(storage)]);

        exitCode.ShouldBe(1);
        stdout.ShouldContain(Path.GetFileNameWithoutExtension(file));
        stdout.ShouldContain("changed or damaged");
    }

    [Fact]
    public async Task Output_into_a_pipe_or_file_carries_no_colour_codes_even_when_TERM_says_colours_would_show()
    {
        await using var storage = await SeededAsync();

        // Nothing archived yet: verify finds no journal and says so as a problem, which a terminal would show in red.
        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(["verify", .. Settings(storage)],
            environment: new Dictionary<string, string> { ["TERM"] = "xterm-256color", ["COLORTERM"] = "truecolor" });

        exitCode.ShouldNotBe(0);
        stdout.ShouldContain("problem:");
        stdout.ShouldNotContain("\u001b", customMessage: "an escape sequence in: " + stdout);
        stderr.ShouldNotContain("\u001b");
    }

    [Fact]
    public async Task Restore_into_the_hot_tier_from_the_command_line_puts_rows_back()
    {
        await using var storage = await SeededAsync();
        var run = await ArchiverProcess.RunAsync(["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--export-dir", storage.ExportDirectory, .. Settings(storage)]);
        run.ExitCode.ShouldBe(0, run.Stderr);

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(["restore", storage.ExportDirectory, "--into", "hot", "--json", .. Settings(storage)]);

        exitCode.ShouldBe(0, stderr);
        using var summary = JsonDocument.Parse(stdout);
        summary.RootElement.GetProperty("rowsInserted").GetInt64().ShouldBe(1800);
        (await storage.Store.CountAsync(Saito.Readings.ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(1000);
    }

    [Fact]
    public async Task A_dry_run_where_no_database_exists_exits_with_code_2_and_creates_nothing()
    {
        string folder = Path.Combine(Path.GetTempPath(), $"saito-archiver-empty-{Guid.NewGuid():N}");

        var (exitCode, _, stderr) = await ArchiverProcess.RunAsync(
            ["run", "--older-than", "7d", "--dry-run", $"--Storage:HotPath={folder}/hot", $"--Storage:ArchivePath={folder}/archive"]);

        exitCode.ShouldBe(2);
        stderr.ShouldContain("start Saito once");
        Directory.Exists(folder).ShouldBeFalse();
    }

    [Fact]
    public async Task Restore_refuses_manifests_whose_file_leaves_their_folder_and_still_restores_the_others()
    {
        await using var storage = await SeededAsync();
        var run = await ArchiverProcess.RunAsync(["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--export-dir", storage.ExportDirectory, .. Settings(storage)]);
        run.ExitCode.ShouldBe(0, run.Stderr);

        // A genuine export of 50 readings no one has seen (devices 900..), written outside the export folder, and three
        // manifests beside the real ones that point at it: by '..', by absolute path, and through a symbolic link.
        string folder = Path.Combine(storage.ExportDirectory, "biosensor");
        string outside = Path.Combine(Path.GetDirectoryName(storage.ExportDirectory)!, "elsewhere", "stolen.csv");
        var rows = TestReadings.Of(ReadingKind.Biosensor, 50, firstDevice: 900).Select(RestorableReadings.Plausible).Select(r => new ArchiveRow(Guid.Empty, r)).ToList();
        string sha = ExportFiles.WriteData(outside, rows, ReadingKind.Biosensor, KeyStrategy.Natural, gzip: false);
        var genuine = ExportFiles.ReadManifest(Directory.EnumerateFiles(folder, "*.manifest.json").First());
        File.CreateSymbolicLink(Path.Combine(folder, "linked.csv"), outside);
        var crafted = new Dictionary<string, string>
        {
            ["dotdot"] = Path.Combine("..", "..", "elsewhere", "stolen.csv"),
            ["absolute"] = outside,
            ["symlink"] = "linked.csv",
        };
        foreach (var (name, file) in crafted)
        {
            ExportFiles.WriteManifest(Path.Combine(folder, name + ".csv"), genuine with { BatchId = name, File = file, Rows = rows.Count, Sha256 = sha });
        }

        (await storage.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(400, "600 were moved out");
        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(["restore", storage.ExportDirectory, "--into", "hot", "--json", .. Settings(storage)]);

        exitCode.ShouldBe(1, stderr);
        using var summary = JsonDocument.Parse(stdout);
        var problems = summary.RootElement.GetProperty("problems").EnumerateArray().Select(p => p.GetString()!).ToList();
        problems.Count.ShouldBe(3);
        foreach (var (name, file) in crafted)
        {
            problems.ShouldContain(p => p.Contains(name + ".manifest.json", StringComparison.Ordinal) && p.Contains($"\"{file}\"", StringComparison.Ordinal)
                                        && p.Contains("nothing was read from it", StringComparison.Ordinal));
        }

        summary.RootElement.GetProperty("rowsInserted").GetInt64().ShouldBe(1800, "every genuine export is restored");
        (await storage.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Token)).ShouldBe(1000, "none of the 50 readings outside the folder");
    }
}

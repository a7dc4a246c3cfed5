using System.Globalization;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.Contract;

/// <summary>
/// kill -9 at every step of a batch: the archiver runs as its own process, pauses at the named step
/// (<see cref="ArchivePausePoints"/>), and is SIGKILLed there; then a second run must finish the job and leave every
/// reading exactly once, in the right tier, with every export whole.
/// </summary>
public abstract partial class ArchiverContractTests
{
    /// <summary>Whether the hot delete and the journal's "done" are one transaction (journal beside the hot table).</summary>
    protected virtual bool DeleteCommitsWithDone => false;

    public static TheoryData<string> PausePoints => new(ArchivePausePoints.All);

    protected static List<string> RunArguments(ArchiveTestStorage storage, params string[] extra) =>
    [
        "run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--batch-rows", "128",
        "--export-dir", storage.ExportDirectory, .. extra, .. storage.Settings().Select(s => "--" + s),
    ];

    [Theory]
    [MemberData(nameof(PausePoints))]
    public async Task A_run_killed_at_any_step_is_finished_by_the_next_run(string step)
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        var arguments = RunArguments(storage);
        using (var killed = ArchiverProcess.Start(arguments, new Dictionary<string, string> { [ArchivePausePoints.EnvironmentVariable] = step }))
        {
            (await killed.WaitForPauseAsync(TimeSpan.FromSeconds(60))).ShouldBeTrue($"it ended before {step}:\n{killed.Stderr}");
            killed.KillHard();
        }

        // Right after the kill nothing is lost: every reading is in one tier or (mid-batch) both.
        var (hotAfterKill, archiveAfterKill) = await TiersAsync(storage);
        hotAfterKill.Concat(archiveAfterKill).Distinct().Count().ShouldBe(Total * 3);

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(arguments);

        exitCode.ShouldBe(0, $"{stdout}\n{stderr}");
        if (step != "done" && !(step == "deleted" && DeleteCommitsWithDone))
        {
            stderr.ShouldContain("Resuming batch");
        }

        await ShouldBeMovedExactlyAsync(storage);
        Directory.EnumerateFiles(storage.ExportDirectory, "*" + ExportFiles.TempSuffix, SearchOption.AllDirectories).ShouldBeEmpty();
        var verify = await ArchiverProcess.RunAsync(["verify", .. storage.Settings().Select(s => "--" + s)]);
        verify.ExitCode.ShouldBe(0, verify.Stdout + verify.Stderr);
    }

    [Fact]
    public async Task A_run_killed_mid_delete_with_guid_keys_is_finished_by_the_next_run()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Guid);
        var arguments = RunArguments(storage, "--threads", "2", "--gzip");
        using (var killed = ArchiverProcess.Start(arguments, new Dictionary<string, string> { [ArchivePausePoints.EnvironmentVariable] = "delete-uncommitted" }))
        {
            (await killed.WaitForPauseAsync(TimeSpan.FromSeconds(60))).ShouldBeTrue(killed.Stderr);
            killed.KillHard();
        }

        var (exitCode, stdout, stderr) = await ArchiverProcess.RunAsync(arguments);

        exitCode.ShouldBe(0, $"{stdout}\n{stderr}");
        await ShouldBeMovedExactlyAsync(storage);
    }

    [Fact]
    public async Task A_second_run_while_one_is_paused_mid_batch_does_nothing_and_says_why()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        var arguments = RunArguments(storage);
        using var first = ArchiverProcess.Start(arguments, new Dictionary<string, string> { [ArchivePausePoints.EnvironmentVariable] = "exported" });
        (await first.WaitForPauseAsync(TimeSpan.FromSeconds(60))).ShouldBeTrue(first.Stderr);

        var (exitCode, stdout, _) = await ArchiverProcess.RunAsync(arguments);

        exitCode.ShouldBe(1);
        stdout.ShouldContain("Another saito-archiver run");
        first.KillHard();
        (await ArchiverProcess.RunAsync(arguments)).ExitCode.ShouldBe(0);
        await ShouldBeMovedExactlyAsync(storage);
    }

    [Fact]
    public async Task A_reading_that_arrives_inside_a_batch_s_key_range_while_it_moves_stays_in_hot()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        var arguments = RunArguments(storage, "--kind", "pressure");
        string resume = Path.Combine(Path.GetTempPath(), $"saito-archiver-resume-{Guid.NewGuid():N}");
        using var run = ArchiverProcess.Start(arguments, new Dictionary<string, string>
        {
            [ArchivePausePoints.EnvironmentVariable] = "exported",
            // The batch waits until this test has written, however busy the machine (at most 120 s).
            [ArchivePausePoints.SecondsVariable] = "120",
            [ArchivePausePoints.ResumeFileVariable] = resume,
        });
        (await run.WaitForPauseAsync(TimeSpan.FromSeconds(60))).ShouldBeTrue(run.Stderr);
        // Between the first batch's first and last key (device 1, channel 0), older than the cutoff, a key nobody has.
        var seeded = TestReadings.One(ReadingKind.Pressure, 0, devices: Devices);
        var late = Reading.Pressure(seeded.DeviceId, seeded.Channel, seeded.Timestamp.AddTicks(10), seeded.ReceivedAt, 42.5);
        await storage.WriteAsync([late]);
        await File.WriteAllTextAsync(resume, "go", Token);

        var (exitCode, stdout, stderr) = await ArchiverProcess.WaitAsync(run);
        File.Delete(resume);

        exitCode.ShouldBe(0, stdout + stderr);
        var hot = await storage.ReadAllAsync(ReadingKind.Pressure, StorageTier.Hot, DeviceIds);
        var archive = await storage.ReadAllAsync(ReadingKind.Pressure, StorageTier.Archive, DeviceIds);
        hot.ShouldContain(late);
        archive.ShouldNotContain(late);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(TestReadings.Of(ReadingKind.Pressure, Old, 0, devices: Devices)));
        hot.Count.ShouldBe(Total - Old + 1);
    }
}

using System.Globalization;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.Contract;

/// <summary>Restore on every database: into a tier that was lost, and verify afterwards (issue 32, item 14).</summary>
public abstract partial class ArchiverContractTests
{
    protected static List<Reading> Restorable(IEnumerable<Reading> readings) => readings.Select(RestorableReadings.Plausible).ToList();

    /// <summary>Devices 1..<see cref="Devices"/> registered and <see cref="Total"/> readings of each kind within ingestion's ranges.</summary>
    protected async Task<ArchiveTestStorage> RestorableSeededAsync(KeyStrategy keys)
    {
        var storage = await CreateStorageAsync(keys);
        await storage.RegisterDevicesAsync(Devices);
        await storage.WriteAsync(Restorable(Readings(0, Total)));
        return storage;
    }

    protected static ArchiveRestoreRequest RestoreRequest(IReadOnlyList<string> sources, string into) => new()
    {
        Sources = sources,
        Into = into,
        MaxFutureSkew = TimeSpan.FromMinutes(5),
        MaxAge = TimeSpan.FromDays(30),
    };

    [Fact]
    public async Task Restore_into_a_lost_archive_tier_creates_its_tables_and_then_verify_says_it_has_nothing_to_check_against()
    {
        await using var storage = await RestorableSeededAsync(KeyStrategy.Natural);
        string[] settings = storage.Settings().Select(s => "--" + s).ToArray();
        var run = await ArchiverProcess.RunAsync(
            ["run", "--before", Cutoff.ToString("O", CultureInfo.InvariantCulture), "--export-dir", storage.ExportDirectory, .. settings]);
        run.ExitCode.ShouldBe(0, run.Stdout + run.Stderr);
        int exports = Directory.EnumerateFiles(storage.ExportDirectory, "*.manifest.json", SearchOption.AllDirectories).Count();
        exports.ShouldBeGreaterThan(0);

        await storage.LoseArchiveTierAsync();
        var restore = await ArchiverProcess.RunAsync(["restore", storage.ExportDirectory, "--into", "archive", .. settings]);

        restore.ExitCode.ShouldBe(0, restore.Stdout + restore.Stderr);
        restore.Stdout.ShouldContain("Created what was missing of the schema first");
        var (hot, archive) = await TiersAsync(storage);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(Restorable(OldReadings)));
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(Restorable(NewReadings)));

        // The journal went with the lost tier: verify must not call 0 batches OK.
        var verify = await ArchiverProcess.RunAsync(["verify", "--export-dir", storage.ExportDirectory, .. settings]);

        verify.ExitCode.ShouldBe(1, verify.Stdout + verify.Stderr);
        verify.Stdout.ShouldContain("the archive journal");
        verify.Stdout.ShouldContain("is empty or missing: nothing to verify against");
        verify.Stdout.ShouldContain($"{exports} export file(s) found in {Path.GetFullPath(storage.ExportDirectory)}");
        verify.Stdout.ShouldNotContain("OK");
    }
}

using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.Contract;

/// <summary>
/// What the archiver does on every database, written once; a subclass per database supplies the storage.
/// Each kind gets <see cref="Total"/> readings about a millisecond apart, on <see cref="Devices"/> devices; the
/// first <see cref="Old"/> of them are older than <see cref="Cutoff"/>.
/// </summary>
public abstract partial class ArchiverContractTests
{
    protected const int Total = 1000;
    protected const int Old = 600;
    protected const int Devices = 6;
    protected static readonly DateTime Cutoff = TestReadings.Start.AddMilliseconds(Old);

    protected static CancellationToken Token => TestContext.Current.CancellationToken;

    protected abstract Task<ArchiveTestStorage> CreateStorageAsync(KeyStrategy keys);

    protected static IEnumerable<int> DeviceIds => Enumerable.Range(1, Devices);

    protected static List<Reading> Readings(int first, int count) =>
        ReadingKinds.All.SelectMany(kind => TestReadings.Of(kind, count, first, devices: Devices)).ToList();

    protected static List<Reading> OldReadings => Readings(0, Old);

    protected static List<Reading> NewReadings => Readings(Old, Total - Old);

    protected static async Task<ArchiveTestStorage> SeededAsync(Func<KeyStrategy, Task<ArchiveTestStorage>> create, KeyStrategy keys)
    {
        var storage = await create(keys);
        await storage.WriteAsync(Readings(0, Total));
        return storage;
    }

    protected static async Task<(List<Reading> Hot, List<Reading> Archive)> TiersAsync(ArchiveTestStorage storage, IEnumerable<int>? devices = null)
    {
        var hot = new List<Reading>();
        var archive = new List<Reading>();
        foreach (var kind in ReadingKinds.All)
        {
            hot.AddRange(await storage.ReadAllAsync(kind, StorageTier.Hot, devices ?? DeviceIds));
            archive.AddRange(await storage.ReadAllAsync(kind, StorageTier.Archive, devices ?? DeviceIds));
        }

        return (hot, archive);
    }

    /// <summary>Old readings exactly in the archive, new ones exactly in hot, the union unchanged (count and checksum), verify clean.</summary>
    /// <summary>
    /// Runs the archiver on 5-row batches over every slice, so each worker (and a lone worker's second batch in flight)
    /// opens and closes connections as fast as it can, while <paramref name="sessions"/> (another connection) counts the
    /// archiver's sessions on the server: they never exceed one per worker plus three (docs/archiver.md#connections).
    /// </summary>
    protected static async Task ShouldStayWithinItsConnectionsAsync(ArchiveTestStorage storage, int threads, Func<Task<long>> sessions)
    {
        await using var archiver = storage.CreateArchiver();
        var run = archiver.RunAsync(Request(storage, batchRows: 5, threads: threads), Token);
        long peak = 0;
        int samples = 0;
        while (!run.IsCompleted)
        {
            peak = Math.Max(peak, await sessions());
            samples++;
        }

        var summary = await run;
        summary.Failures.ShouldBeEmpty();
        summary.RowsMoved.ShouldBe(OldReadings.Count);
        samples.ShouldBeGreaterThan(0);
        peak.ShouldBeGreaterThan(0, "the sampler saw the archiver's connections");
        ArchiveConnections.Max(threads).ShouldBe(threads + 3);
        peak.ShouldBeLessThanOrEqualTo(ArchiveConnections.Max(threads));
        await ShouldBeMovedExactlyAsync(storage);
    }

    protected static async Task ShouldBeMovedExactlyAsync(ArchiveTestStorage storage)
    {
        var (hot, archive) = await TiersAsync(storage);
        archive.Count.ShouldBe(OldReadings.Count);
        hot.Count.ShouldBe(NewReadings.Count);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(OldReadings));
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(NewReadings));
        ReadingSets.Checksum(hot.Concat(archive)).ShouldBe(ReadingSets.Checksum(Readings(0, Total)));
        await using var archiver = storage.CreateArchiver();
        var report = await archiver.VerifyAsync(ReadingKinds.All, Token);
        report.Problems.ShouldBeEmpty();
        report.RowsChecked.ShouldBe(OldReadings.Count);
    }

    protected static ArchiveRunRequest Request(ArchiveTestStorage storage, int batchRows = 128, int threads = 1, bool gzip = false, bool dryRun = false) => new()
    {
        Kinds = ReadingKinds.All,
        Cutoff = Cutoff,
        BatchRows = batchRows,
        Threads = threads,
        Gzip = gzip,
        DryRun = dryRun,
        ExportDirectory = storage.ExportDirectory,
    };

    [Fact]
    public async Task A_run_is_counted_on_the_archiver_meter_by_kind_and_stage()
    {
        // The meter is one per process and other tests archive at the same time: their rows only add.
        var moved = new Dictionary<string, long>(StringComparer.Ordinal);
        var stages = new Dictionary<string, long>(StringComparer.Ordinal);
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ArchiverMetrics.MeterName)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
        {
            if (instrument.Name == "saito.archiver.rows.moved")
            {
                lock (moved)
                {
                    string kind = (string)tags[0].Value!;
                    moved[kind] = moved.GetValueOrDefault(kind) + value;
                }
            }
        });
        listener.SetMeasurementEventCallback<double>((instrument, _, tags, _) =>
        {
            if (instrument.Name == "saito.archiver.batch.duration")
            {
                lock (stages)
                {
                    string key = string.Join(",", tags.ToArray().Select(t => $"{t.Key}={t.Value}"));
                    stages[key] = stages.GetValueOrDefault(key) + 1;
                }
            }
        });
        listener.Start();
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();

        (await archiver.RunAsync(Request(storage), Token)).Failures.ShouldBeEmpty();

        int batches = (Old + 127) / 128;
        lock (moved)
        {
            foreach (var kind in ReadingKinds.All.Select(ReadingKinds.Name))
            {
                moved.GetValueOrDefault(kind).ShouldBeGreaterThanOrEqualTo(Old, kind);
            }
        }

        lock (stages)
        {
            foreach (string stage in new[] { "export", "archive", "delete" })
            {
                stages.GetValueOrDefault($"kind=pressure,stage={stage}").ShouldBeGreaterThanOrEqualTo(batches, stage);
            }
        }
    }

    [Theory]
    [InlineData(KeyStrategy.Natural)]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task Run_moves_every_reading_older_than_the_cutoff_and_nothing_newer(KeyStrategy keys)
    {
        await using var storage = await SeededAsync(CreateStorageAsync, keys);
        await using var archiver = storage.CreateArchiver();

        var summary = await archiver.RunAsync(Request(storage), Token);

        summary.Failures.ShouldBeEmpty();
        summary.RowsOlder.ShouldBe(OldReadings.Count);
        summary.RowsMoved.ShouldBe(OldReadings.Count);
        summary.Kinds.Sum(k => k.RowsInserted).ShouldBe(OldReadings.Count);
        summary.Kinds.Sum(k => k.Batches).ShouldBe(3 * ((Old + 127) / 128));
        await ShouldBeMovedExactlyAsync(storage);
    }

    [Theory]
    [InlineData(KeyStrategy.Natural)]
    [InlineData(KeyStrategy.Guid)]
    public async Task Four_threads_with_gzip_exports_move_the_same_rows_over_disjoint_slices(KeyStrategy keys)
    {
        await using var storage = await SeededAsync(CreateStorageAsync, keys);
        await using var archiver = storage.CreateArchiver();

        var summary = await archiver.RunAsync(Request(storage, batchRows: 37, threads: 4, gzip: true), Token);

        summary.Failures.ShouldBeEmpty();
        summary.RowsMoved.ShouldBe(OldReadings.Count);
        Directory.EnumerateFiles(storage.ExportDirectory, "*.csv.gz", SearchOption.AllDirectories).Count().ShouldBe((int)summary.Kinds.Sum(k => k.Batches));
        await ShouldBeMovedExactlyAsync(storage);
    }

    [Fact]
    public async Task Every_export_has_a_header_and_a_manifest_with_its_count_keys_and_checksum()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage, batchRows: 1000), Token);

        var manifests = Directory.EnumerateFiles(storage.ExportDirectory, "*.manifest.json", SearchOption.AllDirectories).ToList();
        manifests.Count.ShouldBe(3);
        foreach (string path in manifests)
        {
            var manifest = ExportFiles.ReadManifest(path);
            string data = Path.Combine(Path.GetDirectoryName(path)!, manifest.File);
            manifest.Rows.ShouldBe(Old);
            manifest.Sha256.ShouldBe(ExportFiles.Sha256Of(data));
            manifest.KeyStrategy.ShouldBe("natural");
            var lines = File.ReadAllLines(data);
            lines[0].ShouldBe(ArchiveCsv.Header(manifest.ReadingKind(), KeyStrategy.Natural));
            lines.Length.ShouldBe(Old + 1);
            var rows = ArchiveCsv.Read(data, manifest.ReadingKind(), KeyStrategy.Natural).ToList();
            rows[0].KeyText(KeyStrategy.Natural).ShouldBe(manifest.FirstKey);
            rows[^1].KeyText(KeyStrategy.Natural).ShouldBe(manifest.LastKey);
        }
    }

    [Fact]
    public async Task Dry_run_counts_what_would_move_and_changes_nothing()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();

        var summary = await archiver.RunAsync(Request(storage, dryRun: true), Token);

        summary.RowsOlder.ShouldBe(OldReadings.Count);
        summary.RowsMoved.ShouldBe(0);
        Directory.Exists(storage.ExportDirectory).ShouldBeFalse();
        var (hot, archive) = await TiersAsync(storage);
        archive.ShouldBeEmpty();
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(Readings(0, Total)));
        (await archiver.VerifyAsync(ReadingKinds.All, Token)).BatchesChecked.ShouldBe(0);
    }

    [Fact]
    public async Task A_second_run_finds_nothing_older_and_moves_nothing()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage), Token);

        var second = await archiver.RunAsync(Request(storage), Token);

        second.NothingToDo.ShouldBeTrue();
        second.RowsMoved.ShouldBe(0);
        await ShouldBeMovedExactlyAsync(storage);
    }

    [Fact]
    public async Task Verify_catches_an_export_file_changed_after_the_run()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage), Token);
        (await archiver.VerifyAsync(ReadingKinds.All, Token)).Ok.ShouldBeTrue();
        string file = Directory.EnumerateFiles(storage.ExportDirectory, "*.csv", SearchOption.AllDirectories).Order(StringComparer.Ordinal).First();
        var lines = File.ReadAllLines(file);
        lines[5] = lines[5].Replace(",", ",9", StringComparison.Ordinal);
        File.WriteAllLines(file, lines);

        var report = await archiver.VerifyAsync(ReadingKinds.All, Token);

        report.Ok.ShouldBeFalse();
        report.Problems.ShouldHaveSingleItem().ShouldContain(Path.GetFileNameWithoutExtension(file));
        report.Problems[0].ShouldContain("changed or damaged");
    }

    [Fact]
    public async Task A_reading_sent_again_after_it_was_archived_is_moved_again_and_stored_once()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        (await archiver.RunAsync(Request(storage), Token)).Failures.ShouldBeEmpty();

        // The same reading arrives again (a hub's redelivery) after it was archived: its key is already in the archive
        // table, so on PostgreSQL the one-statement move refuses it and the batch goes step by step, skipping that key.
        await storage.WriteAsync([OldReadings[3]]);
        var summary = await archiver.RunAsync(Request(storage), Token);

        summary.Failures.ShouldBeEmpty();
        summary.RowsMoved.ShouldBe(1);
        summary.Kinds.Sum(k => k.RowsInserted).ShouldBe(0);
        var (hot, archive) = await TiersAsync(storage);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(OldReadings));
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(NewReadings));
        (await archiver.VerifyAsync(ReadingKinds.All, Token)).Problems.ShouldBeEmpty();
    }

    [Fact]
    public async Task Verify_reports_a_reading_that_is_in_both_tiers()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage), Token);

        // The same reading arrives again (a hub's redelivery) after it was archived.
        await storage.WriteAsync([OldReadings[3]]);
        var report = await archiver.VerifyAsync(ReadingKinds.All, Token);

        report.Ok.ShouldBeFalse();
        report.Problems.ShouldContain(p => p.Contains("still (or again) in", StringComparison.Ordinal));
        report.Problems.ShouldContain(p => p.Contains("1 biosensor rows are in both", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Restore_puts_the_exported_rows_back_and_can_be_repeated()
    {
        await using var storage = await RestorableSeededAsync(KeyStrategy.Guid);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage), Token);

        var first = await archiver.RestoreAsync(RestoreRequest([storage.ExportDirectory], "hot"), Token);
        var again = await archiver.RestoreAsync(RestoreRequest([storage.ExportDirectory], "hot"), Token);

        first.Problems.ShouldBeEmpty();
        first.RowsRead.ShouldBe(OldReadings.Count);
        first.RowsInserted.ShouldBe(OldReadings.Count);
        again.RowsInserted.ShouldBe(0);
        var (hot, archive) = await TiersAsync(storage);
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(Restorable(Readings(0, Total))));
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(Restorable(OldReadings)));
    }

    [Fact]
    public async Task Restore_into_a_named_table_loads_every_exported_row_there()
    {
        await using var storage = await RestorableSeededAsync(KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage, batchRows: 250), Token);
        await storage.CreateTableLikeAsync("restored_location", "archive_location");
        var locationManifests = Directory.EnumerateFiles(Path.Combine(storage.ExportDirectory, "location"), "*.manifest.json").ToList();

        var summary = await archiver.RestoreAsync(RestoreRequest(locationManifests, "restored_location"), Token);

        summary.Problems.ShouldBeEmpty();
        summary.Files.ShouldBe(3);
        summary.RowsInserted.ShouldBe(Old);
        var (hot, archive) = await TiersAsync(storage);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(Restorable(OldReadings)));
        hot.Count.ShouldBe(NewReadings.Count);
    }

    [Fact]
    public async Task Restore_refuses_a_file_whose_checksum_does_not_match_its_manifest()
    {
        await using var storage = await RestorableSeededAsync(KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        await archiver.RunAsync(Request(storage, batchRows: 1000), Token);
        string file = Directory.EnumerateFiles(storage.ExportDirectory, "*.csv", SearchOption.AllDirectories).First();
        File.AppendAllText(file, "1,2,2026-03-01T12:00:00.000000Z,1,1\n");

        var summary = await archiver.RestoreAsync(RestoreRequest([storage.ExportDirectory], "hot"), Token);

        summary.Files.ShouldBe(2);
        summary.Problems.ShouldHaveSingleItem().ShouldContain("not restored");
    }

    private static Reading Late(Reading r) =>
        new(r.Kind, r.DeviceId, r.Channel + 10, r.Timestamp, r.ReceivedAt, r.V0, r.V1, r.V2, r.V3);

    [Fact]
    public async Task Readings_written_during_a_run_are_neither_lost_nor_in_both_tiers()
    {
        await using var storage = await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var archiver = storage.CreateArchiver();
        var written = new List<Reading>();
        int batchesDuringRun = 0;
        var run = archiver.RunAsync(Request(storage, batchRows: 16), Token);
        var writer = Task.Run(async () =>
        {
            // New readings, and late ones: older than the cutoff, on the same devices but on channels the seed does not
            // use, so some land behind the run's cursor (they stay in hot) and some ahead of it (this run moves them).
            for (int i = 0; i < 400 && !run.IsCompleted; i++)
            {
                var late = ReadingKinds.All.Select(kind => Late(TestReadings.One(kind, (i * 7) % Old, devices: Devices))).ToList();
                var fresh = ReadingKinds.All.Select(kind => TestReadings.One(kind, 5000 + i, devices: Devices)).ToList();
                await storage.Store.WriteAsync(TestReadings.Batch(late.Concat(fresh)), Token);
                written.AddRange(late);
                written.AddRange(fresh);
                if (!run.IsCompleted)
                {
                    batchesDuringRun++;
                }
            }
        }, Token);
        var summary = await run;
        await writer;

        summary.Failures.ShouldBeEmpty();
        batchesDuringRun.ShouldBeGreaterThan(0);
        var (hot, archive) = await TiersAsync(storage);
        var everything = Readings(0, Total).Concat(written).DistinctBy(r => (r.Kind, r.DeviceId, r.Channel, r.Timestamp)).ToList();
        (hot.Count + archive.Count).ShouldBe(everything.Count);
        ReadingSets.Checksum(hot.Concat(archive)).ShouldBe(ReadingSets.Checksum(everything));
        archive.ShouldAllBe(r => r.Timestamp < Cutoff);
        foreach (var reading in OldReadings)
        {
            archive.ShouldContain(reading);
        }

        (await archiver.VerifyAsync(ReadingKinds.All, Token)).Problems.ShouldBeEmpty();
    }
}

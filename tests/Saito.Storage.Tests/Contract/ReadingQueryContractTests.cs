using Microsoft.Extensions.Logging.Abstractions;
using Saito.Readings;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Storage.Queries;
using Saito.Storage.Schema;

namespace Saito.Storage.Tests.Contract;

/// <summary>
/// What the readings queries (<see cref="IReadingQueries"/>) answer on every database: known readings in, exact answers
/// out, computed by hand. A subclass per database supplies fresh storage for each test.
/// </summary>
public abstract class ReadingQueryContractTests : IAsyncLifetime
{
    private static readonly DateTime T0 = new(2026, 11, 23, 9, 0, 0, DateTimeKind.Utc);

    private readonly TrackedStores _tracked = new();

    protected static CancellationToken Ct => TestContext.Current.CancellationToken;

    /// <summary>Empty storage for this test.</summary>
    protected abstract Task<StoreTestStorage> CreateFreshStorageAsync();

    public static TheoryData<KeyStrategy> EveryKeyStrategy => ReadingStoreContractTests.EveryKeyStrategy;

    private static DateTime At(double seconds) => T0.AddSeconds(seconds);

    private static Reading Pressure(int device, int channel, double seconds, double kpa) =>
        Reading.Pressure(device, channel, At(seconds), At(seconds + 0.25), kpa);

    // ---------------------------------------------------------------- ranges

    [Fact]
    public async Task Range_returns_each_intervals_readings_in_time_order_from_included_to_excluded()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        var readings = Enumerable.Range(0, 10).SelectMany(s => new[] { Pressure(1, 0, s, 100 + s), Pressure(2, 0, s, 200 + s) }).ToList();
        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        var read = await store.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(2), At(5)), new(2, At(8), At(20))], 1000, null, Ct);

        read.ShouldBe([Pressure(1, 0, 2, 102), Pressure(1, 0, 3, 103), Pressure(1, 0, 4, 104), Pressure(2, 0, 8, 208), Pressure(2, 0, 9, 209)]);
    }

    [Fact]
    public async Task Range_orders_readings_of_one_time_by_device_then_channel_and_stops_at_the_limit()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        await store.WriteAsync(TestReadings.Batch([Pressure(2, 0, 1, 5), Pressure(1, 1, 1, 4), Pressure(1, 0, 1, 3), Pressure(1, 0, 0, 1), Pressure(3, 0, 0, 9)]), Ct);

        var read = await store.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(0), At(60)), new(2, At(0), At(60))], 3, null, Ct);

        read.ShouldBe([Pressure(1, 0, 0, 1), Pressure(1, 0, 1, 3), Pressure(1, 1, 1, 4)]);
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Range_and_downsample_across_the_archive_boundary_count_a_reading_in_both_tiers_once(KeyStrategy keys)
    {
        var (store, storage) = await NewStoreAsync(keys);
        var readings = Enumerable.Range(0, 10).Select(s => Pressure(1, 0, s, s + 1)).ToList();
        await store.WriteAsync(TestReadings.Batch(readings), Ct);
        await ArchiveAsync(storage.Options(keys), cutoff: At(5));
        // The crash window: the archiver had inserted these into the archive and not yet deleted them from the hot tier.
        await store.WriteAsync(TestReadings.Batch(readings.Where(r => r.Timestamp is var ts && ts >= At(3) && ts < At(5))), Ct);
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Archive, Ct)).ShouldBe(5);
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, Ct)).ShouldBe(7);

        var read = await store.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(0), At(10))], 1000, null, Ct);
        var buckets = await store.DownsampleAsync(ReadingKind.Pressure, [new(1, At(0), At(10))], At(0), At(10), TimeSpan.FromMinutes(1), null, Ct);

        read.ShouldBe(readings);
        var bucket = buckets.ShouldHaveSingleItem();
        bucket.ShouldBe(new DownsampleBucket(1, 0, T0, 10, bucket.Fields));
        bucket.Fields.ShouldBe([new FieldStatistics(ValueField.Pressure, 10, 1, 5.5, 10)]);
    }

    // ---------------------------------------------------------------- latest

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Latest_is_the_newest_reading_of_each_channel_of_each_device_asked_for(KeyStrategy keys)
    {
        var (store, _) = await NewStoreAsync(keys);
        await store.WriteAsync(TestReadings.Batch(
        [
            Pressure(1, 0, 0, 1), Pressure(1, 0, 30, 2), Pressure(1, 0, 10, 3),
            Pressure(1, 5, 20, 4), Pressure(1, 5, 5, 5),
            Pressure(2, 0, 1, 6),
            Pressure(3, 0, 99, 7),
        ]), Ct);

        var latest = await store.LatestAsync(ReadingKind.Pressure, [2, 1, 4], null, Ct);

        latest.ShouldBe([Pressure(1, 0, 30, 2), Pressure(1, 5, 20, 4), Pressure(2, 0, 1, 6)]);
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Asked_for_fields_a_range_and_the_latest_take_only_readings_that_carry_one_and_the_limit_counts_those(KeyStrategy keys)
    {
        var (store, storage) = await NewStoreAsync(keys);
        Reading Bio(int channel, double seconds, double? heartRate, double? systolic, double? diastolic, double? skin) =>
            Reading.Biosensor(1, channel, At(seconds), At(seconds), heartRate, systolic, diastolic, skin);
        var heartAt0 = Bio(0, 0, 70, null, null, null);
        var pressureAt1 = Bio(0, 1, null, 120, 80, null);
        var skinAt2 = Bio(0, 2, null, null, null, 36.5);
        var heartAt3 = Bio(0, 3, 72, 118, 79, null);
        var pressureAt4 = Bio(0, 4, null, 121, 81, null);
        var pressureOnlyChannel = Bio(1, 5, null, 110, 70, null);
        // Channels 2 and 3 (after the minute the range and series below read): a heart rate, then blood pressure alone
        // two hours later on channel 2 and 50 minutes later on channel 3; the latest query looks back at most an hour.
        var heartTooLongBefore = Bio(2, 100, 66, null, null, null);
        var pressureTwoHoursLater = Bio(2, 100 + 7200, null, 125, 85, null);
        var heartWithinTheHour = Bio(3, 200, 68, null, null, null);
        var pressureFiftyMinutesLater = Bio(3, 200 + 3000, null, 126, 86, null);
        await store.WriteAsync(TestReadings.Batch([heartAt0, pressureAt1, skinAt2, heartAt3, pressureAt4, pressureOnlyChannel,
            heartTooLongBefore, pressureTwoHoursLater, heartWithinTheHour, pressureFiftyMinutesLater]), Ct);
        // The first two seconds go to the archive tier: the filter holds for both tiers.
        await ArchiveAsync(storage.Options(keys), cutoff: At(2), ReadingKind.Biosensor);
        IReadingQueries queries = store;
        ValueField[] visible = [ValueField.HeartRate, ValueField.SkinTemperature];
        DeviceInterval[] all = [new(1, At(0), At(60))];

        (await queries.ReadRangeAsync(ReadingKind.Biosensor, all, 100, visible, Ct)).ShouldBe([heartAt0, skinAt2, heartAt3]);
        (await queries.ReadRangeAsync(ReadingKind.Biosensor, all, 2, visible, Ct)).ShouldBe([heartAt0, skinAt2], "the limit counts readings that carry a field");
        (await queries.ReadRangeAsync(ReadingKind.Biosensor, all, 100, [ValueField.Diastolic], Ct)).ShouldBe([pressureAt1, heartAt3, pressureAt4, pressureOnlyChannel]);
        (await queries.ReadRangeAsync(ReadingKind.Biosensor, all, 100, null, Ct)).Count.ShouldBe(6);

        // Channel 0's newest reading carries only blood pressure: asked for the others, its newest that carries one.
        // Channel 1 carries none of them; channel 2's heart rate is more than an hour before its newest reading.
        (await queries.LatestAsync(ReadingKind.Biosensor, [1], visible, Ct)).ShouldBe([heartAt3, heartWithinTheHour]);
        (await queries.LatestAsync(ReadingKind.Biosensor, [1], [ValueField.SkinTemperature], Ct)).ShouldBe([skinAt2]);
        (await queries.LatestAsync(ReadingKind.Biosensor, [1], null, Ct)).ShouldBe([pressureAt4, pressureOnlyChannel, pressureTwoHoursLater, pressureFiftyMinutesLater]);

        // Downsampled with fields, a reading that carries none of them leaves no trace: not in a bucket's count, and a
        // bucket of only such readings is absent (without fields, every reading counts).
        var asked = await queries.DownsampleAsync(ReadingKind.Biosensor, all, At(0), At(60), TimeSpan.FromMinutes(1), visible, Ct);
        asked.Select(b => (b.Channel, b.Count)).ShouldBe([(0, 3L)]);
        var every = await queries.DownsampleAsync(ReadingKind.Biosensor, all, At(0), At(60), TimeSpan.FromMinutes(1), null, Ct);
        every.Select(b => (b.Channel, b.Count)).ShouldBe([(0, 5L), (1, 1L)]);
    }

    // ---------------------------------------------------------------- downsampling

    [Fact]
    public async Task Downsample_gives_count_min_avg_max_per_device_channel_and_epoch_aligned_bucket()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        Reading Bio(int channel, double seconds, double? heartRate, double? systolic, double? skin) =>
            Reading.Biosensor(1, channel, At(seconds), At(seconds), heartRate, systolic, 80, skin);
        await store.WriteAsync(TestReadings.Batch(
        [
            Bio(0, 1, 60, 120, 36.0), Bio(0, 5, 70, null, null), Bio(0, 12, 80, 110, 36.5), Bio(0, 19, 90, 130, 36.75), Bio(0, 25, 100, null, 37.0),
            Bio(1, 6, 50, 100, null),
            Bio(0, 31, 999, 999, 99), // after "to"
        ]), Ct);

        // From 09:00:03: the first bucket still starts at 09:00:00 (buckets are aligned to the epoch), holding only :05.
        var buckets = await store.DownsampleAsync(ReadingKind.Biosensor, [new(1, At(0), At(60))], At(3), At(30), TimeSpan.FromSeconds(10),
            [ValueField.HeartRate, ValueField.Systolic, ValueField.SkinTemperature], Ct);

        buckets.Select(b => (b.DeviceId, b.Channel, b.Start, b.Count)).ShouldBe([(1, 0, At(0), 1L), (1, 0, At(10), 2L), (1, 0, At(20), 1L), (1, 1, At(0), 1L)]);
        buckets[0].Fields.ShouldBe([Stats(ValueField.HeartRate, 1, 70, 70, 70), Stats(ValueField.Systolic, 0, null, null, null), Stats(ValueField.SkinTemperature, 0, null, null, null)]);
        buckets[1].Fields.ShouldBe([Stats(ValueField.HeartRate, 2, 80, 85, 90), Stats(ValueField.Systolic, 2, 110, 120, 130), Stats(ValueField.SkinTemperature, 2, 36.5, 36.625, 36.75)]);
        buckets[2].Fields.ShouldBe([Stats(ValueField.HeartRate, 1, 100, 100, 100), Stats(ValueField.Systolic, 0, null, null, null), Stats(ValueField.SkinTemperature, 1, 37, 37, 37)]);
        buckets[3].Fields.ShouldBe([Stats(ValueField.HeartRate, 1, 50, 50, 50), Stats(ValueField.Systolic, 1, 100, 100, 100), Stats(ValueField.SkinTemperature, 0, null, null, null)]);
    }

    [Fact]
    public async Task Downsample_follows_the_intervals_of_several_devices()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        var readings = Enumerable.Range(0, 120).SelectMany(s => new[] { Pressure(1, 0, s, s), Pressure(2, 0, s, 1000 + s) }).ToList();
        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        // Device 1 worn until 09:00:30, then device 2 (as an owner's assignment history resolves).
        var buckets = await store.DownsampleAsync(ReadingKind.Pressure, [new(1, At(0), At(30)), new(2, At(30), At(200))], At(0), At(90),
            TimeSpan.FromMinutes(1), null, Ct);

        buckets.ShouldBe(
        [
            new DownsampleBucket(1, 0, At(0), 30, buckets[0].Fields),
            new DownsampleBucket(2, 0, At(0), 30, buckets[1].Fields),
            new DownsampleBucket(2, 0, At(60), 30, buckets[2].Fields),
        ]);
        buckets[0].Fields.ShouldBe([Stats(ValueField.Pressure, 30, 0, 14.5, 29)]);
        buckets[1].Fields.ShouldBe([Stats(ValueField.Pressure, 30, 1030, 1044.5, 1059)]);
        buckets[2].Fields.ShouldBe([Stats(ValueField.Pressure, 30, 1060, 1074.5, 1089)]);
    }

    private static FieldStatistics Stats(ValueField field, long count, double? min, double? avg, double? max) => new(field, count, min, avg, max);

    // ---------------------------------------------------------------- empty and bad

    [Fact]
    public async Task Queries_with_nothing_to_find_answer_empty()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        await store.WriteAsync(TestReadings.Batch([Pressure(1, 0, 0, 1)]), Ct);
        IReadingQueries queries = store;

        (await queries.ReadRangeAsync(ReadingKind.Pressure, [], 10, null, Ct)).ShouldBeEmpty();
        (await queries.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(1), At(60))], 10, null, Ct)).ShouldBeEmpty();
        (await queries.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(0), At(0))], 10, null, Ct)).ShouldBeEmpty();
        (await queries.ReadRangeAsync(ReadingKind.Location, [new(1, At(0), At(60))], 10, null, Ct)).ShouldBeEmpty();
        (await queries.LatestAsync(ReadingKind.Pressure, [], null, Ct)).ShouldBeEmpty();
        (await queries.LatestAsync(ReadingKind.Pressure, [2, 3], null, Ct)).ShouldBeEmpty();
        (await queries.DownsampleAsync(ReadingKind.Pressure, [new(1, At(0), At(60))], At(1), At(60), TimeSpan.FromSeconds(10), null, Ct)).ShouldBeEmpty();
        (await queries.DownsampleAsync(ReadingKind.Pressure, [new(1, At(100), At(200))], At(0), At(60), TimeSpan.FromSeconds(10), null, Ct)).ShouldBeEmpty();
    }

    [Fact]
    public async Task Bad_arguments_are_refused_with_a_message_that_says_what_is_wrong()
    {
        var (store, _) = await NewStoreAsync(KeyStrategy.Natural);
        IReadingQueries queries = store;
        DeviceInterval[] one = [new(1, At(0), At(60))];

        (await Should.ThrowAsync<ArgumentOutOfRangeException>(() => queries.ReadRangeAsync(ReadingKind.Pressure, one, 0, null, Ct))).Message.ShouldContain("limit");
        (await Should.ThrowAsync<ArgumentException>(() => queries.ReadRangeAsync(ReadingKind.Pressure, [new(1, DateTime.SpecifyKind(At(0), DateTimeKind.Local), At(60))], 10, null, Ct)))
            .Message.ShouldContain("must be UTC");
        (await Should.ThrowAsync<ArgumentException>(() => queries.ReadRangeAsync(ReadingKind.Pressure, [new(1, At(60), At(0))], 10, null, Ct))).Message.ShouldContain("before it starts");
        var tooMany = Enumerable.Range(1, ReadingQueryLimits.MaxIntervals + 1).Select(d => new DeviceInterval(d, At(0), At(1))).ToArray();
        (await Should.ThrowAsync<ArgumentException>(() => queries.ReadRangeAsync(ReadingKind.Pressure, tooMany, 10, null, Ct))).Message.ShouldContain("At most 500 intervals");
        (await Should.ThrowAsync<ArgumentException>(() => queries.LatestAsync(ReadingKind.Pressure, Enumerable.Range(1, 501).ToArray(), null, Ct))).Message.ShouldContain("At most 500 devices");
        (await Should.ThrowAsync<ArgumentException>(() => queries.DownsampleAsync(ReadingKind.Pressure, one, At(0), At(86_400), TimeSpan.FromSeconds(1), null, Ct)))
            .Message.ShouldContain("86,400 buckets");
        (await Should.ThrowAsync<ArgumentException>(() => queries.DownsampleAsync(ReadingKind.Pressure, one, At(0), At(60), TimeSpan.Zero, null, Ct)))
            .Message.ShouldContain("positive whole number of microseconds");
        (await Should.ThrowAsync<ArgumentException>(() => queries.DownsampleAsync(ReadingKind.Pressure, one, At(60), At(0), TimeSpan.FromSeconds(1), null, Ct)))
            .Message.ShouldContain("is before from");
        (await Should.ThrowAsync<ArgumentException>(() => queries.DownsampleAsync(ReadingKind.Pressure, one, At(0), At(60), TimeSpan.FromSeconds(1), [ValueField.HeartRate], Ct)))
            .Message.ShouldContain("not a pressure field");
        (await Should.ThrowAsync<ArgumentException>(() => queries.DownsampleAsync(ReadingKind.Pressure, one, DateTime.UnixEpoch.AddDays(-1), At(0), TimeSpan.FromDays(30_000), null, Ct)))
            .Message.ShouldContain("aligned to the Unix epoch");
    }

    // ---------------------------------------------------------------- schema

    [Fact]
    public async Task A_guid_table_made_without_its_natural_key_index_gets_it_on_start()
    {
        var (_, storage) = await NewStoreAsync(KeyStrategy.Guid);
        string table = ReadingTables.TableName(ReadingKind.Pressure, KeyStrategy.Guid, StorageTier.Archive);
        string index = SchemaScript.NaturalKeyIndexName(table);
        await ExecuteAsync(storage, DropIndexSql(index, table));
        (await IndexCountAsync(storage, index)).ShouldBe(0);

        await _tracked.Add(storage.CreateStore(KeyStrategy.Guid)).EnsureSchemaAsync(Ct);

        (await IndexCountAsync(storage, index)).ShouldBe(1);
    }

    /// <summary>The statement that drops an index (as a database made by an older Saito lacks it).</summary>
    protected virtual string DropIndexSql(string index, string table) => $"DROP INDEX {index}";

    /// <summary>A statement counting the indexes named <paramref name="index"/> (0 or 1).</summary>
    protected abstract string CountIndexSql(string index);

    private static async Task ExecuteAsync(StoreTestStorage storage, string sql)
    {
        await using var connection = await storage.OpenConnectionAsync(StorageTier.Archive, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync(Ct);
    }

    private async Task<long> IndexCountAsync(StoreTestStorage storage, string index)
    {
        await using var connection = await storage.OpenConnectionAsync(StorageTier.Archive, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = CountIndexSql(index);
        return Convert.ToInt64(await command.ExecuteScalarAsync(Ct), System.Globalization.CultureInfo.InvariantCulture);
    }

    // ---------------------------------------------------------------- plumbing

    private static async Task ArchiveAsync(StorageOptions options, DateTime cutoff, ReadingKind kind = ReadingKind.Pressure)
    {
        string exports = Directory.CreateTempSubdirectory("saito-query-test-exports-").FullName;
        try
        {
            await using var archiver = new Archiver(options, NullLoggerFactory.Instance);
            var summary = await archiver.RunAsync(
                new ArchiveRunRequest { Kinds = [kind], Cutoff = cutoff, ExportDirectory = exports }, Ct);
            summary.Failures.ShouldBeEmpty();
        }
        finally
        {
            Directory.Delete(exports, recursive: true);
        }
    }

    private async Task<(IReadingStore Store, StoreTestStorage Storage)> NewStoreAsync(KeyStrategy keys)
    {
        var storage = _tracked.Add(await CreateFreshStorageAsync());
        var store = _tracked.Add(storage.CreateStore(keys));
        await store.EnsureSchemaAsync(Ct);
        return (store, storage);
    }

    public ValueTask InitializeAsync() => ValueTask.CompletedTask;

    public async ValueTask DisposeAsync()
    {
        await _tracked.DisposeAsync();
        GC.SuppressFinalize(this);
    }
}

using System.Data.Common;
using System.Diagnostics;
using System.Text;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Tests.Contract;

/// <summary>
/// What every <see cref="IReadingStore"/> does, whatever the database (Wolverine-style compliance tests): a
/// subclass per database supplies fresh storage for each test and the few checks only that database can make
/// (where a tier lives). Every test starts from empty storage and leaves nothing another test could see.
/// </summary>
public abstract class ReadingStoreContractTests : IAsyncLifetime
{
    private readonly TrackedStores _tracked = new();

    protected static CancellationToken Ct => TestContext.Current.CancellationToken;

    /// <summary>
    /// Empty storage for this test. <paramref name="tiered"/>: the hot and archive tiers on separate storage
    /// where the database can (tablespaces, filegroups); SQLite always keeps them in two files.
    /// </summary>
    protected abstract Task<StoreTestStorage> CreateFreshStorageAsync(bool tiered);

    /// <summary>The tables of each tier are where the options of <paramref name="storage"/> put them.</summary>
    protected abstract Task AssertTablesLiveInTheirTiersAsync(StoreTestStorage storage);

    /// <summary>False for a database that cannot count skipped duplicates (<see cref="BatchWriteResult.Duplicates"/> is -1).</summary>
    protected virtual bool CountsDuplicates => true;

    public static TheoryData<KeyStrategy> EveryKeyStrategy => new(KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid);

    /// <summary>Every table a store creates: device, dead_letter and each kind's table under every key strategy on both tiers.</summary>
    public static IEnumerable<string> EveryTable()
    {
        yield return ReadingTables.DeviceTable;
        yield return ReadingTables.DeadLetterTable;
        foreach (var tier in new[] { StorageTier.Hot, StorageTier.Archive })
        {
            foreach (var keys in new[] { KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid })
            {
                foreach (var kind in ReadingKinds.All)
                {
                    yield return ReadingTables.TableName(kind, keys, tier);
                }
            }
        }
    }

    // ---------------------------------------------------------------- schema

    [Fact]
    public async Task Ensure_schema_on_empty_storage_creates_every_table()
    {
        var storage = await FreshStorageAsync();
        var store = Track(storage.CreateStore(KeyStrategy.Natural));
        (await storage.TableNamesAsync(Ct)).ShouldBeEmpty();

        var report = await store.EnsureSchemaAsync(Ct);

        var tables = await storage.TableNamesAsync(Ct);
        foreach (string table in EveryTable())
        {
            tables.ShouldContain(table);
            report.Created.ShouldContain(table);
        }

        report.Existing.ShouldBeEmpty();
    }

    [Fact]
    public async Task Ensure_schema_a_second_time_creates_nothing()
    {
        var storage = await FreshStorageAsync();
        await Track(storage.CreateStore(KeyStrategy.Natural)).EnsureSchemaAsync(Ct);

        var again = await Track(storage.CreateStore(KeyStrategy.SequentialGuid)).EnsureSchemaAsync(Ct);

        again.CreatedAnything.ShouldBeFalse($"created again: {string.Join(", ", again.Created)}");
        foreach (string table in EveryTable())
        {
            again.Existing.ShouldContain(table);
        }
    }

    [Fact]
    public async Task Two_stores_ensuring_the_schema_at_once_create_each_table_once()
    {
        var storage = await FreshStorageAsync();
        var one = Track(storage.CreateStore(KeyStrategy.Natural));
        var other = Track(storage.CreateStore(KeyStrategy.Guid)); // as a second Saito process would

        var reports = await Task.WhenAll(Task.Run(() => one.EnsureSchemaAsync(Ct), Ct), Task.Run(() => other.EnsureSchemaAsync(Ct), Ct));

        var tables = EveryTable().ToHashSet();
        var created = reports.SelectMany(report => report.Created).Where(tables.Contains).ToList();
        created.ShouldBeUnique();
        created.Count.ShouldBe(tables.Count);
        var existing = await storage.TableNamesAsync(Ct);
        tables.ShouldAllBe(table => existing.Contains(table));
    }

    [Fact]
    public async Task Tables_live_in_their_configured_tiers()
    {
        var storage = await FreshStorageAsync(tiered: true);
        var store = Track(storage.CreateStore(KeyStrategy.Natural));

        await store.EnsureSchemaAsync(Ct);
        await store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 10)), Ct);

        await AssertTablesLiveInTheirTiersAsync(storage);
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, Ct)).ShouldBe(10);
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Archive, Ct)).ShouldBe(0);
    }

    // ---------------------------------------------------------------- readings

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Thousands_of_readings_of_each_kind_read_back_exactly(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var readings = TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 3000)).ToList();

        var result = await store.WriteAsync(TestReadings.Batch(readings), Ct);

        result.Inserted.ShouldBe(readings.Count);
        ShouldCountDuplicates(result, 0);
        result.DeadLetters.ShouldBe(0);
        foreach (var kind in TestReadings.Kinds)
        {
            var ofKind = readings.Where(r => r.Kind == kind).ToList();
            (await store.CountAsync(kind, StorageTier.Hot, Ct)).ShouldBe(ofKind.Count);
            (await store.CountAsync(kind, StorageTier.Archive, Ct)).ShouldBe(0);
            foreach (int device in ofKind.Select(r => r.DeviceId).Distinct())
            {
                var read = await store.ReadAsync(kind, StorageTier.Hot, device, Ct);
                ShouldBeTheSameReadings(read, TestReadings.AsRead(ofKind, device), $"{kind} of device {device}");
            }
        }
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task The_oldest_reading_of_a_table_is_its_earliest_ts_and_none_when_it_is_empty(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        (await store.OldestAsync(ReadingKind.Location, StorageTier.Hot, Ct)).ShouldBeNull();

        // Written newest first: the oldest is found by its time, not by the order rows arrived in.
        var readings = TestReadings.Of(ReadingKind.Location, 50).AsEnumerable().Reverse().ToList();
        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        var oldest = await store.OldestAsync(ReadingKind.Location, StorageTier.Hot, Ct);
        oldest.ShouldNotBeNull().Ticks.ShouldBe(readings.Min(r => r.Timestamp).Ticks);
        (await store.OldestAsync(ReadingKind.Location, StorageTier.Archive, Ct)).ShouldBeNull();
        (await store.OldestAsync(ReadingKind.Pressure, StorageTier.Hot, Ct)).ShouldBeNull();
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Microsecond_times_and_missing_values_survive_the_round_trip(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var ts = new DateTime(2026, 12, 31, 23, 59, 59, DateTimeKind.Utc).AddTicks(9_999_990); // .999999
        var readings = new[]
        {
            Reading.Biosensor(7, 0, ts, ts.AddTicks(10), null, null, null, null),
            Reading.Biosensor(7, 1, ts, ts.AddTicks(20), 61.5, null, 80, null),
            Reading.Biosensor(7, 2, ts.AddTicks(-10), ts, null, 120.25, null, 36.6),
            Reading.Biosensor(7, 3, new DateTime(1999, 1, 1, 0, 0, 0, DateTimeKind.Utc).AddTicks(10), ts, -0.5, 1e-300, 1e300, 0),
        };

        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        var read = await store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, 7, Ct);
        ShouldBeTheSameReadings(read, TestReadings.AsRead(readings, 7), "biosensor of device 7");
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Duplicate_reading_in_one_batch_is_stored_once_and_counted(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var readings = TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 500)).ToList();
        var duplicates = readings.Where((_, i) => i % 10 == 3).ToList();
        var batch = TestReadings.Batch(readings.Concat(duplicates).OrderBy(r => r.Timestamp));

        var result = await store.WriteAsync(batch, Ct);

        result.Inserted.ShouldBe(readings.Count);
        ShouldCountDuplicates(result, duplicates.Count);
        await ShouldHoldExactlyAsync(store, readings);
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Duplicate_reading_in_a_later_batch_is_stored_once_and_counted_without_failing_the_readings_beside_it(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var first = TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 400)).ToList();
        var second = TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 400, firstIndex: 300)).ToList(); // 100 of each kind again
        await store.WriteAsync(TestReadings.Batch(first), Ct);

        var result = await store.WriteAsync(TestReadings.Batch(second), Ct);

        result.Inserted.ShouldBe(3 * 300);
        ShouldCountDuplicates(result, 3 * 100);
        await ShouldHoldExactlyAsync(store, first.Concat(second).Distinct());
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Same_reading_written_twice_gives_one_row(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var reading = TestReadings.One(ReadingKind.Location, 42);

        var once = await store.WriteAsync(TestReadings.Batch([reading]), Ct);
        var twice = await store.WriteAsync(TestReadings.Batch([reading]), Ct);

        once.Inserted.ShouldBe(1);
        twice.Inserted.ShouldBe(0);
        ShouldCountDuplicates(twice, 1);
        (await store.CountAsync(ReadingKind.Location, StorageTier.Hot, Ct)).ShouldBe(1);
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task A_reading_with_the_key_of_a_stored_one_and_another_value_is_a_dead_letter_and_the_first_values_stay(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var stored = Reading.Pressure(3, 1, TestReadings.Start, TestReadings.Start, 101.3);
        var sameKey = Reading.Pressure(3, 1, TestReadings.Start, TestReadings.Start.AddSeconds(5), 99.9);
        var beside = Reading.Pressure(3, 1, TestReadings.Start.AddSeconds(1), TestReadings.Start.AddSeconds(5), 99.9);
        await store.WriteAsync(TestReadings.Batch([stored]), Ct);

        var result = await store.WriteAsync(TestReadings.Batch([sameKey, beside]), Ct);

        result.Inserted.ShouldBe(1);
        ShouldCountDuplicates(result, 0);
        result.DeadLetters.ShouldBe(1);
        (await store.ReadAsync(ReadingKind.Pressure, StorageTier.Hot, 3, Ct)).ShouldBe([stored, beside]);
        var letter = (await store.ReadDeadLettersAsync(10, Ct)).ShouldHaveSingleItem();
        letter.Reason.ShouldBe(DeadLetterReasons.ConflictingReading);
        letter.Detail.ShouldContain("kpa 99.9 differs from the stored 101.3");
        letter.Topic.ShouldBe("pressure reading of device 3");
        letter.Payload.ShouldBe($$"""{"ts":"{{TestReadings.Start:yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'}}","ch":1,"kpa":99.9}""");
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Readings_of_one_key_with_different_fields_make_one_row_in_one_batch_or_in_two(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        var at = TestReadings.Start;
        var heartRate = Reading.Biosensor(7, 0, at, at, 72, null, null, null);
        var pressure = Reading.Biosensor(7, 0, at, at.AddSeconds(1), null, 118, 76, null);
        var temperature = Reading.Biosensor(7, 0, at.AddSeconds(1), at.AddSeconds(1), null, null, null, 33.9);
        var heartRateToo = Reading.Biosensor(7, 0, at.AddSeconds(1), at.AddSeconds(2), 80, null, null, null);

        // The wristband's heart rate, then its blood pressure of the same second in another message (another batch).
        (await store.WriteAsync(TestReadings.Batch([heartRate]), Ct)).Inserted.ShouldBe(1);
        var second = await store.WriteAsync(TestReadings.Batch([pressure]), Ct);
        // Both in one batch: a skin temperature, then the heart rate of the same time.
        var third = await store.WriteAsync(TestReadings.Batch([temperature, heartRateToo]), Ct);
        // The merged reading sent again: nothing new.
        var again = await store.WriteAsync(TestReadings.Batch([pressure, heartRateToo]), Ct);

        second.Inserted.ShouldBe(1);
        ShouldCountDuplicates(second, 0);
        third.Inserted.ShouldBe(2);
        ShouldCountDuplicates(third, 0);
        again.Inserted.ShouldBe(0);
        ShouldCountDuplicates(again, 2);
        (again.DeadLetters + second.DeadLetters + third.DeadLetters).ShouldBe(0);
        var rows = await store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, 7, Ct);
        rows.Select(r => (r.Timestamp, r.HeartRate, r.Systolic, r.Diastolic, r.SkinTemperature)).ShouldBe(
        [
            (at, 72, 118, 76, null),
            (at.AddSeconds(1), 80, null, null, 33.9),
        ]);
        rows[0].ReceivedAt.ShouldBe(at); // the row is the first reading's, with the values the second added
    }

    [Fact]
    public async Task Readings_go_to_the_tables_of_the_configured_key_strategy_only()
    {
        var storage = await FreshStorageAsync();
        var natural = Track(storage.CreateStore(KeyStrategy.Natural));
        var guid = Track(storage.CreateStore(KeyStrategy.Guid));
        var sequential = Track(storage.CreateStore(KeyStrategy.SequentialGuid));
        await natural.EnsureSchemaAsync(Ct);

        await guid.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Biosensor, 25)), Ct);

        (await guid.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(25);
        (await natural.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(0);
        (await sequential.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(0);
    }

    [Fact]
    public async Task An_empty_batch_writes_nothing()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);

        var result = await store.WriteAsync(new ReadingBatch(), Ct);

        result.ShouldBe(default);
        foreach (var kind in TestReadings.Kinds)
        {
            (await store.CountAsync(kind, StorageTier.Hot, Ct)).ShouldBe(0);
        }
    }

    [Fact]
    public async Task A_reading_without_a_required_value_is_refused_and_nothing_of_its_batch_is_stored()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        var batch = TestReadings.Batch(
            TestReadings.Of(ReadingKind.Biosensor, 100).Append(new Reading(ReadingKind.Pressure, 1, 0, TestReadings.Start, TestReadings.Start, null)),
            [DeadLetterAt(0)]);

        var failure = await Record.ExceptionAsync(() => store.WriteAsync(batch, Ct));

        failure.ShouldBeOfType<ArgumentException>().Message.ShouldContain("kpa");
        await ShouldBeEmptyAsync(store);
    }

    [Fact]
    public async Task A_cancelled_write_leaves_nothing_behind_and_the_store_carries_on()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        var batch = TestReadings.Batch(TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 100_000)), [DeadLetterAt(0)]);

        // From before the first row to well into the 300,000 rows, always far too short for all of them: a cancel
        // can land while a statement runs, between rows or while rows are on their way to the server (where Npgsql
        // closes the connection), and each must read as a cancellation, never as some other failure.
        foreach (int milliseconds in (int[])[5, 25, 50, 75, 100, 125, 150])
        {
            using var cancellation = new CancellationTokenSource();
            cancellation.CancelAfter(TimeSpan.FromMilliseconds(milliseconds));
            var failure = await Record.ExceptionAsync(() => store.WriteAsync(batch, cancellation.Token));

            failure.ShouldBeAssignableTo<OperationCanceledException>($"cancelled after {milliseconds} ms: {failure}");
            await ShouldBeEmptyAsync(store);
        }

        var after = await store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Location, 10)), Ct);
        after.Inserted.ShouldBe(10);
    }

    [Theory]
    [MemberData(nameof(EveryKeyStrategy))]
    public async Task Four_concurrent_writers_with_overlapping_batches_give_exact_counts(KeyStrategy keys)
    {
        var store = await NewStoreAsync(keys);
        const int Universe = 4000;
        const int BatchSize = 500;
        long inserted = 0;
        long skipped = 0;
        int retries = 0;

        // Every writer writes every reading, starting at its own offset with its own batch edges, so the same
        // readings are in flight in several transactions at once.
        var writers = Enumerable.Range(0, 4).Select(writer => Task.Run(async () =>
        {
            int offset = writer * 1250 + writer * 37;
            for (int start = 0; start < Universe; start += BatchSize)
            {
                var batch = new ReadingBatch();
                for (int i = start; i < Math.Min(start + BatchSize, Universe); i++)
                {
                    int index = (i + offset) % Universe;
                    foreach (var kind in TestReadings.Kinds)
                    {
                        batch.Add(TestReadings.One(kind, index));
                    }
                }

                for (int attempt = 1; ; attempt++)
                {
                    try
                    {
                        var result = await store.WriteAsync(batch, Ct);
                        Interlocked.Add(ref inserted, result.Inserted);
                        Interlocked.Add(ref skipped, result.Duplicates);
                        break;
                    }
                    catch (Exception e) when (attempt < 5 && store.IsTransient(e))
                    {
                        Interlocked.Increment(ref retries); // as the writer pool would
                    }
                }
            }
        }, Ct)).ToArray();
        await Task.WhenAll(writers);

        TestContext.Current.TestOutputHelper?.WriteLine($"retries after transient errors: {retries}");
        inserted.ShouldBe(3 * Universe);
        if (CountsDuplicates)
        {
            skipped.ShouldBe(3 * 3 * Universe);
        }

        foreach (var kind in TestReadings.Kinds)
        {
            (await store.CountAsync(kind, StorageTier.Hot, Ct)).ShouldBe(Universe);
        }
    }

    [Fact]
    public async Task A_batch_of_a_hundred_thousand_readings_is_committed_in_one_call()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        var readings = TestReadings.Kinds.SelectMany(kind => TestReadings.Of(kind, 33_334, devices: 200)).Take(100_000).ToList();
        var batch = TestReadings.Batch(readings);

        var clock = Stopwatch.StartNew();
        var result = await store.WriteAsync(batch, Ct);
        clock.Stop();

        result.Inserted.ShouldBe(100_000);
        TestContext.Current.TestOutputHelper?.WriteLine(
            $"{store.Provider}: 100,000 readings in {clock.ElapsedMilliseconds} ms = {100_000 / clock.Elapsed.TotalSeconds:N0} rows/s");
        long total = 0;
        foreach (var kind in TestReadings.Kinds)
        {
            total += await store.CountAsync(kind, StorageTier.Hot, Ct);
        }

        total.ShouldBe(100_000);
    }

    // ---------------------------------------------------------------- dead letters

    [Fact]
    public async Task Dead_letters_are_stored_with_the_readings_and_read_back_newest_first()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        string longText = new string('x', DeadLetter.MaxPayloadChars - 1) + "\U0001F600 and more, not cut";
        var letters = new[]
        {
            new DeadLetter(TestReadings.Start.AddTicks(10), "saito/biosensor/SN-1", "client-1", "malformed-json", "Unexpected '}' at 17", "{\"hr\": 7}}"),
            new DeadLetter(TestReadings.Start.AddTicks(20), "saito/location/SN-2", null, "out-of-range", "x is NaN", "nul\0inside and \ud800 alone"),
            new DeadLetter(TestReadings.Start.AddTicks(30), "saito/pressure/SN-3", "ĉliento-3", "too-large", "payload over 4096", longText),
        };

        var result = await store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 5), letters), Ct);

        result.DeadLetters.ShouldBe(3);
        result.Inserted.ShouldBe(5);
        var read = await store.ReadDeadLettersAsync(10, Ct);
        read.ShouldBe(letters.Reverse().ToList());
        read[1].Payload.ShouldBe("nul\uFFFDinside and \uFFFD alone");
        read[0].Payload.ShouldBe(longText);
        (await store.ReadDeadLettersAsync(2, Ct)).Count.ShouldBe(2);
    }

    [Fact]
    public async Task A_dead_letter_keeps_its_payload_byte_for_byte_whether_text_or_binary()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        byte[] text = Encoding.UTF8.GetBytes("\uFEFF[" + string.Concat(Enumerable.Repeat("{\"note\":\"Zoë 体温 \U0001F600\"},", 400)) + "{}]");
        byte[] binary = [.. Enumerable.Range(0, 24 * 256).Select(i => (byte)(i * 13)), 0xC3];
        var letters = new[]
        {
            DeadLetter.FromPayload(TestReadings.Start, "saito/hub-1/wrist-1/biosensor", "c", "database-rejected", "refused", text),
            DeadLetter.FromPayload(TestReadings.Start.AddTicks(10), "saito/hub-1/wrist-1", "c", "bad-topic", "no kind", binary),
        };

        await store.WriteAsync(TestReadings.Batch([], letters), Ct);

        var read = await store.ReadDeadLettersAsync(10, Ct);
        read.ShouldBe(letters.Reverse().ToList());
        read[1].OriginalPayload().ShouldBe(text);
        read[1].PayloadBytes.ShouldBeNull();
        read[0].OriginalPayload().ShouldBe(binary);
        read[0].Payload.Length.ShouldBeLessThanOrEqualTo(DeadLetter.MaxPayloadChars);
    }

    [Fact]
    public async Task A_dead_letter_table_made_before_payload_bytes_gets_the_column_on_start_and_keeps_its_rows()
    {
        var storage = await FreshStorageAsync();
        var old = Track(storage.CreateStore(KeyStrategy.Natural));
        await old.EnsureSchemaAsync(Ct);
        var before = new DeadLetter(TestReadings.Start, "saito/hub-1/wrist-1/biosensor", null, "malformed-json", "old", "{\"hr\":");
        await old.WriteAsync(TestReadings.Batch([], [before]), Ct);
        await using (var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct))
        await using (var drop = connection.CreateCommand())
        {
            // The table as an older Saito made it.
            drop.CommandText = $"ALTER TABLE {ReadingTables.DeadLetterTable} DROP COLUMN payload_bytes";
            await drop.ExecuteNonQueryAsync(Ct);
        }

        var upgraded = Track(storage.CreateStore(KeyStrategy.Natural));
        var report = await upgraded.EnsureSchemaAsync(Ct);
        await upgraded.EnsureSchemaAsync(Ct); // and again: nothing left to add
        byte[] binary = [0, 1, 0xFF, 0xFE, (byte)'{'];
        var after = DeadLetter.FromPayload(TestReadings.Start.AddTicks(10), "saito/hub-1/x", null, "bad-topic", "new", binary);
        await upgraded.WriteAsync(TestReadings.Batch([], [after]), Ct);

        report.Existing.ShouldContain(ReadingTables.DeadLetterTable);
        (await upgraded.ReadDeadLettersAsync(10, Ct)).ShouldBe([after, before]);
    }

    [Fact]
    public async Task A_device_table_made_before_the_registry_gets_last_seen_and_retired_at_on_start_and_keeps_its_devices()
    {
        var storage = await FreshStorageAsync();
        var old = Track(storage.CreateStore(KeyStrategy.Natural));
        await old.EnsureSchemaAsync(Ct);
        int id = await old.RegisterDeviceAsync("SN-OLD-1", null, Ct);
        await using (var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct))
        {
            foreach (string column in new[] { "last_seen", "retired_at" })
            {
                // The table as Saito made it before the registry.
                await using var drop = connection.CreateCommand();
                drop.CommandText = $"ALTER TABLE {ReadingTables.DeviceTable} DROP COLUMN {column}";
                await drop.ExecuteNonQueryAsync(Ct);
            }
        }

        var upgraded = Track(storage.CreateStore(KeyStrategy.Natural));
        var report = await upgraded.EnsureSchemaAsync(Ct);
        await upgraded.EnsureSchemaAsync(Ct); // and again: nothing left to add

        report.Existing.ShouldContain(ReadingTables.DeviceTable);
        (await upgraded.LoadDevicesAsync(Ct))["SN-OLD-1"].ShouldBe(id);
        await using (var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct))
        await using (var select = connection.CreateCommand())
        {
            select.CommandText = $"SELECT count(*) FROM {ReadingTables.DeviceTable} WHERE last_seen IS NULL AND retired_at IS NULL";
            Convert.ToInt64(await select.ExecuteScalarAsync(Ct), System.Globalization.CultureInfo.InvariantCulture).ShouldBe(1);
        }
    }

    [Fact]
    public async Task A_batch_of_dead_letters_alone_is_written()
    {
        var store = await NewStoreAsync(KeyStrategy.Guid);

        var result = await store.WriteAsync(TestReadings.Batch([], [DeadLetterAt(1), DeadLetterAt(2)]), Ct);

        result.ShouldBe(new BatchWriteResult(0, 0, 2));
        (await store.ReadDeadLettersAsync(10, Ct)).Select(d => d.ReceivedAt).ShouldBe([DeadLetterAt(2).ReceivedAt, DeadLetterAt(1).ReceivedAt]);
    }

    // ---------------------------------------------------------------- registry

    [Fact]
    public async Task A_new_serial_gets_an_id_and_the_same_serial_gets_it_again()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);

        int first = await store.RegisterDeviceAsync("SN-0001", null, Ct);
        int second = await store.RegisterDeviceAsync("SN-0002", null, Ct);
        int firstAgain = await store.RegisterDeviceAsync("SN-0001", null, Ct);

        first.ShouldBeGreaterThan(0);
        second.ShouldNotBe(first);
        firstAgain.ShouldBe(first);
    }

    [Fact]
    public async Task Same_serial_from_eight_concurrent_callers_gets_one_id()
    {
        var (ids, one) = await RegisterAtOnceAsync(8, async (i, store) =>
        {
            var announcement = i % 2 == 0 ? new DeviceAnnouncement("biosensor", 4, $"1.0.{i}", "hub-1") : null;
            return await store.RegisterDeviceAsync("SN-RACE", announcement, Ct);
        });

        ids.Distinct().ShouldHaveSingleItem();
        (await one.LoadDevicesAsync(Ct)).ShouldBe(new Dictionary<string, int> { ["SN-RACE"] = ids[0] });
    }

    /// <summary>
    /// <paramref name="callers"/> callers started at one moment, the even ones on one store and the odd ones on another
    /// (as a second Saito process would be) over the same fresh storage; what each returned, and the first store.
    /// </summary>
    private async Task<(T[] Results, IReadingStore One)> RegisterAtOnceAsync<T>(int callers, Func<int, IReadingStore, Task<T>> register)
    {
        var storage = await FreshStorageAsync();
        var one = Track(storage.CreateStore(KeyStrategy.Natural));
        var other = Track(storage.CreateStore(KeyStrategy.Natural));
        await one.EnsureSchemaAsync(Ct);
        using var start = new ManualResetEventSlim();
        var running = Enumerable.Range(0, callers).Select(i => Task.Run(async () =>
        {
            start.Wait(Ct);
            return await register(i, i % 2 == 0 ? one : other);
        }, Ct)).ToArray();
        start.Set();
        return (await Task.WhenAll(running), one);
    }

    [Fact]
    public async Task Load_devices_returns_every_registered_device()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);
        var expected = new Dictionary<string, int>();
        for (int i = 0; i < 50; i++)
        {
            string serial = $"SN-{i:D4}";
            expected[serial] = await store.RegisterDeviceAsync(serial, i % 3 == 0 ? new DeviceAnnouncement("location", 1, null, null) : null, Ct);
        }

        var devices = await store.LoadDevicesAsync(Ct);

        devices.Count.ShouldBe(50);
        foreach (var (serial, id) in expected)
        {
            devices[serial].ShouldBe(id);
        }

        expected.Values.Distinct().Count().ShouldBe(50);
    }

    [Fact]
    public async Task A_hello_records_what_the_device_says_and_keeps_what_it_leaves_out()
    {
        var storage = await FreshStorageAsync();
        var store = Track(storage.CreateStore(KeyStrategy.Natural));
        await store.EnsureSchemaAsync(Ct);
        int id = await store.RegisterDeviceAsync("SN-HELLO", null, Ct);
        (await DeviceRowAsync(storage, "SN-HELLO")).ShouldBe(new DeviceRow(null, null, null, null, HasHello: false));

        int afterHello = await store.RegisterDeviceAsync("SN-HELLO", new DeviceAnnouncement("biosensor", 4, "1.2.3", "hub-7"), Ct);
        var full = await DeviceRowAsync(storage, "SN-HELLO");
        int afterPartialHello = await store.RegisterDeviceAsync("SN-HELLO", new DeviceAnnouncement(null, null, "1.2.4", null), Ct);
        var partial = await DeviceRowAsync(storage, "SN-HELLO");
        int afterPlainRegistration = await store.RegisterDeviceAsync("SN-HELLO", null, Ct);
        var plain = await DeviceRowAsync(storage, "SN-HELLO");

        new[] { afterHello, afterPartialHello, afterPlainRegistration }.ShouldAllBe(x => x == id);
        full.ShouldBe(new DeviceRow("biosensor", 4, "1.2.3", "hub-7", HasHello: true));
        partial.ShouldBe(new DeviceRow("biosensor", 4, "1.2.4", "hub-7", HasHello: true));
        plain.ShouldBe(partial);
    }

    [Fact]
    public async Task A_hello_from_a_new_device_registers_it()
    {
        var storage = await FreshStorageAsync();
        var store = Track(storage.CreateStore(KeyStrategy.Natural));
        await store.EnsureSchemaAsync(Ct);

        int id = await store.RegisterDeviceAsync("SN-NEW", new DeviceAnnouncement("pressure", 2, "0.9", "hub-2"), Ct);

        (await store.LoadDevicesAsync(Ct)).ShouldBe(new Dictionary<string, int> { ["SN-NEW"] = id });
        (await DeviceRowAsync(storage, "SN-NEW")).ShouldBe(new DeviceRow("pressure", 2, "0.9", "hub-2", HasHello: true));
    }

    [Fact]
    public async Task A_batch_of_registrations_gives_each_serial_one_id_in_the_order_given_and_merges_its_hellos()
    {
        var storage = await FreshStorageAsync();
        var store = Track(storage.CreateStore(KeyStrategy.Natural));
        await store.EnsureSchemaAsync(Ct);
        int old = await store.RegisterDeviceAsync("SN-OLD", new DeviceAnnouncement("location", 1, "0.1", "hub-0"), Ct);

        var registered = await store.RegisterDevicesAsync(
        [
            new("SN-B", null, "hub-5"),
            new("SN-OLD", null, "hub-5"),
            new("SN-A", null, "hub-5"),
            new("SN-B", new DeviceAnnouncement("biosensor", 4, "1.0", null)),
            new("SN-B", new DeviceAnnouncement(null, null, "2.0", "hub-9")),
            new("SN-C", null),
        ], Ct);
        var ids = registered.Select(r => r.Id).ToList();

        ids.Count.ShouldBe(6);
        ids[1].ShouldBe(old);
        ids[3].ShouldBe(ids[0]);
        ids[4].ShouldBe(ids[0]);
        new[] { ids[0], ids[2], ids[5], old }.Distinct().Count().ShouldBe(4);
        registered.Select(r => r.Hub).ShouldBe(["hub-9", "hub-0", "hub-5", "hub-9", "hub-9", null], "each as stored after the batch");
        var devices = await store.LoadDevicesAsync(Ct);
        devices.Count.ShouldBe(4);
        (devices["SN-OLD"], devices["SN-A"], devices["SN-B"]).ShouldBe((old, ids[2], ids[0]));
        (await DeviceRowAsync(storage, "SN-B")).ShouldBe(new DeviceRow("biosensor", 4, "2.0", "hub-9", HasHello: true));
        (await DeviceRowAsync(storage, "SN-A")).ShouldBe(new DeviceRow(null, null, null, "hub-5", HasHello: false), "a new device is bound to the hub it came through");
        (await DeviceRowAsync(storage, "SN-OLD")).ShouldBe(new DeviceRow("location", 1, "0.1", "hub-0", HasHello: true), "a plain registration leaves a known device as it was");
        (await store.LoadDeviceHubsAsync(null, Ct)).ShouldBe(new Dictionary<string, string> { ["SN-OLD"] = "hub-0", ["SN-A"] = "hub-5", ["SN-B"] = "hub-9" }, ignoreOrder: true);
        (await store.LoadDeviceHubsAsync("SN-A", Ct)).ShouldBe(new Dictionary<string, string> { ["SN-A"] = "hub-5" });
        (await store.LoadDeviceHubsAsync("SN-C", Ct)).ShouldBeEmpty("SN-C has no hub");
        (await store.LoadDeviceHubsAsync("SN-NONE", Ct)).ShouldBeEmpty();
        (await store.RegisterDevicesAsync([], Ct)).ShouldBeEmpty();
    }

    [Fact]
    public async Task Two_stores_registering_overlapping_batches_at_once_agree_on_every_id()
    {
        // Four callers, 300 serials each, every serial in two of them, each caller in its own order.
        var (results, one) = await RegisterAtOnceAsync(4, async (caller, store) =>
        {
            var serials = Enumerable.Range(caller * 150, 300).Select(i => $"SN-{i % 600:D4}").OrderBy(s => s.GetHashCode(StringComparison.Ordinal) ^ caller).ToList();
            var ids = await store.RegisterDevicesAsync(serials.ConvertAll(s => new DeviceRegistration(s, null)), Ct);
            return serials.Zip(ids.Select(r => r.Id)).ToList();
        });

        var devices = await one.LoadDevicesAsync(Ct);
        devices.Count.ShouldBe(600);
        results.SelectMany(r => r).ShouldAllBe(r => devices[r.First] == r.Second);
    }

    // ---------------------------------------------------------------- health

    [Fact]
    public async Task Ping_answers_and_describe_names_the_database()
    {
        var store = await NewStoreAsync(KeyStrategy.Natural);

        await store.PingAsync(Ct);

        store.Describe().ShouldNotBeNullOrWhiteSpace();
        store.IsTransient(new InvalidOperationException("a bug")).ShouldBeFalse();
        store.IsTransient(new OperationCanceledException()).ShouldBeFalse();
    }

    // ---------------------------------------------------------------- helpers

    public ValueTask InitializeAsync() => ValueTask.CompletedTask;

    public async ValueTask DisposeAsync()
    {
        await _tracked.DisposeAsync();
        GC.SuppressFinalize(this);
    }

    /// <summary>Fresh storage, removed after the test.</summary>
    protected async Task<StoreTestStorage> FreshStorageAsync(bool tiered = false)
    {
        return _tracked.Add(await CreateFreshStorageAsync(tiered));
    }

    /// <summary>A store on fresh storage with its schema made.</summary>
    protected async Task<IReadingStore> NewStoreAsync(KeyStrategy keys)
    {
        var storage = await FreshStorageAsync();
        var store = Track(storage.CreateStore(keys));
        await store.EnsureSchemaAsync(Ct);
        return store;
    }

    /// <summary>Disposed after the test, before its storage is removed.</summary>
    protected IReadingStore Track(IReadingStore store) => _tracked.Add(store);

    protected void ShouldCountDuplicates(BatchWriteResult result, long duplicates) =>
        result.Duplicates.ShouldBe(CountsDuplicates ? duplicates : -1);

    protected static DeadLetter DeadLetterAt(int second) =>
        new(TestReadings.Start.AddSeconds(second), "saito/x", "c", "malformed-json", "detail", "payload");

    protected static void ShouldBeTheSameReadings(IReadOnlyList<Reading> actual, IReadOnlyList<Reading> expected, string what)
    {
        actual.Count.ShouldBe(expected.Count, what);
        for (int i = 0; i < expected.Count; i++)
        {
            // Reading equality compares DateTime ticks, not Kind: UTC is checked on its own.
            actual[i].ShouldBe(expected[i], $"{what}, reading {i}");
            actual[i].Timestamp.Kind.ShouldBe(DateTimeKind.Utc, what);
            actual[i].ReceivedAt.Kind.ShouldBe(DateTimeKind.Utc, what);
        }
    }

    /// <summary>The store holds exactly these readings (per kind and device), nothing more.</summary>
    protected static async Task ShouldHoldExactlyAsync(IReadingStore store, IEnumerable<Reading> readings)
    {
        var all = readings.ToList();
        foreach (var kind in TestReadings.Kinds)
        {
            var ofKind = all.Where(r => r.Kind == kind).ToList();
            (await store.CountAsync(kind, StorageTier.Hot, Ct)).ShouldBe(ofKind.Count, $"{kind} rows");
            foreach (int device in ofKind.Select(r => r.DeviceId).Distinct())
            {
                ShouldBeTheSameReadings(await store.ReadAsync(kind, StorageTier.Hot, device, Ct), TestReadings.AsRead(ofKind, device), $"{kind} of device {device}");
            }
        }
    }

    protected static async Task ShouldBeEmptyAsync(IReadingStore store)
    {
        foreach (var kind in TestReadings.Kinds)
        {
            (await store.CountAsync(kind, StorageTier.Hot, Ct)).ShouldBe(0, $"{kind} rows");
        }

        (await store.ReadDeadLettersAsync(10, Ct)).ShouldBeEmpty();
    }

    protected sealed record DeviceRow(string? Kind, int? Channels, string? Firmware, string? Hub, bool HasHello);

    /// <summary>The device's row as the registry holds it (plain SQL every database runs).</summary>
    protected static async Task<DeviceRow?> DeviceRowAsync(StoreTestStorage storage, string serial)
    {
        await using var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT kind, channels, firmware, hub, last_hello FROM {ReadingTables.DeviceTable} WHERE serial = @serial";
        var parameter = command.CreateParameter();
        parameter.ParameterName = "@serial";
        parameter.Value = serial;
        command.Parameters.Add(parameter);
        await using DbDataReader reader = await command.ExecuteReaderAsync(Ct);
        if (!await reader.ReadAsync(Ct))
        {
            return null;
        }

        return new DeviceRow(
            reader.IsDBNull(0) ? null : reader.GetString(0),
            reader.IsDBNull(1) ? null : Convert.ToInt32(reader.GetValue(1), System.Globalization.CultureInfo.InvariantCulture),
            reader.IsDBNull(2) ? null : reader.GetString(2),
            reader.IsDBNull(3) ? null : reader.GetString(3),
            !reader.IsDBNull(4));
    }
}

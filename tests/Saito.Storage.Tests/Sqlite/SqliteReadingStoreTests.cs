using System.Data.Common;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Sqlite;
using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.Sqlite;

/// <summary>The contract against real SQLite files in a fresh temporary folder per test, plus what only SQLite has.</summary>
public sealed class SqliteReadingStoreTests : ReadingStoreContractTests
{
    private static readonly TimeSpan Deadline = TimeSpan.FromSeconds(30);

    protected override Task<StoreTestStorage> CreateFreshStorageAsync(bool tiered) => Task.FromResult<StoreTestStorage>(new SqliteTestStorage());

    protected override async Task AssertTablesLiveInTheirTiersAsync(StoreTestStorage storage)
    {
        var sqlite = (SqliteTestStorage)storage;
        File.Exists(Path.Combine(sqlite.HotPath, SqliteSchema.HotFileName)).ShouldBeTrue();
        File.Exists(Path.Combine(sqlite.ArchivePath, SqliteSchema.ArchiveFileName)).ShouldBeTrue();
        var hot = await sqlite.TableNamesAsync(StorageTier.Hot);
        var archive = await sqlite.TableNamesAsync(StorageTier.Archive);
        foreach (string table in EveryTable())
        {
            bool isArchive = table.StartsWith("archive_", StringComparison.Ordinal);
            (isArchive ? archive : hot).ShouldContain(table);
            (isArchive ? hot : archive).ShouldNotContain(table);
        }
    }

    [Fact]
    public async Task Both_files_are_created_in_folders_that_did_not_exist_and_use_wal()
    {
        await using var storage = new SqliteTestStorage();
        Directory.Exists(storage.HotPath).ShouldBeFalse();
        await using var store = storage.CreateStore(KeyStrategy.Natural);

        var report = await store.EnsureSchemaAsync(Ct);

        foreach (var tier in new[] { StorageTier.Hot, StorageTier.Archive })
        {
            string file = storage.File(tier);
            report.Created.ShouldContain("file " + file);
            await using var connection = await storage.OpenConnectionAsync(tier, Ct);
            await using var command = connection.CreateCommand();
            command.CommandText = "PRAGMA journal_mode";
            ((string?)await command.ExecuteScalarAsync(Ct)).ShouldBe("wal");
        }
    }

    [Theory]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task Guid_keys_are_stored_as_sixteen_big_endian_bytes(KeyStrategy keys)
    {
        await using var storage = new SqliteTestStorage();
        await using var store = storage.CreateStore(keys);
        await store.EnsureSchemaAsync(Ct);
        var reading = TestReadings.One(ReadingKind.Pressure, 5);

        await store.WriteAsync(TestReadings.Batch([reading]), Ct);

        await using var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT id FROM {ReadingTables.TableName(ReadingKind.Pressure, keys, StorageTier.Hot)}";
        var stored = (byte[])(await command.ExecuteScalarAsync(Ct))!;
        stored.ShouldBe(ReadingKeys.For(reading, keys, StorageProvider.Sqlite)!.Value.ToByteArray(bigEndian: true));
    }

    [Fact]
    public async Task Sequential_guid_rows_in_key_order_are_in_time_order()
    {
        await using var storage = new SqliteTestStorage();
        await using var store = storage.CreateStore(KeyStrategy.SequentialGuid);
        await store.EnsureSchemaAsync(Ct);
        var readings = TestReadings.Of(ReadingKind.Location, 2000, devices: 7);

        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        await using var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = $"SELECT ts FROM {ReadingTables.TableName(ReadingKind.Location, KeyStrategy.SequentialGuid, StorageTier.Hot)} ORDER BY id";
        var times = new List<long>();
        await using (var reader = await command.ExecuteReaderAsync(Ct))
        {
            while (await reader.ReadAsync(Ct))
            {
                times.Add(reader.GetInt64(0));
            }
        }

        times.Count.ShouldBe(2000);
        times.ShouldBeInOrder(SortDirection.Ascending);
    }

    [Fact]
    public async Task The_views_show_serials_and_iso_times_with_milliseconds()
    {
        await using var storage = new SqliteTestStorage();
        await using var store = storage.CreateStore(KeyStrategy.Guid);
        await store.EnsureSchemaAsync(Ct);
        int device = await store.RegisterDeviceAsync("SN-VIEW", null, Ct);
        var ts = new DateTime(2026, 5, 4, 3, 2, 1, DateTimeKind.Utc).AddTicks(1_239_990); // .123999
        await store.WriteAsync(TestReadings.Batch([Reading.Biosensor(device, 2, ts, ts.AddSeconds(1), 70, null, 80, 36.5)]), Ct);

        await using var connection = await storage.OpenConnectionAsync(StorageTier.Hot, Ct);
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT serial, channel, ts, heart_rate, systolic, received_at, key_strategy FROM v_biosensor ORDER BY ts DESC LIMIT 5";
        await using var reader = await command.ExecuteReaderAsync(Ct);
        (await reader.ReadAsync(Ct)).ShouldBeTrue();
        reader.GetString(0).ShouldBe("SN-VIEW");
        reader.GetInt64(1).ShouldBe(2);
        reader.GetString(2).ShouldBe("2026-05-04T03:02:01.123Z");
        reader.GetDouble(3).ShouldBe(70);
        reader.IsDBNull(4).ShouldBeTrue();
        reader.GetString(5).ShouldBe("2026-05-04T03:02:02.123Z");
        reader.GetString(6).ShouldBe("guid");
        (await reader.ReadAsync(Ct)).ShouldBeFalse();
    }

    [Fact]
    public async Task A_write_waits_for_another_connection_holding_the_write_lock()
    {
        await using var storage = new SqliteTestStorage();
        await using var store = storage.CreateStore(KeyStrategy.Natural);
        await store.EnsureSchemaAsync(Ct);
        var holder = (SqliteConnection)await storage.OpenConnectionAsync(StorageTier.Hot, Ct);
        var transaction = holder.BeginTransaction(deferred: false); // BEGIN IMMEDIATE: the write lock

        var write = Task.Run(() => store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 100)), Ct), Ct);
        await Task.Delay(300, Ct);
        write.IsCompleted.ShouldBeFalse("the write should wait for the lock");
        transaction.Rollback();
        await holder.DisposeAsync();

        (await write).Inserted.ShouldBe(100);
    }

    [Fact]
    public void Busy_and_locked_are_transient_and_other_errors_are_not()
    {
        var store = new SqliteReadingStore(new StorageOptions(), NullLogger<SqliteReadingStore>.Instance);

        store.IsTransient(new SqliteException("database is locked", SQLitePCL.raw.SQLITE_BUSY)).ShouldBeTrue();
        store.IsTransient(new SqliteException("table is locked", SQLitePCL.raw.SQLITE_LOCKED)).ShouldBeTrue();
        store.IsTransient(new TimeoutException()).ShouldBeTrue();
        store.IsTransient(new SqliteException("constraint failed", SQLitePCL.raw.SQLITE_CONSTRAINT)).ShouldBeFalse();
        store.IsTransient(new SqliteException("no such table", SQLitePCL.raw.SQLITE_ERROR)).ShouldBeFalse();
    }

    [Theory]
    [InlineData(null, SqliteStorageOptions.DefaultWalAutoCheckpointPages)]
    [InlineData(100, 100)]
    [InlineData(250_000, 250_000)]
    public async Task Every_connection_checkpoints_the_log_at_the_configured_size(int? configured, int expected)
    {
        await using var storage = new SqliteTestStorage();
        Directory.CreateDirectory(storage.HotPath);
        var options = storage.Options(KeyStrategy.Natural);
        if (configured is { } pages)
        {
            options.Sqlite.WalAutoCheckpointPages = pages;
        }

        using var connections = new SqliteConnections(storage.File(StorageTier.Hot), options);
        using var connection = connections.Open();
        using var command = connection.CreateCommand();
        command.CommandText = "PRAGMA wal_autocheckpoint";

        Convert.ToInt32(command.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture).ShouldBe(expected);

        // The setting is the connection's, not the file's: one opened without Saito's pragmas has SQLite's own 1,000.
        using var plain = new SqliteConnection($"Data Source={storage.File(StorageTier.Hot)};Pooling=False");
        plain.Open();
        using var plainCommand = plain.CreateCommand();
        plainCommand.CommandText = "PRAGMA wal_autocheckpoint";
        Convert.ToInt32(plainCommand.ExecuteScalar(), System.Globalization.CultureInfo.InvariantCulture).ShouldBe(1000);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(99)]
    [InlineData(1_000_001)]
    public void A_checkpoint_size_outside_100_to_a_million_pages_is_refused_with_the_setting_named(int pages)
    {
        var options = new StorageOptions();
        options.Sqlite.WalAutoCheckpointPages = pages;

        var result = new StorageOptionsValidator().Validate(null, options);

        result.Failed.ShouldBeTrue();
        result.FailureMessage.ShouldContain($"Storage:Sqlite:WalAutoCheckpointPages must be between 100 and 1,000,000 pages (was {pages}).");
        new StorageOptionsValidator().Validate(null, new StorageOptions()).Succeeded.ShouldBeTrue();
    }

    [Fact]
    public async Task With_synchronous_full_a_write_returns_after_its_flush_and_the_next_write_goes_in_while_it_runs()
    {
        using var flush = new HeldFlush();
        await using var storage = new SqliteTestStorage();
        await using var store = new SqliteReadingStore(storage.Options(KeyStrategy.Natural), NullLogger<SqliteReadingStore>.Instance)
        {
            BeforeLogFlush = flush.Run,
        };
        await store.EnsureSchemaAsync(Ct);

        var first = store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Biosensor, 500)), Ct);
        await flush.WaitUntilStartedAsync(1);
        (await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(500, "committed, its flush held");
        first.IsCompleted.ShouldBeFalse("not stored as far as the caller knows until its log is flushed");

        var second = store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Biosensor, 500, firstIndex: 500)), Ct);
        (await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(1000, "inserted while the first flush runs");
        flush.Release();
        (await first.WaitAsync(Deadline, Ct)).Inserted.ShouldBe(500);

        await flush.WaitUntilStartedAsync(2);
        second.IsCompleted.ShouldBeFalse("its commit came after the first flush began, so that flush does not cover it");
        flush.Release();
        (await second.WaitAsync(Deadline, Ct)).Inserted.ShouldBe(500);
        store.LogFlushes.ShouldBe(2);
    }

    [Fact]
    public async Task After_a_failed_flush_the_store_commits_nothing_more_and_says_why()
    {
        int flushes = 0;
        await using var storage = new SqliteTestStorage();
        await using var store = new SqliteReadingStore(storage.Options(KeyStrategy.Natural), NullLogger<SqliteReadingStore>.Instance)
        {
            BeforeLogFlush = () =>
            {
                if (Interlocked.Increment(ref flushes) == 1)
                {
                    throw new IOException("EIO from the disk");
                }
            },
        };
        await store.EnsureSchemaAsync(Ct);

        var failed = await Should.ThrowAsync<IOException>(() => store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 100)), Ct));
        failed.Message.ShouldContain("EIO from the disk");
        store.IsTransient(failed).ShouldBeTrue("the writers keep the messages unacknowledged and retry, as when the database is away");

        await Should.ThrowAsync<IOException>(() => store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 100, firstIndex: 100)), Ct));
        await Should.ThrowAsync<IOException>(() => store.RegisterDeviceAsync("SN-AFTER-FAILURE", null, Ct));
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, Ct)).ShouldBe(100, "only the batch whose flush failed was committed");
        (await store.LoadDevicesAsync(Ct)).ContainsKey("SN-AFTER-FAILURE").ShouldBeFalse();
        Volatile.Read(ref flushes).ShouldBe(1);
    }

    [Fact]
    public async Task With_synchronous_full_writes_from_many_writers_at_once_are_all_stored()
    {
        await using var storage = new SqliteTestStorage();
        await using var store = (SqliteReadingStore)storage.CreateStore(KeyStrategy.Natural);
        await store.EnsureSchemaAsync(Ct);

        var writes = Enumerable.Range(0, 8)
            .Select(w => Task.Run(() => store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Biosensor, 500, firstIndex: w * 500)), Ct), Ct))
            .ToArray();
        var results = await Task.WhenAll(writes);

        results.Sum(r => r.Inserted).ShouldBe(4000);
        (await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, Ct)).ShouldBe(4000);
        store.LogFlushes.ShouldBeGreaterThan(0);
    }

    [Fact]
    public async Task With_synchronous_normal_nothing_is_flushed_beside_the_writer()
    {
        await using var storage = new SqliteTestStorage();
        var options = storage.Options(KeyStrategy.Natural);
        options.Sqlite.Synchronous = SqliteSynchronous.Normal;
        await using var store = (SqliteReadingStore)storage.CreateStore(options);
        await store.EnsureSchemaAsync(Ct);

        await store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Pressure, 100)), Ct);
        await store.RegisterDeviceAsync("SN-NORMAL", null, Ct);

        store.LogFlushes.ShouldBe(0);
        options.EffectiveWriters.ShouldBe(1, "nothing to wait for beside the writer, so one writer");
    }

    [Fact]
    public async Task Registering_devices_with_synchronous_full_returns_after_a_flush()
    {
        await using var storage = new SqliteTestStorage();
        await using var store = (SqliteReadingStore)storage.CreateStore(KeyStrategy.Natural);
        await store.EnsureSchemaAsync(Ct);

        await store.RegisterDeviceAsync("SN-FLUSHED", null, Ct);

        store.LogFlushes.ShouldBe(1);
        storage.Options(KeyStrategy.Natural).EffectiveWriters.ShouldBe(4);
    }

    [Fact]
    public async Task Describe_names_both_files_and_the_synchronous_setting()
    {
        await using var storage = new SqliteTestStorage();
        var options = storage.Options(KeyStrategy.SequentialGuid);
        options.Sqlite.Synchronous = SqliteSynchronous.Normal;
        await using var store = storage.CreateStore(options);

        string description = store.Describe();

        description.ShouldContain(storage.File(StorageTier.Hot));
        description.ShouldContain(storage.File(StorageTier.Archive));
        description.ShouldContain("sequential-guid");
        description.ShouldContain("NORMAL");
    }
}

/// <summary>A fresh temporary folder with hot/ and archive/ below it (neither exists until a store makes it).</summary>
public sealed class SqliteTestStorage : StoreTestStorage
{
    public SqliteTestStorage()
    {
        Root = Path.Combine(Path.GetTempPath(), "saito-storage-tests", Guid.NewGuid().ToString("N"));
        HotPath = Path.Combine(Root, "fast", "hot");
        ArchivePath = Path.Combine(Root, "slow", "archive");
    }

    public string Root { get; }

    public string HotPath { get; }

    public string ArchivePath { get; }

    public string File(StorageTier tier) =>
        tier == StorageTier.Hot ? Path.Combine(HotPath, SqliteSchema.HotFileName) : Path.Combine(ArchivePath, SqliteSchema.ArchiveFileName);

    public override StorageOptions Options(KeyStrategy keys) =>
        new() { Provider = StorageProvider.Sqlite, HotPath = HotPath, ArchivePath = ArchivePath, KeyStrategy = keys };

    public override IReadingStore CreateStore(StorageOptions options) => new SqliteReadingStore(options, NullLogger<SqliteReadingStore>.Instance);

    public override async Task<DbConnection> OpenConnectionAsync(StorageTier tier, CancellationToken cancellationToken)
    {
        // Not pooled, so that nothing keeps the file open after the test.
        var connection = new SqliteConnection(new SqliteConnectionStringBuilder
        {
            DataSource = File(tier),
            Mode = SqliteOpenMode.ReadWrite,
            Pooling = false,
        }.ToString());
        await connection.OpenAsync(cancellationToken);
        return connection;
    }

    public override async Task<IReadOnlySet<string>> TableNamesAsync(CancellationToken cancellationToken)
    {
        var names = new HashSet<string>(await TableNamesAsync(StorageTier.Hot));
        names.UnionWith(await TableNamesAsync(StorageTier.Archive));
        return names;
    }

    public async Task<HashSet<string>> TableNamesAsync(StorageTier tier)
    {
        var names = new HashSet<string>();
        if (!System.IO.File.Exists(File(tier)))
        {
            return names;
        }

        await using var connection = await OpenConnectionAsync(tier, TestContext.Current.CancellationToken);
        await using var command = connection.CreateCommand();
        command.CommandText = "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
        await using var reader = await command.ExecuteReaderAsync(TestContext.Current.CancellationToken);
        while (await reader.ReadAsync(TestContext.Current.CancellationToken))
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    public override ValueTask DisposeAsync()
    {
        try
        {
            Directory.Delete(Root, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }

        return ValueTask.CompletedTask;
    }
}

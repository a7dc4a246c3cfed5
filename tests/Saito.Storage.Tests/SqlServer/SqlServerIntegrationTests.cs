using Microsoft.Data.SqlClient;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// The store against a real SQL Server: each test gets a database of its own. Runs when
/// <c>SAITO_TEST_SQLSERVER</c> holds a connection string whose login may CREATE DATABASE; otherwise every test
/// is reported as skipped with <see cref="SqlServerTestServer.SkipReason"/>.
/// </summary>
public sealed class SqlServerIntegrationTests
{
    private static readonly DateTime T0 = new DateTime(2025, 6, 1, 12, 0, 0, DateTimeKind.Utc).AddTicks(654_321 * ReadingTime.TicksPerMicrosecond);

    private static CancellationToken Cancel => TestContext.Current.CancellationToken;

    [Fact]
    public async Task EnsureSchema_creates_everything_once_and_then_finds_it()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store(KeyStrategy.Natural);

        var first = await store.EnsureSchemaAsync(Cancel);
        var second = await store.EnsureSchemaAsync(Cancel);

        first.Created.ShouldBe(new[] { "device", "dead_letter" }.Concat(SqlServerSchema.ReadingTableNames()).Concat(["v_biosensor", "v_location", "v_pressure"]));
        first.Existing.ShouldBeEmpty();
        second.CreatedAnything.ShouldBeFalse();
        second.Existing.ShouldBe(first.Created);
        (await db.ScalarAsync("SELECT COUNT(*) FROM sys.indexes WHERE is_primary_key = 1 AND ignore_dup_key = 1 AND type = 1"))
            .ShouldBe(18, "the reading tables' clustered primary keys, and only those");
    }

    [Theory]
    [InlineData(KeyStrategy.Natural)]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task A_batch_with_duplicates_commits_and_stores_each_reading_once(KeyStrategy keys)
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store(keys);
        await store.EnsureSchemaAsync(Cancel);
        var readings = Enumerable.Range(0, 100).Select(i => Reading.Pressure(1, i % 4, T0.AddTicks(i * ReadingTime.TicksPerMicrosecond), T0, 100 + i)).ToList();

        var fresh = await store.WriteAsync(Batch(readings.Take(60)), Cancel);
        // 40 new, 20 already stored, and one of the new ones twice in the same batch.
        var overlapping = await store.WriteAsync(Batch(readings.Skip(40).Append(readings[99])), Cancel);

        fresh.ShouldBe(new BatchWriteResult(60, 0, 0));
        overlapping.ShouldBe(new BatchWriteResult(40, 21, 0), "exact: the copy drew 3604, so the readings were counted through the staging table");
        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, Cancel)).ShouldBe(100);
        (await store.ReadAsync(ReadingKind.Pressure, StorageTier.Hot, 1, Cancel)).ShouldBe(readings.OrderBy(r => r.Timestamp).ThenBy(r => r.Channel));
    }

    [Theory]
    [InlineData(KeyStrategy.Natural)]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task Readings_read_back_exactly_to_the_microsecond_with_missing_values_kept_missing(KeyStrategy keys)
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store(keys);
        await store.EnsureSchemaAsync(Cancel);
        var biosensor = new[]
        {
            Reading.Biosensor(5, 0, T0, T0.AddTicks(17 * ReadingTime.TicksPerMicrosecond), 72, 120, 80, 36.6),
            Reading.Biosensor(5, 1, T0.AddTicks(ReadingTime.TicksPerMicrosecond), T0, 61.5, null, null, null),
            Reading.Biosensor(5, 2, T0.AddTicks(2 * ReadingTime.TicksPerMicrosecond), T0, null, 95.25, null, 35.1),
        };
        var lastMicrosecondOf1999 = new DateTime(1999, 12, 31, 23, 59, 59, DateTimeKind.Utc).AddTicks(999_999 * ReadingTime.TicksPerMicrosecond);
        var location = new[] { Reading.Location(5, 0, lastMicrosecondOf1999, T0, 0.1, -1e-300, double.MaxValue) };
        var pressure = new[] { Reading.Pressure(5, 3, T0.AddDays(-1), T0, 101.325) };
        var batch = Batch(biosensor.Concat(location).Concat(pressure));

        var result = await store.WriteAsync(batch, Cancel);

        result.ShouldBe(new BatchWriteResult(5, 0, 0));
        (await store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, 5, Cancel)).ShouldBe(biosensor);
        (await store.ReadAsync(ReadingKind.Location, StorageTier.Hot, 5, Cancel)).ShouldBe(location);
        (await store.ReadAsync(ReadingKind.Pressure, StorageTier.Hot, 5, Cancel)).ShouldBe(pressure);
        (await store.ReadAsync(ReadingKind.Pressure, StorageTier.Hot, 6, Cancel)).ShouldBeEmpty();
        (await store.CountAsync(ReadingKind.Biosensor, StorageTier.Archive, Cancel)).ShouldBe(0);
    }

    [Fact]
    public async Task Guid_tables_hold_the_keys_ReadingKeys_gives_SQL_Server()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store(KeyStrategy.SequentialGuid);
        await store.EnsureSchemaAsync(Cancel);
        var readings = Enumerable.Range(0, 20).Select(i => Reading.Pressure(9, 0, T0.AddSeconds(i), T0, i)).ToList();
        await store.WriteAsync(Batch(readings), Cancel);

        // Clustered index order is time order: the ids were laid out for uniqueidentifier's sort order.
        var ids = new List<Guid>();
        await using (var connection = new SqlConnection(db.ConnectionString))
        {
            await connection.OpenAsync(Cancel);
            await using var command = new SqlCommand("SELECT id FROM dbo.reading_pressure_seqguid ORDER BY id;", connection);
            await using var reader = await command.ExecuteReaderAsync(Cancel);
            while (await reader.ReadAsync(Cancel))
            {
                ids.Add(reader.GetGuid(0));
            }
        }

        ids.ShouldBe(readings.Select(r => ReadingKeys.For(r, KeyStrategy.SequentialGuid, StorageProvider.SqlServer)!.Value));
    }

    [Fact]
    public async Task The_views_show_each_reading_with_its_serial_and_key_strategy()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var guid = db.Store(KeyStrategy.Guid);
        await guid.EnsureSchemaAsync(Cancel);
        int device = await guid.RegisterDeviceAsync("SN-VIEW", null, Cancel);
        await guid.WriteAsync(Batch([Reading.Pressure(device, 2, T0, T0, 101.5)]), Cancel);
        await using var natural = db.Store(KeyStrategy.Natural);
        await natural.WriteAsync(Batch([Reading.Pressure(device, 3, T0, T0, 99.5)]), Cancel);

        var rows = new List<(string Serial, int Channel, double Kpa, string Keys)>();
        await using var connection = new SqlConnection(db.ConnectionString);
        await connection.OpenAsync(Cancel);
        await using var command = new SqlCommand("SELECT serial, channel, kpa, key_strategy FROM dbo.v_pressure ORDER BY channel", connection);
        await using var reader = await command.ExecuteReaderAsync(Cancel);
        while (await reader.ReadAsync(Cancel))
        {
            rows.Add((reader.GetString(0), reader.GetInt32(1), reader.GetDouble(2), reader.GetString(3)));
        }

        rows.ShouldBe([("SN-VIEW", 2, 101.5, "guid"), ("SN-VIEW", 3, 99.5, "natural")]);
    }

    [Fact]
    public async Task Dead_letters_are_stored_with_the_batch_and_read_newest_first()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.EnsureSchemaAsync(Cancel);
        var older = new DeadLetter(T0, "saito/hub/biosensor", "hub-1", "malformed-json", "unexpected end", "{\"hr\":");
        var newer = new DeadLetter(T0.AddSeconds(1), "saito/hub/x", null, "unknown-kind", "kind 'x'", new string('\u00e9', DeadLetter.MaxPayloadChars));
        var batch = Batch([Reading.Pressure(1, 0, T0, T0, 1)]);
        batch.DeadLetters.Add(older);
        batch.DeadLetters.Add(newer);

        var result = await store.WriteAsync(batch, Cancel);

        result.ShouldBe(new BatchWriteResult(1, 0, 2));
        (await store.ReadDeadLettersAsync(10, Cancel)).ShouldBe([newer, older]);
        (await store.ReadDeadLettersAsync(1, Cancel)).ShouldBe([newer]);
    }

    [Fact]
    public async Task A_batch_that_fails_part_way_leaves_nothing_behind()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.EnsureSchemaAsync(Cancel);
        await db.ExecuteAsync("DROP TABLE dbo.dead_letter;");
        var batch = Batch([Reading.Pressure(1, 0, T0, T0, 1), Reading.Location(1, 0, T0, T0, 1, 2, 3)]);
        batch.DeadLetters.Add(new DeadLetter(T0, "t", null, "r", "d", "p"));

        await Should.ThrowAsync<Exception>(() => store.WriteAsync(batch, Cancel));

        (await store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, Cancel)).ShouldBe(0);
        (await store.CountAsync(ReadingKind.Location, StorageTier.Hot, Cancel)).ShouldBe(0);
    }

    [Fact]
    public async Task Concurrent_registrations_of_one_serial_get_one_id()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.EnsureSchemaAsync(Cancel);

        var ids = await Task.WhenAll(Enumerable.Range(0, 32).Select(i => Task.Run(
            () => store.RegisterDeviceAsync("hub-7/bio-1", i % 2 == 0 ? new DeviceAnnouncement("biosensor", 4, "1.2." + i, "hub-7") : null, Cancel),
            Cancel)));

        ids.Distinct().Count().ShouldBe(1);
        (await db.ScalarAsync("SELECT COUNT(*) FROM dbo.device")).ShouldBe(1);
        (await store.LoadDevicesAsync(Cancel)).ShouldBe(new Dictionary<string, int> { ["hub-7/bio-1"] = ids[0] });
    }

    [Fact]
    public async Task Serials_that_differ_only_in_case_are_different_devices()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.EnsureSchemaAsync(Cancel);

        int upper = await store.RegisterDeviceAsync("ABC-1", null, Cancel);
        int lower = await store.RegisterDeviceAsync("abc-1", null, Cancel);

        lower.ShouldNotBe(upper);
        (await store.RegisterDeviceAsync("ABC-1", null, Cancel)).ShouldBe(upper);
    }

    [Fact]
    public async Task An_announcement_records_what_it_states_and_keeps_the_rest()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.EnsureSchemaAsync(Cancel);

        int id = await store.RegisterDeviceAsync("dev-1", null, Cancel);
        (await db.ScalarAsync("SELECT COUNT(*) FROM dbo.device WHERE last_hello IS NULL AND first_seen IS NOT NULL")).ShouldBe(1);
        (await store.RegisterDeviceAsync("dev-1", new DeviceAnnouncement("location", 3, "2.0.1", "hub-2"), Cancel)).ShouldBe(id);
        (await store.RegisterDeviceAsync("dev-1", new DeviceAnnouncement(null, null, "2.0.2", null), Cancel)).ShouldBe(id);

        (await db.ScalarAsync("SELECT CONCAT(kind, '|', channels, '|', firmware, '|', hub) FROM dbo.device WHERE id = " + id)).ShouldBe("location|3|2.0.2|hub-2");
        (await db.ScalarAsync("SELECT COUNT(*) FROM dbo.device WHERE last_hello IS NOT NULL")).ShouldBe(1);
    }

    [Fact]
    public async Task Tiers_go_on_filegroups_that_Saito_adds_with_their_files()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        if (Convert.ToInt32(await db.ScalarAsync("SELECT SERVERPROPERTY('EngineEdition')"), System.Globalization.CultureInfo.InvariantCulture) == 5)
        {
            Assert.Skip("Azure SQL Database has no filegroups to add (ALTER DATABASE ... ADD FILE is not supported there)");
        }

        string folder = (string)(await db.ScalarAsync("SELECT CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000))"))!;
        await using var store = db.Store(KeyStrategy.Natural, sql =>
        {
            sql.HotFilegroup = "saito_hot";
            sql.HotFilePath = folder;
            sql.ArchiveFilegroup = "saito_archive";
            sql.ArchiveFilePath = folder;
        });

        var report = await store.EnsureSchemaAsync(Cancel);
        var again = await store.EnsureSchemaAsync(Cancel);

        report.Created.ShouldContain("filegroup [saito_hot]");
        report.Created.ShouldContain("filegroup [saito_archive]");
        again.Existing.ShouldContain("filegroup [saito_hot]");
        report.Created.Count(name => name.StartsWith("file ", StringComparison.Ordinal)).ShouldBe(2);
        again.CreatedAnything.ShouldBeFalse();
        foreach (var (table, filegroup) in new[] { ("reading_biosensor", "saito_hot"), ("archive_pressure_seqguid", "saito_archive"), ("device", "saito_hot"), ("dead_letter", "saito_hot") })
        {
            (await db.ScalarAsync(
                "SELECT ds.name FROM sys.indexes AS i JOIN sys.data_spaces AS ds ON ds.data_space_id = i.data_space_id " +
                $"WHERE i.object_id = OBJECT_ID(N'dbo.{table}') AND i.index_id IN (0, 1)")).ShouldBe(filegroup, table);
        }

        (await db.ScalarAsync(
            "SELECT COUNT(*) FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id " +
            $"WHERE g.name = N'saito_hot' AND f.name = N'{db.Name}_saito_hot'")).ShouldBe(1);
    }

    [Fact]
    public async Task A_configured_filegroup_that_is_missing_is_reported_with_the_fix()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store(KeyStrategy.Natural, sql => sql.HotFilegroup = "no_such_fg");

        var error = await Should.ThrowAsync<InvalidOperationException>(() => store.EnsureSchemaAsync(Cancel));

        error.Message.ShouldContain("[no_such_fg] does not exist");
        error.Message.ShouldContain("HotFilePath");
    }

    [Fact]
    public async Task A_reading_table_made_without_IGNORE_DUP_KEY_is_refused_at_start()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await db.ExecuteAsync(
            "CREATE TABLE dbo.reading_pressure (device_id int NOT NULL, channel int NOT NULL, ts datetime2(6) NOT NULL, kpa float NULL, " +
            "received_at datetime2(6) NOT NULL, CONSTRAINT pk_reading_pressure PRIMARY KEY CLUSTERED (device_id, channel, ts));");
        // The rest of the schema (including archive_pressure, made by Saito with the option) is fine.
        await using var store = db.Store();

        var error = await Should.ThrowAsync<InvalidOperationException>(() => store.EnsureSchemaAsync(Cancel));

        error.Message.ShouldContain("reading_pressure");
        error.Message.ShouldContain("ALTER INDEX [pk_reading_pressure] ON [dbo].[reading_pressure] REBUILD WITH (IGNORE_DUP_KEY = ON);");
        await db.ExecuteAsync("ALTER INDEX [pk_reading_pressure] ON [dbo].[reading_pressure] REBUILD WITH (IGNORE_DUP_KEY = ON);");
        (await store.EnsureSchemaAsync(Cancel)).Existing.ShouldContain("reading_pressure");
    }

    [Fact]
    public async Task Ping_answers_and_a_command_timeout_is_transient()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await store.PingAsync(Cancel);

        await using var connection = new SqlConnection(db.ConnectionString);
        await connection.OpenAsync(Cancel);
        await using var command = new SqlCommand("WAITFOR DELAY '00:00:05';", connection) { CommandTimeout = 1 };
        var timeout = await Should.ThrowAsync<SqlException>(() => command.ExecuteNonQueryAsync(Cancel));

        timeout.Number.ShouldBe(-2);
        store.IsTransient(timeout).ShouldBeTrue();
    }

    [Fact]
    public async Task A_deadlock_victim_is_transient()
    {
        await using var db = await SqlServerTestDatabase.CreateAsync();
        await using var store = db.Store();
        await db.ExecuteAsync("CREATE TABLE dbo.a (id int PRIMARY KEY, v int); CREATE TABLE dbo.b (id int PRIMARY KEY, v int); INSERT dbo.a VALUES (1, 0); INSERT dbo.b VALUES (1, 0);");
        await using var first = new SqlConnection(db.ConnectionString);
        await using var second = new SqlConnection(db.ConnectionString);
        await first.OpenAsync(Cancel);
        await second.OpenAsync(Cancel);
        await using var tx1 = (SqlTransaction)await first.BeginTransactionAsync(Cancel);
        await using var tx2 = (SqlTransaction)await second.BeginTransactionAsync(Cancel);
        await new SqlCommand("UPDATE dbo.a SET v = 1;", first, tx1).ExecuteNonQueryAsync(Cancel);
        await new SqlCommand("UPDATE dbo.b SET v = 1;", second, tx2).ExecuteNonQueryAsync(Cancel);

        var crossing = new[]
        {
            new SqlCommand("UPDATE dbo.b SET v = 2;", first, tx1).ExecuteNonQueryAsync(Cancel),
            new SqlCommand("UPDATE dbo.a SET v = 2;", second, tx2).ExecuteNonQueryAsync(Cancel),
        };
        var victim = await Should.ThrowAsync<SqlException>(async () => await Task.WhenAll(crossing));

        victim.Number.ShouldBe(1205);
        store.IsTransient(victim).ShouldBeTrue();
    }

    private static ReadingBatch Batch(IEnumerable<Reading> readings)
    {
        var batch = new ReadingBatch();
        batch.AddRange(readings);
        return batch;
    }
}

using System.Data.Common;
using System.Diagnostics;
using System.Net.Sockets;
using Microsoft.Extensions.Logging.Abstractions;
using Npgsql;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;
using Saito.Readings;
using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.Postgres;

/// <summary>The contract against a real PostgreSQL, a fresh database per test, plus what only PostgreSQL has.</summary>
public sealed class PostgresReadingStoreTests(PostgresServer server) : ReadingStoreContractTests, IClassFixture<PostgresServer>
{
    protected override async Task<StoreTestStorage> CreateFreshStorageAsync(bool tiered)
    {
        var (name, connectionString) = await server.CreateDatabaseAsync();
        return new PostgresTestStorage(server, name, connectionString, tiered ? PostgresServer.Tablespaces : null);
    }

    protected override async Task AssertTablesLiveInTheirTiersAsync(StoreTestStorage storage)
    {
        var postgres = (PostgresTestStorage)storage;
        var (hot, archive) = PostgresServer.Tablespaces;
        var tables = await postgres.QueryPairsAsync("SELECT tablename, coalesce(tablespace, '') FROM pg_tables WHERE schemaname = 'public'");
        var indexes = await postgres.QueryPairsAsync("SELECT indexname, coalesce(tablespace, '') FROM pg_indexes WHERE schemaname = 'public'");
        foreach (string table in EveryTable())
        {
            string expected = table.StartsWith("archive_", StringComparison.Ordinal) ? archive : hot;
            tables[table].ShouldBe(expected, $"tablespace of table {table}");
            indexes[PostgresSchema.PrimaryKeyName(table)].ShouldBe(expected, $"tablespace of the primary key of {table}");
        }
    }

    [Fact]
    public async Task A_missing_tablespace_with_a_location_is_created_there()
    {
        if (!server.IsLocal || !OperatingSystem.IsLinux() || Environment.UserName != "root")
        {
            Assert.Skip("needs a PostgreSQL on this machine and a root test process, to make a directory the postgres OS user owns");
        }

        string name = "saito_t_" + Guid.NewGuid().ToString("N")[..12];
        string directory = Path.Combine("/var/tmp", "saito-test-tablespaces", name);
        Directory.CreateDirectory(directory);
        await RunAsync("chown", "postgres:postgres", directory);
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        try
        {
            var options = storage.Options(KeyStrategy.Natural);
            options.Postgres.HotTablespace = name;
            options.Postgres.HotTablespaceLocation = directory;
            options.Postgres.ArchiveTablespace = name;
            await using var store = storage.CreateStore(options);

            var report = await store.EnsureSchemaAsync(Ct);
            var again = await store.EnsureSchemaAsync(Ct);

            report.Created.ShouldContain("tablespace " + name);
            again.Existing.ShouldContain("tablespace " + name);
            again.CreatedAnything.ShouldBeFalse();
            (await storage.QueryPairsAsync("SELECT tablename, coalesce(tablespace, '') FROM pg_tables WHERE schemaname = 'public'"))
                .Values.ShouldAllBe(tablespace => tablespace == name);
            Directory.EnumerateFileSystemEntries(directory).ShouldNotBeEmpty();
        }
        finally
        {
            await storage.DisposeAsync();
            await server.ExecuteAsync($"DROP TABLESPACE IF EXISTS {name}");
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public async Task A_missing_tablespace_without_a_location_fails_with_what_to_do()
    {
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        var options = storage.Options(KeyStrategy.Natural);
        options.Postgres.HotTablespace = "saito_no_such_tablespace";
        await using var store = storage.CreateStore(options);

        var failure = await Should.ThrowAsync<InvalidOperationException>(() => store.EnsureSchemaAsync(Ct));

        failure.Message.ShouldContain("saito_no_such_tablespace");
        failure.Message.ShouldContain("HotTablespaceLocation");
    }

    [Theory]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task Guid_keys_are_the_uuids_the_readings_derive(KeyStrategy keys)
    {
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        await using var store = storage.CreateStore(keys);
        await store.EnsureSchemaAsync(Ct);
        var readings = TestReadings.Of(ReadingKind.Biosensor, 50);

        await store.WriteAsync(TestReadings.Batch(readings), Ct);

        string table = ReadingTables.TableName(ReadingKind.Biosensor, keys, StorageTier.Hot);
        var stored = await storage.QueryPairsAsync($"SELECT id::text, device_id || '/' || channel || '/' || (extract(epoch from ts) * 1000000)::bigint FROM {table}");
        stored.Count.ShouldBe(50);
        foreach (var reading in readings)
        {
            string id = ReadingKeys.For(reading, keys, StorageProvider.Postgres)!.Value.ToString();
            stored[id].ShouldBe($"{reading.DeviceId}/{reading.Channel}/{ReadingTime.ToUnixMicroseconds(reading.Timestamp)}");
        }
    }

    [Fact]
    public async Task Sequential_uuids_in_key_order_are_in_time_order()
    {
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        await using var store = storage.CreateStore(KeyStrategy.SequentialGuid);
        await store.EnsureSchemaAsync(Ct);

        await store.WriteAsync(TestReadings.Batch(TestReadings.Of(ReadingKind.Location, 2000, devices: 7)), Ct);

        string table = ReadingTables.TableName(ReadingKind.Location, KeyStrategy.SequentialGuid, StorageTier.Hot);
        (await storage.ScalarAsync($"SELECT count(*) FROM (SELECT ts < lag(ts) OVER (ORDER BY id) AS backwards FROM {table}) t WHERE backwards"))
            .ShouldBe(0L);
    }

    [Fact]
    public async Task The_views_show_serials_beside_the_readings()
    {
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        await using var store = storage.CreateStore(KeyStrategy.SequentialGuid);
        await store.EnsureSchemaAsync(Ct);
        int device = await store.RegisterDeviceAsync("SN-VIEW", null, Ct);

        await store.WriteAsync(TestReadings.Batch([Reading.Pressure(device, 1, TestReadings.Start, TestReadings.Start, 99.5)]), Ct);

        (await storage.QueryPairsAsync("SELECT serial, kpa::text || ' ' || key_strategy FROM v_pressure ORDER BY ts DESC LIMIT 5"))
            .ShouldBe(new Dictionary<string, string> { ["SN-VIEW"] = "99.5 sequential-guid" });
    }

    [Fact]
    public async Task Describe_names_host_port_and_database_but_never_the_password()
    {
        await using var storage = (PostgresTestStorage)await CreateFreshStorageAsync(tiered: false);
        var options = storage.Options(KeyStrategy.Natural);
        options.ConnectionString = new NpgsqlConnectionStringBuilder(options.ConnectionString) { Password = "s3cret-Pa55" }.ToString();
        await using var store = storage.CreateStore(options);

        string description = store.Describe();

        var settings = new NpgsqlConnectionStringBuilder(options.ConnectionString);
        description.ShouldContain($"{settings.Host}:{settings.Port}/{storage.Database}");
        description.ShouldNotContain("s3cret-Pa55");
    }

    [Fact]
    public void Deadlocks_serialization_failures_shutdowns_and_lost_connections_are_transient()
    {
        var store = new PostgresReadingStore(
            new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = PostgresServer.DefaultConnectionString },
            NullLogger<PostgresReadingStore>.Instance);

        foreach (string sqlState in new[] { "40001", "40P01", "57P01", "08006", "08001", "08003", "57P03", "53300" })
        {
            store.IsTransient(new PostgresException("test", "ERROR", "ERROR", sqlState)).ShouldBeTrue(sqlState);
        }

        foreach (string sqlState in new[] { "23505", "23502", "42P01", "22P02", "42501" })
        {
            store.IsTransient(new PostgresException("test", "ERROR", "ERROR", sqlState)).ShouldBeFalse(sqlState);
        }

        store.IsTransient(new TimeoutException()).ShouldBeTrue();
        store.IsTransient(new IOException("reset")).ShouldBeTrue();
        store.IsTransient(new SocketException((int)SocketError.ConnectionRefused)).ShouldBeTrue();
        store.IsTransient(new NpgsqlException("lost", new IOException("reset"))).ShouldBeTrue();
        store.IsTransient(new ArgumentException("bug")).ShouldBeFalse();
    }

    private static async Task RunAsync(string program, params string[] arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true })!;
        string error = await process.StandardError.ReadToEndAsync(Ct);
        await process.WaitForExitAsync(Ct);
        process.ExitCode.ShouldBe(0, $"{program} {string.Join(' ', arguments)}: {error}");
    }
}

/// <summary>A database made for one test (dropped afterwards); tiered: the hot and archive test tablespaces.</summary>
public sealed class PostgresTestStorage(PostgresServer server, string database, string connectionString, (string Hot, string Archive)? tablespaces)
    : StoreTestStorage
{
    private bool _dropped;

    public string Database => database;

    public override StorageOptions Options(KeyStrategy keys)
    {
        var options = new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = connectionString, KeyStrategy = keys };
        if (tablespaces is var (hot, archive))
        {
            options.Postgres.HotTablespace = hot;
            options.Postgres.ArchiveTablespace = archive;
        }

        return options;
    }

    public override IReadingStore CreateStore(StorageOptions options) => new PostgresReadingStore(options, NullLogger<PostgresReadingStore>.Instance);

    public override async Task<DbConnection> OpenConnectionAsync(StorageTier tier, CancellationToken cancellationToken)
    {
        var connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(connectionString) { Pooling = false }.ToString());
        await connection.OpenAsync(cancellationToken);
        return connection;
    }

    public override async Task<IReadOnlySet<string>> TableNamesAsync(CancellationToken cancellationToken) =>
        (await QueryPairsAsync("SELECT tablename, '' FROM pg_tables WHERE schemaname = 'public'")).Keys.ToHashSet();

    /// <summary>A two-column query as a dictionary (first column unique).</summary>
    public async Task<Dictionary<string, string>> QueryPairsAsync(string sql)
    {
        await using var connection = await OpenConnectionAsync(StorageTier.Hot, TestContext.Current.CancellationToken);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await using var reader = await command.ExecuteReaderAsync(TestContext.Current.CancellationToken);
        var pairs = new Dictionary<string, string>();
        while (await reader.ReadAsync(TestContext.Current.CancellationToken))
        {
            pairs.Add(reader.GetString(0), reader.GetString(1));
        }

        return pairs;
    }

    public async Task<object?> ScalarAsync(string sql)
    {
        await using var connection = await OpenConnectionAsync(StorageTier.Hot, TestContext.Current.CancellationToken);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        return await command.ExecuteScalarAsync(TestContext.Current.CancellationToken);
    }

    public override async ValueTask DisposeAsync()
    {
        if (!_dropped)
        {
            _dropped = true;
            await server.DropDatabaseAsync(database);
        }
    }
}

using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>The store's parts that need no server: configuration, Describe, and how each bulk copy is set up.</summary>
public sealed class SqlServerReadingStoreTests
{
    private const string ConnectionString = "Server=tcp:db.example.org,1433;Database=sensors;User ID=saito_writer;Password=S3cr3t-Pa55;Encrypt=true";

    [Fact]
    public void Describe_names_server_and_database_but_never_the_password()
    {
        var store = Create();

        string description = store.Describe();

        description.ShouldBe("SQL Server database sensors on tcp:db.example.org,1433");
        description.ShouldNotContain("S3cr3t", Case.Insensitive);
        description.ShouldNotContain("Password", Case.Insensitive);
    }

    [Fact]
    public void The_factory_makes_a_SQL_Server_store_with_the_configured_key_strategy()
    {
        var options = Options(KeyStrategy.SequentialGuid);

        var store = ReadingStores.Create(options, NullLoggerFactory.Instance);

        store.ShouldBeOfType<SqlServerReadingStore>();
        store.Provider.ShouldBe(StorageProvider.SqlServer);
        store.KeyStrategy.ShouldBe(KeyStrategy.SequentialGuid);
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("   ")]
    public void A_missing_connection_string_is_refused_at_construction(string? connectionString)
    {
        var options = Options();
        options.ConnectionString = connectionString;

        Should.Throw<ArgumentException>(() => new SqlServerReadingStore(options, NullLogger<SqlServerReadingStore>.Instance))
            .Message.ShouldContain("Storage:ConnectionString");
    }

    [Fact]
    public void A_malformed_connection_string_is_refused_at_construction_not_at_the_first_batch()
    {
        var options = Options();
        options.ConnectionString = "Server=x;NoSuchKeyword=1";

        Should.Throw<ArgumentException>(() => new SqlServerReadingStore(options, NullLogger<SqlServerReadingStore>.Instance));
    }

    [Fact]
    public void An_undefined_key_strategy_is_refused()
    {
        var options = Options((KeyStrategy)(-1));

        Should.Throw<ArgumentException>(() => new SqlServerReadingStore(options, NullLogger<SqlServerReadingStore>.Instance));
    }

    [Theory]
    [MemberData(nameof(SqlServerRowSourceTests.EveryTable), MemberType = typeof(SqlServerRowSourceTests))]
    public void Each_kind_is_copied_with_every_column_mapped_by_name_and_streamed(ReadingKind kind, KeyStrategy keys)
    {
        string table = ReadingTables.TableName(kind, keys, StorageTier.Hot);
        var columns = ReadingTables.Columns(kind, keys);
        using var connection = new SqlConnection(ConnectionString);

        using var bulkCopy = SqlServerReadingStore.CreateBulkCopy(connection, transaction: null, $"[dbo].[{table}]", columns, timeoutSeconds: 45);

        bulkCopy.DestinationTableName.ShouldBe($"[dbo].[{table}]");
        bulkCopy.EnableStreaming.ShouldBeTrue();
        bulkCopy.BatchSize.ShouldBe(0);
        bulkCopy.BulkCopyTimeout.ShouldBe(45);
        var mappings = bulkCopy.ColumnMappings.Cast<SqlBulkCopyColumnMapping>().ToList();
        mappings.Select(m => m.SourceColumn).ShouldBe(columns);
        mappings.Select(m => m.DestinationColumn).ShouldBe(columns);

        // Every mapping resolves in the row source the way SqlBulkCopy resolves it (GetOrdinal by name).
        using var source = new ReadingRowSource(kind, keys, []);
        mappings.Select(m => source.GetOrdinal(m.SourceColumn)).ShouldBe(Enumerable.Range(0, columns.Count));
    }

    [Fact]
    public void Dead_letters_are_copied_with_every_column_but_the_identity_mapped()
    {
        using var connection = new SqlConnection(ConnectionString);

        using var bulkCopy = SqlServerReadingStore.CreateBulkCopy(connection, null, "[dbo].[dead_letter]", SqlServerSchema.DeadLetterColumns, 60);

        bulkCopy.DestinationTableName.ShouldBe("[dbo].[dead_letter]");
        var mapped = bulkCopy.ColumnMappings.Cast<SqlBulkCopyColumnMapping>().Select(m => m.DestinationColumn).ToList();
        mapped.ShouldBe(["received_at", "topic", "client_id", "reason", "detail", "payload", "payload_bytes"]);
        using var source = new DeadLetterRowSource([]);
        mapped.Select(source.GetOrdinal).ShouldBe(Enumerable.Range(0, 7));
    }

    [Fact]
    public void Registration_of_a_batch_is_one_merge_from_json_under_a_key_range_lock_then_the_ids()
    {
        string sql = SqlServerReadingStore.RegisterSql;

        sql.ShouldContain("MERGE [dbo].[device] WITH (HOLDLOCK) AS d");
        sql.ShouldContain("FROM OPENJSON(@devices) WITH (");
        sql.ShouldContain($"SELECT j.[serial] COLLATE {SqlServerSchema.SerialCollation} AS [serial]");
        sql.ShouldContain("WHEN MATCHED AND s.[hello] = 1 THEN");
        sql.ShouldContain("WHEN NOT MATCHED BY TARGET THEN");
        sql.ShouldContain("SELECT d.[serial], d.[id], d.[hub]\nFROM [dbo].[device] AS d\nWHERE d.[serial] IN (");
        sql.Split("MERGE ").Length.ShouldBe(2, "one statement registers the whole batch");
    }

    [Fact]
    public void A_batch_goes_to_the_server_as_one_json_array_with_hello_texts_cut_to_their_columns()
    {
        string json = SqlServerReadingStore.RegistrationJson(
        [
            new("wrist-1", null),
            new("wrist-\"2\"", new DeviceAnnouncement("biosensor", 4, new string('f', SqlServerSchema.FirmwareLength + 5), "hub-1")),
            new("wrist-3", new DeviceAnnouncement(null, null, null, null)),
            new("wrist-4", null, "hub-2"),
            new("wrist-5", new DeviceAnnouncement(null, null, null, "hub-3"), "hub-2"),
        ]);

        json.ShouldBe(
            "[{\"s\":\"wrist-1\"}," +
            $"{{\"s\":\"wrist-\\u00222\\u0022\",\"x\":1,\"k\":\"biosensor\",\"c\":4,\"f\":\"{new string('f', SqlServerSchema.FirmwareLength)}\",\"h\":\"hub-1\"}}," +
            "{\"s\":\"wrist-3\",\"x\":1}," +
            "{\"s\":\"wrist-4\",\"h\":\"hub-2\"}," +
            "{\"s\":\"wrist-5\",\"x\":1,\"h\":\"hub-3\"}]");
        Should.Throw<ArgumentException>(() => SqlServerReadingStore.RegistrationJson([new(new string('s', SqlServerSchema.SerialLength + 1), null)]));
    }

    [Fact]
    public async Task Registration_refuses_a_serial_longer_than_its_column_before_touching_the_database()
    {
        var store = Create();

        await Should.ThrowAsync<ArgumentException>(() =>
            store.RegisterDeviceAsync(new string('s', SqlServerSchema.SerialLength + 1), null, TestContext.Current.CancellationToken));
        await Should.ThrowAsync<ArgumentException>(() => store.RegisterDeviceAsync(string.Empty, null, TestContext.Current.CancellationToken));
    }

    [Theory]
    [InlineData(ReadingKind.Pressure, "kpa")]
    [InlineData(ReadingKind.Location, "y")]
    public async Task A_reading_without_a_required_value_is_refused_before_any_round_trip(ReadingKind kind, string column)
    {
        var store = Create();
        var received = new DateTime(2025, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        var batch = new ReadingBatch();
        batch.Add(Reading.Biosensor(1, 0, received, received, null, null, null, null));
        batch.Add(kind == ReadingKind.Pressure ? new Reading(kind, 4, 2, received, received, null) : new Reading(kind, 4, 2, received, received, 1, null, 3));

        var error = await Should.ThrowAsync<ArgumentException>(() => store.WriteAsync(batch, TestContext.Current.CancellationToken));

        error.Message.ShouldContain($"needs {column} (device 4, channel 2");
    }

    [Theory]
    [InlineData(double.NaN)]
    [InlineData(double.PositiveInfinity)]
    [InlineData(double.NegativeInfinity)]
    public async Task A_value_SQL_Server_float_cannot_hold_is_refused_before_any_round_trip(double value)
    {
        var store = Create();
        var received = new DateTime(2025, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        var batch = new ReadingBatch();
        batch.Add(Reading.Biosensor(9, 1, received, received, 70, null, value, null));

        var error = await Should.ThrowAsync<ArgumentException>(() => store.WriteAsync(batch, TestContext.Current.CancellationToken));

        error.Message.ShouldContain("has diastolic = ");
        error.Message.ShouldContain("(device 9, channel 1");
    }

    [Fact]
    public async Task An_empty_batch_commits_without_a_connection()
    {
        var store = Create();

        var result = await store.WriteAsync(new ReadingBatch(), TestContext.Current.CancellationToken);

        result.ShouldBe(new BatchWriteResult(0, 0, 0));
    }

    private static SqlServerReadingStore Create() => new(Options(), NullLogger<SqlServerReadingStore>.Instance);

    private static StorageOptions Options(KeyStrategy keys = KeyStrategy.Natural) => new()
    {
        Provider = StorageProvider.SqlServer,
        ConnectionString = ConnectionString,
        KeyStrategy = keys,
    };
}

using System.Data.Common;
using System.Globalization;
using Microsoft.Data.SqlClient;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Storage.Keys;
using Saito.Storage.SqlServer;
using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// The contract every store keeps, against a real SQL Server: a database of its own per test. Every test is
/// reported as skipped with <see cref="SqlServerTestServer.SkipReason"/> when <c>SAITO_TEST_SQLSERVER</c> is unset.
/// SQL Server counts duplicates exactly (see <see cref="SqlServerReadingStore.WriteAsync"/>), so
/// <see cref="ReadingStoreContractTests.CountsDuplicates"/> keeps its default.
/// </summary>
public sealed class SqlServerReadingStoreContractTests : ReadingStoreContractTests
{
    protected override async Task<StoreTestStorage> CreateFreshStorageAsync(bool tiered)
    {
        var database = await SqlServerTestDatabase.CreateAsync();
        if (!tiered)
        {
            return new SqlServerTestStorage(database, folder: null);
        }

        if (Convert.ToInt32(await database.ScalarAsync("SELECT SERVERPROPERTY('EngineEdition')"), CultureInfo.InvariantCulture) == 5)
        {
            await database.DisposeAsync();
            Assert.Skip("Azure SQL Database has one filegroup (PRIMARY): the tiers cannot be placed apart there");
        }

        string folder = (string)(await database.ScalarAsync("SELECT CAST(SERVERPROPERTY('InstanceDefaultDataPath') AS nvarchar(4000))"))!;
        return new SqlServerTestStorage(database, folder);
    }

    protected override async Task AssertTablesLiveInTheirTiersAsync(StoreTestStorage storage)
    {
        var sqlServer = (SqlServerTestStorage)storage;
        var filegroups = new Dictionary<string, string>(StringComparer.Ordinal);
        await using (var connection = (SqlConnection)await storage.OpenConnectionAsync(StorageTier.Hot, Ct))
        {
            await using var command = new SqlCommand(
                "SELECT t.name, ds.name FROM sys.tables AS t JOIN sys.indexes AS i ON i.object_id = t.object_id AND i.index_id IN (0, 1) " +
                "JOIN sys.data_spaces AS ds ON ds.data_space_id = i.data_space_id WHERE t.schema_id = SCHEMA_ID(N'dbo')",
                connection);
            await using var reader = await command.ExecuteReaderAsync(Ct);
            while (await reader.ReadAsync(Ct))
            {
                filegroups[reader.GetString(0)] = reader.GetString(1);
            }
        }

        foreach (string table in EveryTable())
        {
            string expected = table.StartsWith("archive_", StringComparison.Ordinal) ? SqlServerTestStorage.ArchiveFilegroup : SqlServerTestStorage.HotFilegroup;
            filegroups[table].ShouldBe(sqlServer.IsTiered ? expected : "PRIMARY", $"filegroup of {table}");
        }
    }
}

/// <summary>A fresh database, and stores over it; tiered: hot and archive filegroups with files in the server's data folder.</summary>
internal sealed class SqlServerTestStorage(SqlServerTestDatabase database, string? folder) : StoreTestStorage
{
    public const string HotFilegroup = "saito_test_hot";
    public const string ArchiveFilegroup = "saito_test_archive";

    public bool IsTiered => folder is not null;

    public override StorageOptions Options(KeyStrategy keys) => database.Options(keys, sql =>
    {
        if (folder is not null)
        {
            sql.HotFilegroup = HotFilegroup;
            sql.HotFilePath = folder;
            sql.ArchiveFilegroup = ArchiveFilegroup;
            sql.ArchiveFilePath = folder;
        }
    });

    public override IReadingStore CreateStore(StorageOptions options) => new SqlServerReadingStore(options, NullLogger<SqlServerReadingStore>.Instance);

    public override async Task<DbConnection> OpenConnectionAsync(StorageTier tier, CancellationToken cancellationToken)
    {
        // Both tiers are in the one database (on different filegroups when tiered).
        var connection = new SqlConnection(database.ConnectionString);
        await connection.OpenAsync(cancellationToken);
        return connection;
    }

    public override async Task<IReadOnlySet<string>> TableNamesAsync(CancellationToken cancellationToken)
    {
        var names = new HashSet<string>(StringComparer.Ordinal);
        await using var connection = new SqlConnection(database.ConnectionString);
        await connection.OpenAsync(cancellationToken);
        await using var command = new SqlCommand("SELECT name FROM sys.tables WHERE schema_id = SCHEMA_ID(N'dbo')", connection);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        while (await reader.ReadAsync(cancellationToken))
        {
            names.Add(reader.GetString(0));
        }

        return names;
    }

    public override ValueTask DisposeAsync() => database.DisposeAsync();
}

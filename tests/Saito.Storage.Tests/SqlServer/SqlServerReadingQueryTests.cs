using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// The readings queries on a real SQL Server, a database of its own per test; every test is reported as skipped with
/// <see cref="SqlServerTestServer.SkipReason"/> when <c>SAITO_TEST_SQLSERVER</c> is unset.
/// </summary>
public sealed class SqlServerReadingQueryTests : ReadingQueryContractTests
{
    protected override async Task<StoreTestStorage> CreateFreshStorageAsync() =>
        new SqlServerTestStorage(await SqlServerTestDatabase.CreateAsync(), folder: null);

    protected override string DropIndexSql(string index, string table) => $"DROP INDEX [{index}] ON [dbo].[{table}];";

    protected override string CountIndexSql(string index) => $"SELECT COUNT_BIG(*) FROM sys.indexes WHERE [name] = N'{index}';";
}

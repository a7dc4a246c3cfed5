using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.Sqlite;

/// <summary>The readings queries on SQLite: the hot and archive files of a fresh temporary folder per test.</summary>
public sealed class SqliteReadingQueryTests : ReadingQueryContractTests
{
    protected override Task<StoreTestStorage> CreateFreshStorageAsync() => Task.FromResult<StoreTestStorage>(new SqliteTestStorage());

    protected override string CountIndexSql(string index) => $"SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = '{index}'";
}

using Saito.Storage.Tests.Contract;

namespace Saito.Storage.Tests.Postgres;

/// <summary>The readings queries on a real PostgreSQL, a fresh database per test.</summary>
public sealed class PostgresReadingQueryTests(PostgresServer server) : ReadingQueryContractTests, IClassFixture<PostgresServer>
{
    protected override async Task<StoreTestStorage> CreateFreshStorageAsync()
    {
        var (name, connectionString) = await server.CreateDatabaseAsync();
        return new PostgresTestStorage(server, name, connectionString, tablespaces: null);
    }

    protected override string CountIndexSql(string index) => $"SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = '{index}'";
}

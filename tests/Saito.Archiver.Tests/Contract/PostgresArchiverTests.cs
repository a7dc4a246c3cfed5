using Npgsql;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Keys;

namespace Saito.Archiver.Tests.Contract;

[CollectionDefinition(Name)]
public sealed class PostgresCollection : ICollectionFixture<PostgresServer>
{
    public const string Name = "PostgreSQL";
}

/// <summary>The archiver on PostgreSQL (SAITO_TEST_POSTGRES): a database per test, journal beside the tables.</summary>
[Collection(PostgresCollection.Name)]
public sealed class PostgresArchiverTests(PostgresServer server) : ArchiverContractTests
{
    protected override async Task<ArchiveTestStorage> CreateStorageAsync(KeyStrategy keys) => await PostgresArchiveTestStorage.CreateAsync(server, keys);

    protected override bool DeleteCommitsWithDone => true;

    /// <summary>
    /// Tiny batches over every slice of every kind, so each worker (and a lone worker's second batch in flight) opens
    /// and closes connections as fast as it can, while another connection samples <c>pg_stat_activity</c> for the run's
    /// database: the archiver's connections never exceed one per worker plus three (docs/archiver.md#connections).
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(6)]
    public async Task A_run_never_holds_more_connections_than_its_workers_plus_three(int threads)
    {
        await using var storage = (PostgresArchiveTestStorage)await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var sampler = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(server.ConnectionString) { Database = "postgres", Pooling = false }.ToString());
        await sampler.OpenAsync(Token);
        await using var count = new NpgsqlCommand(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'saito-archiver'", sampler);
        count.Parameters.Add(new NpgsqlParameter<string> { TypedValue = storage.Database });
        await ShouldStayWithinItsConnectionsAsync(storage, threads, async () => (long)(await count.ExecuteScalarAsync(Token))!);
    }
}

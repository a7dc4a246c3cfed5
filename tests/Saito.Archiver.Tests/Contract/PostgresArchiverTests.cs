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
}

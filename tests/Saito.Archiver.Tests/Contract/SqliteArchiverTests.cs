using Saito.Archiver.Tests.Infrastructure;
using Saito.Storage.Keys;

namespace Saito.Archiver.Tests.Contract;

/// <summary>The archiver on SQLite: hot and archive tiers in two files, the journal in the archive file.</summary>
public sealed class SqliteArchiverTests : ArchiverContractTests
{
    protected override async Task<ArchiveTestStorage> CreateStorageAsync(KeyStrategy keys) => await SqliteArchiveTestStorage.CreateAsync(keys);
}

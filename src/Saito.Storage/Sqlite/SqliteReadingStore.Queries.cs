using System.Data.Common;
using Saito.Readings;
using Saito.Storage.Data;

namespace Saito.Storage.Sqlite;

/// <summary>
/// SQLite's part of the readings queries: the archive tier is another file, attached to a hot-tier connection for the
/// length of one query (and detached before the connection goes back to the pool), so one statement reads both tiers
/// and de-duplicates across them; times are microseconds since 1970 already.
/// </summary>
public sealed partial class SqliteReadingStore
{
    private const string ArchiveSchema = "saito_archive";

    private protected override async ValueTask<DbConnection> OpenBothTiersAsync(CancellationToken cancellationToken)
    {
        var connection = await _hot.OpenConnectionAsync(cancellationToken);
        try
        {
            await using var attach = connection.Command($"ATTACH DATABASE $file AS {ArchiveSchema}");
            attach.Add("$file", _archive.File);
            await attach.ExecuteNonQueryAsync(cancellationToken);
            return connection;
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }

    private protected override async ValueTask CloseBothTiersAsync(DbConnection connection)
    {
        try
        {
            await connection.ExecuteAsync($"DETACH DATABASE {ArchiveSchema}", CancellationToken.None);
        }
        finally
        {
            await connection.DisposeAsync();
        }
    }

    private protected override string TierTable(ReadingKind kind, StorageTier tier) =>
        (tier == StorageTier.Hot ? "main." : ArchiveSchema + ".") + ReadingTables.TableName(kind, KeyStrategy, tier);

    private protected override void AddTime(DbCommand command, string name, DateTime utc) => command.Add(name, ReadingTime.ToUnixMicroseconds(utc));

    private protected override string EpochMicroseconds(string column) => column;

    /// <summary>ts is whole microseconds since 1970 here.</summary>
    private protected override string TimeBefore(string time, TimeSpan span) =>
        FormattableString.Invariant($"({time} - {(long)span.TotalMicroseconds})");
}

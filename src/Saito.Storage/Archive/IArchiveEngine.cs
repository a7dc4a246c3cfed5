using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>
/// What the archiver needs of one database: the journal, and each step of a batch through that database's bulk
/// path. Every step that changes a table records the batch's next state in the same transaction when the journal
/// lives beside that table, and is idempotent, so that a step interrupted at any point is simply done again.
/// Safe to call from several workers at once (each call takes its own connection).
/// </summary>
internal interface IArchiveEngine : IAsyncDisposable
{
    string Describe();

    Task<bool> JournalExistsAsync(CancellationToken cancellationToken);

    /// <summary>
    /// The lock one run holds from start to end, so that two runs (an overlapping cron job, a person by hand) never
    /// work on the same batches; null when another run holds it. The operating system or the database releases it when
    /// the process dies, however it dies.
    /// </summary>
    Task<IAsyncDisposable?> TryLockRunAsync(CancellationToken cancellationToken);

    /// <summary>
    /// Sizes the engine's connections for a run with this many workers (PostgreSQL: a pool of at most workers + 3);
    /// called before a run starts, never during one.
    /// </summary>
    Task UseWorkersAsync(int workers);

    Task EnsureJournalAsync(CancellationToken cancellationToken);

    Task<IReadOnlyList<ArchiveBatch>> LoadJournalAsync(bool unfinishedOnly, CancellationToken cancellationToken);

    /// <summary>Records a new batch as planned.</summary>
    Task PlanAsync(ArchiveBatch batch, CancellationToken cancellationToken);

    /// <summary>Records the batch's state (exported) with its rows, keys and checksum.</summary>
    Task SetStateAsync(ArchiveBatch batch, CancellationToken cancellationToken);

    /// <summary>Removes a planned batch that found no rows.</summary>
    Task ForgetAsync(string batchId, CancellationToken cancellationToken);

    /// <summary>Lowest and highest device id in a hot table (null when empty): the range slices split.</summary>
    Task<(long Min, long Max)?> DeviceRangeAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken);

    /// <summary>Rows of a hot table older than the cutoff.</summary>
    Task<long> CountOlderAsync(ReadingKind kind, KeyStrategy keys, long cutoffMicros, CancellationToken cancellationToken);

    /// <summary>The batch's rows: older than its cutoff, in its slice, after its cursor, in key order, at most its size.</summary>
    Task<List<ArchiveRow>> SelectAsync(ArchiveBatch batch, CancellationToken cancellationToken);

    /// <summary>
    /// Inserts the rows into the archive table, skipping rows already there (a step done again after a crash), and
    /// records the batch as archived, in one transaction. Returns the rows inserted.
    /// </summary>
    Task<long> ArchiveAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken);

    /// <summary>
    /// Deletes exactly these rows' keys from the hot table (rows that arrived meanwhile stay) in one short
    /// transaction, then records the batch as done. Returns the rows deleted.
    /// <para>
    /// With <paramref name="rangeFirst"/> (the rows were selected by this process, in this run, under the run lock):
    /// first one range delete, <c>key BETWEEN first AND last AND ts &lt; cutoff</c>, kept only when it removed exactly
    /// <c>rows.Count</c> rows. Every exported row is in that range and still in hot (only this run deletes, and has not
    /// yet), so an equal count means nothing else was in it; a reading that arrived meanwhile makes it larger, and the
    /// delete falls back (in the same transaction) to one key at a time. A resumed batch always deletes key by key.
    /// </para>
    /// </summary>
    Task<long> DeleteHotAsync(ArchiveBatch batch, IReadOnlyList<ArchiveRow> rows, bool rangeFirst, CancellationToken cancellationToken);

    /// <summary>For verify: how many of the rows the archive table holds with exactly these values, and how many of their keys the hot table holds.</summary>
    Task<(long InArchive, long InHot)> CheckAsync(ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken);

    /// <summary>Rows whose key is in both the hot and the archive table of a kind.</summary>
    Task<long> InBothTiersAsync(ReadingKind kind, KeyStrategy keys, CancellationToken cancellationToken);

    /// <summary>Inserts rows into a table (restore), skipping keys already there. Returns the rows inserted.</summary>
    Task<long> InsertAsync(string table, ReadingKind kind, KeyStrategy keys, IReadOnlyList<ArchiveRow> rows, CancellationToken cancellationToken);
}

using Microsoft.Data.Sqlite;
using Npgsql;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;

namespace Saito.LoadTest.Common;

/// <summary>
/// Fills a fresh database with <see cref="BulkReadings"/> rows through Saito's own store: the devices first (ids
/// 1..64, as the generated rows assume), then the rows, generated a batch at a time so that tens of millions need no
/// more memory than the batches in flight.
/// </summary>
internal static class BenchSeeder
{
    /// <summary>Schema, then the 64 devices, which must get ids 1..64 as the generated rows assume.</summary>
    public static async Task<int[]> PrepareAsync(IReadingStore store, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(store);
        await store.EnsureSchemaAsync(token);
        var ids = new int[BulkReadings.Devices];
        for (int device = 0; device < BulkReadings.Devices; device++)
        {
            ids[device] = await store.RegisterDeviceAsync(BulkReadings.Serial(device), null, token);
            if (ids[device] != device + 1)
            {
                throw new InvalidOperationException($"Device {BulkReadings.Serial(device)} got id {ids[device]} in a fresh database; expected {device + 1}.");
            }
        }

        return ids;
    }

    /// <summary>
    /// Writes rows <paramref name="first"/> .. first + count - 1 with <paramref name="writers"/> concurrent
    /// <see cref="IReadingWriter.WriteAsync"/> calls of <paramref name="batch"/> rows; <paramref name="progress"/> gets the rows written so far.
    /// </summary>
    public static async Task WriteAsync(IReadingStore store, long first, long count, int writers, int batch, Action<long>? progress, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(store);
        var ids = Enumerable.Range(1, BulkReadings.Devices).ToArray();
        long batches = (count + batch - 1) / batch;
        long next = -1;
        long written = 0;
        await Task.WhenAll(Enumerable.Range(0, Math.Max(1, writers)).Select(_ => Task.Run(async () =>
        {
            var rows = new Reading[batch];
            var readingBatch = new ReadingBatch();
            long index;
            while ((index = Interlocked.Increment(ref next)) < batches)
            {
                long from = index * batch;
                int n = (int)Math.Min(batch, count - from);
                BulkReadings.Fill(rows.AsSpan(0, n), first + from, ids);
                readingBatch.Clear();
                for (int i = 0; i < n; i++)
                {
                    readingBatch.Add(rows[i]);
                }

                await store.WriteAsync(readingBatch, token);
                progress?.Invoke(Interlocked.Add(ref written, n));
            }
        }, token)));
    }

    /// <summary>
    /// Brings freshly loaded tables to the state a live database keeps them in, before a timed step reads them
    /// (not timed): PostgreSQL vacuumed and analyzed (as autovacuum keeps a table whose rows are hours old, with
    /// hint bits set and statistics current), SQLite's write-ahead log checkpointed into the database files.
    /// SQL Server needs neither.
    /// </summary>
    public static async Task SettleAsync(StorageOptions options, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(options);
        switch (options.Provider)
        {
            case StorageProvider.Postgres:
                await using (var connection = new NpgsqlConnection(options.ConnectionString))
                {
                    await connection.OpenAsync(token);
                    foreach (var tier in new[] { StorageTier.Hot, StorageTier.Archive })
                    {
                        await using var vacuum = new NpgsqlCommand($"VACUUM (ANALYZE) {ReadingTables.TableName(ReadingKind.Biosensor, options.KeyStrategy, tier)}", connection) { CommandTimeout = 0 };
                        await vacuum.ExecuteNonQueryAsync(token);
                    }
                }

                break;
            case StorageProvider.Sqlite:
                foreach (string file in new[] { Path.Combine(options.HotPath, SqliteSchema.HotFileName), Path.Combine(options.ArchivePath, SqliteSchema.ArchiveFileName) })
                {
                    await using var connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = file, Pooling = false }.ToString());
                    await connection.OpenAsync(token);
                    await using var checkpoint = connection.CreateCommand();
                    checkpoint.CommandText = "PRAGMA wal_checkpoint(TRUNCATE)";
                    await checkpoint.ExecuteNonQueryAsync(token);
                }

                break;
        }
    }
}

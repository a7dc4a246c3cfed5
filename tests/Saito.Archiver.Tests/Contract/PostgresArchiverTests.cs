using Npgsql;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Readings;
using Saito.Storage.Archive;
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

    /// <summary>
    /// A run whose move statement waits (another session holds every hot row locked, FOR UPDATE, so the archiver's DELETE
    /// waits for a row once its COPY has begun) still ends promptly when it is cancelled, with a cancellation, and moves
    /// nothing; and its statement does not wait on in the server. (Npgsql ends a cancelled COPY by closing its
    /// connection, which the server notices through client_connection_check_interval.)
    /// </summary>
    [Fact]
    public async Task Cancelling_a_run_whose_move_statement_waits_ends_it_and_moves_nothing()
    {
        await using var storage = (PostgresArchiveTestStorage)await SeededAsync(CreateStorageAsync, KeyStrategy.Natural);
        await using var holder = new NpgsqlConnection(storage.ConnectionString);
        await holder.OpenAsync(Token);
        await using var hold = await holder.BeginTransactionAsync(Token);
        foreach (var kind in ReadingKinds.All)
        {
            await using var command = new NpgsqlCommand(
                $"SELECT count(*) FROM (SELECT 1 FROM {ReadingTables.TableName(kind, KeyStrategy.Natural, StorageTier.Hot)} FOR UPDATE) locked", holder, hold);
            await command.ExecuteNonQueryAsync(Token);
        }

        await using var archiver = storage.CreateArchiver();
        using var cancel = CancellationTokenSource.CreateLinkedTokenSource(Token);
        var run = archiver.RunAsync(Request(storage), cancel.Token);
        // Sampled from a connection outside the holder's transaction: pg_stat_activity is read once per transaction.
        await using var sampler = new NpgsqlConnection(storage.ConnectionString);
        await sampler.OpenAsync(Token);
        await using var waiting = new NpgsqlCommand(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'saito-archiver' AND wait_event_type = 'Lock'", sampler);
        async Task UntilAsync(bool waits, TimeSpan limit, string failure, Task? stillRunning = null)
        {
            var deadline = DateTime.UtcNow + limit;
            while ((long)(await waiting.ExecuteScalarAsync(Token))! > 0 != waits)
            {
                stillRunning?.IsCompleted.ShouldBeFalse("the run ended before its move statement waited for the lock");
                DateTime.UtcNow.ShouldBeLessThan(deadline, failure);
                await Task.Delay(20, Token);
            }
        }

        await UntilAsync(waits: true, TimeSpan.FromSeconds(30), "the archiver's move statement never waited for the lock", run);

        await cancel.CancelAsync();
        var ended = await Task.WhenAny(run, Task.Delay(TimeSpan.FromSeconds(20), Token));
        ended.ShouldBe(run, "the run did not end within 20 s of its cancellation");
        await Should.ThrowAsync<OperationCanceledException>(run);

        // And the statement itself ends on the server while the rows are still locked: it is not left waiting there
        // until the lock goes (PostgreSQL 14 and later; the archiver's sessions check their connection every second).
        if (sampler.PostgreSqlVersion.Major >= 14)
        {
            await UntilAsync(waits: false, TimeSpan.FromSeconds(20), "the archiver's move statement still waited for the lock 20 s after the run was cancelled");
        }

        await hold.RollbackAsync(Token);
        var (hot, archive) = await TiersAsync(storage);
        archive.ShouldBeEmpty();
        hot.Count.ShouldBe(Readings(0, Total).Count);
    }

    /// <summary>
    /// A batch larger than the buffers on its way: one batch of 5,000 biosensor rows (about 400 KB of binary COPY out of
    /// the move statement and into the archive table, sent 64 KB at a time by PgBinaryCopy) is archived exactly, values
    /// and NULLs included. The other tests move batches of a few KB.
    /// </summary>
    [Fact]
    public async Task A_batch_larger_than_its_buffers_is_archived_exactly()
    {
        await using var storage = await CreateStorageAsync(KeyStrategy.Natural);
        var readings = TestReadings.Of(ReadingKind.Biosensor, 6000, devices: Devices);
        await storage.WriteAsync(readings);
        // Reading i is about i ms after Start (less than a millisecond more): the first 5,000 are older than Start + 5 s.
        var old = readings.Take(5000).ToList();

        await using var archiver = storage.CreateArchiver();
        var summary = await archiver.RunAsync(
            Request(storage, batchRows: 5000) with { Kinds = [ReadingKind.Biosensor], Cutoff = TestReadings.Start.AddSeconds(5) }, Token);

        summary.Failures.ShouldBeEmpty();
        summary.RowsMoved.ShouldBe(old.Count);
        summary.Kinds.Single().Batches.ShouldBe(1, "all 5,000 rows in one batch");
        var archive = await storage.ReadAllAsync(ReadingKind.Biosensor, StorageTier.Archive, DeviceIds);
        var hot = await storage.ReadAllAsync(ReadingKind.Biosensor, StorageTier.Hot, DeviceIds);
        archive.Count.ShouldBe(old.Count);
        ReadingSets.Checksum(archive).ShouldBe(ReadingSets.Checksum(old));
        ReadingSets.Checksum(hot).ShouldBe(ReadingSets.Checksum(readings.Skip(5000)));
    }

    /// <summary>
    /// The move's rows come back from PostgreSQL in the heap's order and are sorted in the archiver: its order must be
    /// PostgreSQL's own ORDER BY, for natural keys (negative ids and times before 1970 included) and for uuids
    /// (whose first bytes, read as a .NET Guid, are integers: the sign and byte order are where the two could differ).
    /// </summary>
    [Theory]
    [InlineData(KeyStrategy.Natural)]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public async Task The_move_s_rows_are_sorted_in_PostgreSQL_s_key_order(KeyStrategy keys)
    {
        var random = new Random(15);
        var rows = new List<ArchiveRow>();
        for (int i = 0; i < 3_000; i++)
        {
            var ts = DateTime.UnixEpoch.AddTicks(random.NextInt64(-400_000_000_000_000, 900_000_000_000_000) / 10 * 10);
            var id = keys == KeyStrategy.Natural ? Guid.Empty : new Guid(random.GetItems<byte>([0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff], 16), bigEndian: true);
            rows.Add(new ArchiveRow(id, new Reading(ReadingKind.Biosensor, random.Next(-3, 6), random.Next(-3, 4), ts, ts, 70, null, null, null)));
        }

        await using var connection = new NpgsqlConnection(server.ConnectionString);
        await connection.OpenAsync(Token);
        await using (var create = new NpgsqlCommand("CREATE TEMP TABLE sort_check (n integer, device_id integer, channel integer, ts timestamptz, id uuid)", connection))
        {
            await create.ExecuteNonQueryAsync(Token);
        }

        await using (var import = await connection.BeginBinaryImportAsync("COPY sort_check FROM STDIN (FORMAT BINARY)", Token))
        {
            for (int i = 0; i < rows.Count; i++)
            {
                await import.StartRowAsync(Token);
                await import.WriteAsync(i, NpgsqlTypes.NpgsqlDbType.Integer, Token);
                await import.WriteAsync(rows[i].Reading.DeviceId, NpgsqlTypes.NpgsqlDbType.Integer, Token);
                await import.WriteAsync(rows[i].Reading.Channel, NpgsqlTypes.NpgsqlDbType.Integer, Token);
                await import.WriteAsync(rows[i].Reading.Timestamp, NpgsqlTypes.NpgsqlDbType.TimestampTz, Token);
                await import.WriteAsync(rows[i].Id, NpgsqlTypes.NpgsqlDbType.Uuid, Token);
            }

            await import.CompleteAsync(Token);
        }

        var expected = new List<int>();
        await using (var select = new NpgsqlCommand(
            $"SELECT n FROM sort_check ORDER BY {(keys == KeyStrategy.Natural ? "device_id, channel, ts" : "id")}, n", connection))
        await using (var reader = await select.ExecuteReaderAsync(Token))
        {
            while (await reader.ReadAsync(Token))
            {
                expected.Add(reader.GetInt32(0));
            }
        }

        var sorted = PostgresArchiveCopy.SortByKey(rows, keys);
        sorted.Count.ShouldBe(rows.Count);
        var keyOf = (ArchiveRow r) => keys == KeyStrategy.Natural ? r.KeyText(keys) : r.Id.ToString();
        sorted.Select(keyOf).ShouldBe(expected.Select(n => keyOf(rows[n])));
        PostgresArchiveCopy.SortByKey(sorted, keys).ShouldBeSameAs(sorted, "rows already in order are kept as they are");
    }
}

using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary><c>Archiver:Schedule</c>: the server runs the archive job itself, while it keeps ingesting.</summary>
public sealed class ScheduledArchiveTests
{
    [Fact]
    public async Task The_server_moves_readings_older_than_the_cutoff_to_the_archive_on_its_schedule()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage,
            ["Archiver:Schedule:Every=00:00:01", "Archiver:Schedule:OlderThan=7.00:00:00", "Archiver:BatchRows=100"]);

        var now = DateTime.UtcNow;
        var batch = new ReadingBatch();
        for (int i = 0; i < 250; i++)
        {
            batch.Add(Reading.Pressure(deviceId: 1, channel: i % 8, now.AddDays(-10).AddSeconds(i), now, 10 + (i % 20)));
        }

        for (int i = 0; i < 40; i++)
        {
            batch.Add(Reading.Pressure(deviceId: 1, channel: i % 8, now.AddHours(-1).AddSeconds(i), now, 12));
        }

        await saito.Store.WriteAsync(batch, TestContext.Current.CancellationToken);

        // A batch is inserted into the archive, then deleted from the hot table: wait for both ends of the last one.
        var ct = TestContext.Current.CancellationToken;
        var deadline = DateTime.UtcNow.AddSeconds(60);
        long archived = 0, hot = 0;
        while (DateTime.UtcNow < deadline &&
               ((archived = await saito.Store.CountAsync(ReadingKind.Pressure, StorageTier.Archive, ct)) < 250 ||
                (hot = await saito.Store.CountAsync(ReadingKind.Pressure, StorageTier.Hot, ct)) > 40))
        {
            await Task.Delay(200, ct);
        }

        archived.ShouldBe(250, "every reading older than 7 days moved");
        hot.ShouldBe(40, "the recent ones stay hot, the old ones are gone from it");
        Directory.EnumerateFiles(Path.Combine(storage.ArchivePath, "exports"), "*.csv", SearchOption.AllDirectories).Count()
            .ShouldBe(3, "250 rows in batches of 100: three export files");
    }
}

using System.Net;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// <c>Storage:MinFreeDiskMegabytes</c> on a real, small filesystem: a 24 MB tmpfs mounted under SQLite's folders
/// (the test runs as root, as scripts/test.sh does; where mounting is not permitted the test is skipped and says why).
/// A file filling the volume is what a full disk really is to Saito, so nothing here stands in for the disk.
/// </summary>
public sealed class DiskSpaceTests
{
    [Fact]
    public async Task Below_the_free_space_watermark_saito_holds_readings_unacknowledged_and_stores_them_when_space_returns()
    {
        await using var storage = new SqliteTestStorage();
        await using var volume = await TmpfsVolume.MountAsync(storage.Directory, sizeMegabytes: 24);
        await using var saito = await SaitoHost.StartAsync(storage, ["Storage:MinFreeDiskMegabytes=8"]);
        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, TestContext.Current.CancellationToken);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 30_000;
        Task<MqttReasonCode> Publish(int i) => hub.PublishAsync("saito/hub-1/wrist-disk/biosensor",
            Encoding.UTF8.GetBytes($"{{\"ts\":{baseMs + i},\"hr\":{60 + i}}}"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        (await Publish(0)).ShouldBe(MqttReasonCode.Success);

        string filler = Path.Combine(storage.Directory, "filler");
        await FillUntilFreeAsync(filler, volume.FreeBytes, leaveMegabytes: 4);
        var unhealthy = await saito.WaitForHealthAsync((code, _) => code == HttpStatusCode.ServiceUnavailable);
        unhealthy.ShouldContain("Storage:MinFreeDiskMegabytes");

        var held = Publish(1);
        var writers = saito.Services.GetRequiredService<ReadingWriterPool>();
        await Eventually.TrueAsync(() => writers.QueuedMessages >= 1, "the reading reached the writers' queue");
        held.IsCompleted.ShouldBeFalse("nothing is acknowledged while it cannot be stored");
        (await saito.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, TestContext.Current.CancellationToken)).ShouldBe(1);

        File.Delete(filler);

        (await held.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken)).ShouldBe(MqttReasonCode.Success);
        (await saito.Store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, TestContext.Current.CancellationToken)).ShouldBe(2);
        await saito.WaitForHealthAsync((code, _) => code == HttpStatusCode.OK);
    }

    [Fact]
    public void The_watermark_is_256_megabytes_unless_set_and_0_turns_it_off()
    {
        new DiskSpaceOptions().MinFreeDiskMegabytes.ShouldBe(256);
        var validator = new DiskSpaceOptionsValidator();
        validator.Validate(null, new DiskSpaceOptions { MinFreeDiskMegabytes = 0 }).Succeeded.ShouldBeTrue();
        validator.Validate(null, new DiskSpaceOptions { MinFreeDiskMegabytes = -1 }).FailureMessage!.ShouldContain("Storage:MinFreeDiskMegabytes");
        validator.Validate(null, new DiskSpaceOptions { FreeSpacePaths = [""] }).FailureMessage!.ShouldContain("Storage:FreeSpacePaths");
    }

    [Fact]
    public void Postgres_and_sql_server_have_no_local_folder_to_watch_unless_one_is_named()
    {
        var postgres = new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = "Host=db" };

        Guard(postgres, new DiskSpaceOptions()).IsWatching.ShouldBeFalse();
        Guard(postgres, new DiskSpaceOptions { FreeSpacePaths = [Path.GetTempPath()] }).IsWatching.ShouldBeTrue();
        Guard(new StorageOptions(), new DiskSpaceOptions()).IsWatching.ShouldBeTrue("SQLite's hot and archive folders are watched");
        Guard(new StorageOptions(), new DiskSpaceOptions { MinFreeDiskMegabytes = 0 }).IsWatching.ShouldBeFalse();
    }

    private static DiskSpaceGuard Guard(StorageOptions storage, DiskSpaceOptions options) =>
        new(Microsoft.Extensions.Options.Options.Create(options), Microsoft.Extensions.Options.Options.Create(storage), TimeProvider.System,
            Microsoft.Extensions.Logging.Abstractions.NullLogger<DiskSpaceGuard>.Instance);

    private static async Task FillUntilFreeAsync(string path, Func<long> freeBytes, int leaveMegabytes)
    {
        var chunk = new byte[1024 * 1024];
        Random.Shared.NextBytes(chunk);
        await using var file = new FileStream(path, FileMode.Create, FileAccess.Write);
        while (freeBytes() - chunk.Length > leaveMegabytes * 1024L * 1024L)
        {
            await file.WriteAsync(chunk, TestContext.Current.CancellationToken);
            await file.FlushAsync(TestContext.Current.CancellationToken);
        }
    }
}

using System.Diagnostics;
using System.Text;
using Saito.Mqtt.Packets;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// When a batch stops gathering: at Storage:BatchSize readings, at Storage:BatchAgeMilliseconds, or, with another writer
/// free, once it holds its share (BatchSize / writers), so that writers commit side by side under load. A lone writer
/// still waits for the age to gather more.
/// </summary>
public sealed class WriterBatchingTests
{
    [Theory]
    [InlineData("sqlite")]
    [InlineData("postgres")]
    public async Task With_another_writer_free_a_batch_that_holds_its_share_is_committed_without_waiting_for_its_age(string provider)
    {
        var ct = TestContext.Current.CancellationToken;
        await using TestStorage storage = provider == "sqlite" ? new SqliteTestStorage() : await PostgresTestStorage.CreateAsync();
        // Two writers and batches of up to 10 readings: a share is 5. A batch age of a minute: before, a batch of 5 waited
        // all of it for 5 more.
        await using var saito = await SaitoHost.StartAsync(storage, ["Storage:Writers=2", "Storage:BatchSize=10", "Storage:BatchAgeMilliseconds=60000"]);
        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, ct);

        var results = await Task.WhenAll(Enumerable.Range(0, 5).Select(i =>
            hub.PublishAsync("saito/hub-1/wrist-share/biosensor", Reading(i), MqttQoS.AtLeastOnce, cancellationToken: ct))).WaitAsync(TimeSpan.FromSeconds(30), ct);

        results.ShouldAllBe(r => r == MqttReasonCode.Success);
        (await saito.WaitForCountAsync(ReadingKind.Biosensor, 5)).ShouldBe(5);
    }

    [Fact]
    public async Task With_one_writer_a_batch_still_waits_for_its_age_to_gather_more()
    {
        var ct = TestContext.Current.CancellationToken;
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, ["Storage:Writers=1", "Storage:BatchAgeMilliseconds=1500"]);
        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, ct);

        var started = Stopwatch.StartNew();
        var result = await hub.PublishAsync("saito/hub-1/wrist-waits/biosensor", Reading(0), MqttQoS.AtLeastOnce, cancellationToken: ct)
            .WaitAsync(TimeSpan.FromSeconds(30), ct);

        result.ShouldBe(MqttReasonCode.Success);
        // Acknowledged after the commit, which came when the batch was 1.5 s old (a lower bound: a busy machine only adds).
        started.Elapsed.ShouldBeGreaterThan(TimeSpan.FromMilliseconds(1400));
    }

    private static byte[] Reading(int i) =>
        Encoding.UTF8.GetBytes(FormattableString.Invariant($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 10_000 + i},\"hr\":70}}"));
}

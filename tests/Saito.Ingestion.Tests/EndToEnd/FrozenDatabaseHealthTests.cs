using System.Diagnostics;
using System.Net;
using Saito.Ingestion.Tests.Infrastructure;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// /health while PostgreSQL hangs (issue 32, item 13): every process of a private cluster stopped with SIGSTOP under a
/// publishing load. A frozen database neither answers nor fails; /health must still answer within 1 s each time, from
/// what the writers know, say unhealthy once writes have stalled past Storage:WriteStallSeconds, and recover after SIGCONT.
/// </summary>
public sealed class FrozenDatabaseHealthTests
{
    [Fact]
    public async Task Health_answers_within_1_s_while_every_postgres_process_is_frozen_and_says_the_writes_stalled()
    {
        var token = TestContext.Current.CancellationToken;
        await using var cluster = await PrivatePostgresCluster.StartAsync();
        cluster.Port.ShouldNotBe(56500, "never the shared cluster");
        await using var saito = await SaitoHost.StartAsync(cluster, ["Storage:WriteStallSeconds=3"]);
        await using var hub = await SteadyPublisher.StartAsync(saito.Port, "wrist-frozen", TimeSpan.FromMilliseconds(20));
        await Eventually.TrueAsync(() => hub.Acknowledged >= 20, "the first readings are acknowledged");
        await saito.WaitForHealthAsync((code, _) => code == HttpStatusCode.OK);

        await cluster.FreezeAsync();
        var frozen = Stopwatch.StartNew();
        var slowest = TimeSpan.Zero;
        string? stalled = null;
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(1) };
        while (frozen.Elapsed < TimeSpan.FromSeconds(12))
        {
            var asked = Stopwatch.StartNew();
            using var response = await http.GetAsync(new Uri($"http://127.0.0.1:{saito.HttpPort}/health"), token); // throws past 1 s
            string body = await response.Content.ReadAsStringAsync(token);
            slowest = asked.Elapsed > slowest ? asked.Elapsed : slowest;
            if (response.StatusCode == HttpStatusCode.ServiceUnavailable && stalled is null)
            {
                stalled = $"{frozen.Elapsed.TotalSeconds:F1} s after the freeze: {body}";
            }

            await Task.Delay(200, token);
        }

        TestContext.Current.TestOutputHelper?.WriteLine($"slowest /health {slowest.TotalMilliseconds:F0} ms; unhealthy {stalled}");
        slowest.ShouldBeLessThan(TimeSpan.FromSeconds(1));
        stalled.ShouldNotBeNull("/health says the database stalled");
        stalled.ShouldContain("has not");
        hub.Failures.ShouldBeEmpty();

        await cluster.ThawAsync();
        await hub.StopAsync();
        await Task.WhenAll(hub.Publishes).WaitAsync(TimeSpan.FromSeconds(60), token);
        hub.Failures.ShouldBeEmpty("what was held is stored and acknowledged once PostgreSQL runs again");
        await saito.WaitForHealthAsync((code, _) => code == HttpStatusCode.OK, TimeSpan.FromSeconds(30));
    }

    [Fact]
    public void A_write_counts_as_stalled_after_5_s_unless_set_between_1_and_3600()
    {
        new Saito.Storage.StorageOptions().WriteStallSeconds.ShouldBe(5);
        var validator = new Saito.Storage.StorageOptionsValidator();
        validator.Validate(null, new Saito.Storage.StorageOptions { WriteStallSeconds = 1 }).Succeeded.ShouldBeTrue();
        validator.Validate(null, new Saito.Storage.StorageOptions { WriteStallSeconds = 0 }).FailureMessage!.ShouldContain("Storage:WriteStallSeconds");
        validator.Validate(null, new Saito.Storage.StorageOptions { WriteStallSeconds = 3601 }).FailureMessage!.ShouldContain("Storage:WriteStallSeconds");
    }
}

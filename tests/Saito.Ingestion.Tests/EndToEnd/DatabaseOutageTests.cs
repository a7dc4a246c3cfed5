using System.Net;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// PostgreSQL goes away mid-stream: acknowledgements are held, /health says so, and Saito catches up when it returns;
/// or Saito is stopped meanwhile, within its shutdown timeout, and what it held is sent again and stored once.
/// </summary>
public sealed class DatabaseOutageTests
{
    [Fact]
    public async Task A_database_that_goes_away_holds_acknowledgements_and_saito_catches_up_when_it_returns()
    {
        await using var database = await PostgresTestStorage.CreateAsync();
        var (proxy, throughProxy) = await TcpProxy.ForPostgresAsync(database.ConnectionString, TestContext.Current.CancellationToken);
        await using var _ = proxy;
        await using var saito = await SaitoHost.StartAsync(database, [$"Storage:ConnectionString={throughProxy}"]);

        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, TestContext.Current.CancellationToken);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 30_000;
        Task<MqttReasonCode> Publish(int i) => hub.PublishAsync("saito/hub-1/wrist-outage/biosensor",
            Encoding.UTF8.GetBytes($"{{\"ts\":{baseMs + i},\"hr\":{60 + i}}}"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        (await Publish(0)).ShouldBe(MqttReasonCode.Success);

        proxy.Cut();
        var held = Enumerable.Range(1, 5).Select(Publish).ToList();
        var deadline = DateTime.UtcNow.AddSeconds(30);
        HttpStatusCode status;
        while ((status = (await saito.GetHealthAsync()).StatusCode) == HttpStatusCode.OK && DateTime.UtcNow < deadline)
        {
            await Task.Delay(200, TestContext.Current.CancellationToken);
        }

        status.ShouldBe(HttpStatusCode.ServiceUnavailable, "the database is gone, and /health says so");
        await Task.Delay(1000, TestContext.Current.CancellationToken);
        held.ShouldAllBe(p => !p.IsCompleted, "nothing is acknowledged while it cannot be committed");

        proxy.Start();
        var results = await Task.WhenAll(held).WaitAsync(TimeSpan.FromSeconds(60), TestContext.Current.CancellationToken);
        results.ShouldAllBe(r => r == MqttReasonCode.Success);
        int id = (await saito.Store.LoadDevicesAsync(TestContext.Current.CancellationToken))["wrist-outage"];
        (await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, TestContext.Current.CancellationToken)).Count.ShouldBe(6);
        // Healthy again once writes go through: waited for (health follows the commit a moment later), not read once.
        await saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.OK);
    }

    [Fact]
    public async Task Stopping_while_the_database_is_unreachable_ends_within_the_shutdown_timeout_and_acknowledges_nothing_it_held()
    {
        var token = TestContext.Current.CancellationToken;
        await using var database = await PostgresTestStorage.CreateAsync();
        var (proxy, throughProxy) = await TcpProxy.ForPostgresAsync(database.ConnectionString, token);
        await using var _ = proxy;
        var saito = await SaitoHost.StartAsync(database, [$"Storage:ConnectionString={throughProxy}"],
            builder => builder.Services.Configure<Microsoft.Extensions.Hosting.HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(3)));
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 30_000;
        byte[] Reading(int i) => Encoding.UTF8.GetBytes($"{{\"ts\":{baseMs + i},\"hr\":{60 + i}}}");
        const string Topic = "saito/hub-1/wrist-stop/biosensor";

        List<Task<MqttReasonCode>> held;
        await using (var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, token))
        {
            (await hub.PublishAsync(Topic, Reading(0), MqttQoS.AtLeastOnce, token)).ShouldBe(MqttReasonCode.Success);
            proxy.Cut();
            held = [.. Enumerable.Range(1, 5).Select(i => hub.PublishAsync(Topic, Reading(i), MqttQoS.AtLeastOnce, token))];
            await saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.ServiceUnavailable, TimeSpan.FromSeconds(30));
            held.ShouldAllBe(p => !p.IsCompleted, "nothing is acknowledged while it cannot be committed");

            // The broker stops first and waits for the held publishes at most until the shutdown timeout; the writers
            // then give them up. Stopping must not wait on the database.
            var clock = System.Diagnostics.Stopwatch.StartNew();
            await saito.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(30), token);
            clock.Elapsed.ShouldBeLessThan(TimeSpan.FromSeconds(20), "3 s of shutdown timeout, plus the writers' current attempt");
            foreach (var publish in held)
            {
                var ended = await Task.WhenAny(publish, Task.Delay(TimeSpan.FromSeconds(30), token));
                ended.ShouldBe(publish, "the connection ended with the server");
                if (publish.IsCompletedSuccessfully)
                {
                    (await publish).ShouldNotBe(MqttReasonCode.Success, "a message Saito did not commit is not acknowledged");
                }
            }
        }

        // The hub sends them again to the next Saito, which stores each once.
        proxy.Start();
        await using var next = await SaitoHost.StartAsync(database);
        await using (var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = next.Port }, token))
        {
            for (int i = 1; i <= 5; i++)
            {
                (await hub.PublishAsync(Topic, Reading(i), MqttQoS.AtLeastOnce, token)).ShouldBe(MqttReasonCode.Success);
            }
        }

        int id = (await next.Store.LoadDevicesAsync(token))["wrist-stop"];
        (await next.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, token)).Count.ShouldBe(6);
    }
}

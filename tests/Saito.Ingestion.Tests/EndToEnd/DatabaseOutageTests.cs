using System.Net;
using System.Text;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>PostgreSQL goes away mid-stream: acknowledgements are held, /health says so, and Saito catches up when it returns.</summary>
public sealed class DatabaseOutageTests
{
    [Fact]
    public async Task A_database_that_goes_away_holds_acknowledgements_and_saito_catches_up_when_it_returns()
    {
        await using var database = await PostgresTestStorage.CreateAsync();
        var server = new Npgsql.NpgsqlConnectionStringBuilder(database.ConnectionString);
        var address = (await Dns.GetHostAddressesAsync(server.Host!, TestContext.Current.CancellationToken)).First(a => a.AddressFamily == System.Net.Sockets.AddressFamily.InterNetwork);
        await using var proxy = new TcpProxy(new IPEndPoint(address, server.Port));
        proxy.Start();
        var throughProxy = new Npgsql.NpgsqlConnectionStringBuilder(database.ConnectionString) { Host = "127.0.0.1", Port = proxy.Port, Timeout = 3, CommandTimeout = 5 };
        await using var saito = await SaitoServer.StartAsync(database, [$"Storage:ConnectionString={throughProxy.ConnectionString}"]);

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
        (await saito.GetHealthAsync()).StatusCode.ShouldBe(HttpStatusCode.OK, "healthy again once writes go through");
    }
}

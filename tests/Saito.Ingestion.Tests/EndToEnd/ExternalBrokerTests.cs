using System.Text;
using Saito.Mqtt.Packets;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// <c>Mqtt:Mode=external</c>: Saito as a client of a real Mosquitto, with a persistent session and a shared
/// subscription, acknowledging only what it has committed.
/// </summary>
public sealed class ExternalBrokerTests
{
    public static readonly TheoryData<string> Versions = ["3.1.1", "5.0"];

    internal static readonly string[] Settings = ["Mqtt:Mode=external", "Mqtt:External:Host=127.0.0.1"];

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Readings_published_to_mosquitto_are_stored_by_saito_behind_it(string protocolVersion)
    {
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage,
            [.. Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-a", $"Mqtt:External:ProtocolVersion={protocolVersion}"]);
        await WaitForSubscriptionAsync(saito);

        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        var messages = Enumerable.Range(0, 5).Select(i => OutgoingMessage.Text($"saito/hub-1/{device}/biosensor",
            $"{{\"ts\":\"{EmbeddedBrokerTests.Iso(DateTime.UtcNow.AddSeconds(-10 + i))}\",\"hr\":{80 + i}}}")).ToList();
        await ExternalClients.Mosquitto311.PublishAsync(mosquitto.Endpoint, messages, new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);

        (await saito.WaitForCountAsync(ReadingKind.Biosensor, 5)).ShouldBe(5);
    }

    [Fact]
    public async Task Two_saito_instances_split_one_stream_through_a_shared_subscription_and_store_it_once()
    {
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var storage = await PostgresTestStorage.CreateAsync();
        await using var first = await SaitoHost.StartAsync(storage, [.. Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-1"]);
        await using var second = await SaitoHost.StartAsync(storage, [.. Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-2"]);
        await WaitForSubscriptionAsync(first);
        await WaitForSubscriptionAsync(second);

        await PublishReadingsAsync(mosquitto.Port, "mat-shared", 400, _ => Task.CompletedTask);

        (await first.WaitForCountAsync(ReadingKind.Pressure, 400)).ShouldBe(400);
        first.Metrics.ReadingsStoredTotal.ShouldBeGreaterThan(0, "the first instance took part");
        second.Metrics.ReadingsStoredTotal.ShouldBeGreaterThan(0, "the second instance took part");
        (first.Metrics.ReadingsStoredTotal + second.Metrics.ReadingsStoredTotal).ShouldBe(400);
    }

    [Fact]
    public async Task A_broker_restart_mid_stream_loses_nothing()
    {
        // Mosquitto keeps sessions across a restart only with persistence on (saved when it stops), and keeps plain
        // subscriptions but not shared ones (Mosquitto 2.0), so this Saito subscribes without a shared group.
        await using var mosquitto = await MosquittoInstance.StartAsync($"persistence true\npersistence_location {PersistenceDirectory()}\n");
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage,
            [.. Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-restart", "Mqtt:External:SharedGroup="]);
        await WaitForSubscriptionAsync(saito);

        const int total = 600;
        await PublishReadingsAsync(mosquitto.Port, "wrist-restart", total, async sent =>
        {
            if (sent == total / 2)
            {
                await mosquitto.StopGracefullyAsync();
                await mosquitto.StartAsync();
            }
        });

        (await saito.WaitForCountAsync(ReadingKind.Pressure, total, TimeSpan.FromSeconds(60))).ShouldBe(total);
    }

    [Fact]
    public async Task After_a_broker_restart_saito_subscribes_again_to_its_shared_subscription()
    {
        await using var mosquitto = await MosquittoInstance.StartAsync($"persistence true\npersistence_location {PersistenceDirectory()}\n");
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, [.. Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-shared"]);
        await WaitForSubscriptionAsync(saito);
        await PublishReadingsAsync(mosquitto.Port, "mat-before", 10, _ => Task.CompletedTask);

        await mosquitto.StopGracefullyAsync();
        await mosquitto.StartAsync();

        // Mosquitto restored Saito's session without its shared subscription, and says so to a 5.0 publisher
        // (0x10, no matching subscribers) until Saito has subscribed again.
        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = mosquitto.Port }, TestContext.Current.CancellationToken);
        var payload = Encoding.UTF8.GetBytes($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"ch\":1,\"kpa\":9}}");
        var deadline = DateTime.UtcNow.AddSeconds(30);
        MqttReasonCode code;
        while ((code = await hub.PublishAsync("saito/hub-1/mat-after/pressure", payload, MqttQoS.AtLeastOnce,
                   cancellationToken: TestContext.Current.CancellationToken)) == MqttReasonCode.NoMatchingSubscribers && DateTime.UtcNow < deadline)
        {
            await Task.Delay(200, TestContext.Current.CancellationToken);
        }

        code.ShouldBe(MqttReasonCode.Success, "Saito subscribed again after the restart");
        (await saito.WaitForCountAsync(ReadingKind.Pressure, 11)).ShouldBe(11);
    }

    private static string PersistenceDirectory()
    {
        // Mosquitto started as root drops to its own user: the folder must be writable by it.
        var directory = Directory.CreateTempSubdirectory("saito-mosquitto-db-");
        if (!OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(directory.FullName, (UnixFileMode)0x1FF);
        }

        return directory.FullName + "/";
    }

    /// <summary>
    /// Publishes <paramref name="count"/> pressure readings at QoS 1 with a persistent session, one at a time,
    /// calling <paramref name="afterEach"/> after each acknowledgement; a publish that fails because the broker went
    /// away is sent again once the client has reconnected.
    /// </summary>
    private static async Task PublishReadingsAsync(int port, string device, int count, Func<int, Task> afterEach)
    {
        await using var client = await TestHub.ConnectAsync(
            new TestHubOptions { Port = port, CleanStart = false, SessionExpiry = TimeSpan.FromMinutes(5), Reconnect = true },
            TestContext.Current.CancellationToken);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 60_000;
        for (int i = 0; i < count; i++)
        {
            var payload = Encoding.UTF8.GetBytes($"{{\"ts\":{baseMs + i},\"ch\":{i % 16},\"kpa\":{5 + (i % 50)}}}");
            for (int attempt = 1; ; attempt++)
            {
                try
                {
                    var result = await client.PublishAsync($"saito/hub-1/{device}/pressure", payload, MqttQoS.AtLeastOnce,
                        cancellationToken: TestContext.Current.CancellationToken);
                    result.ShouldBe(MqttReasonCode.Success);
                    break;
                }
                catch (TestHubDisconnectedException) when (attempt < 50)
                {
                    await Task.Delay(200, TestContext.Current.CancellationToken);
                }
            }

            await afterEach(i + 1);
        }
    }

    internal static async Task WaitForSubscriptionAsync(SaitoHost saito)
    {
        var consumer = (Hosting.ExternalBrokerConsumer)saito.Services.GetService(typeof(Hosting.ExternalBrokerConsumer))!;
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (!consumer.IsSubscribed && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        consumer.IsSubscribed.ShouldBeTrue("Saito subscribed to the external broker");
    }
}

using System.Globalization;
using System.Net;
using System.Text;
using Microsoft.Data.Sqlite;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// Saito as the README runs it (embedded broker, SQLite on its default tiers), driven by MQTT clients we did not
/// write, and checked in the database.
/// </summary>
public sealed class EmbeddedBrokerTests : IAsyncLifetime
{
    private readonly SqliteTestStorage _storage = new();
    private SaitoHost? _saito;

    private SaitoHost Saito => _saito ?? throw new InvalidOperationException("not started");

    // A short command timeout (also SQLite's busy timeout) so the locked-database test sees writes fail within seconds.
    public async ValueTask InitializeAsync() => _saito = await SaitoHost.StartAsync(_storage, ["Storage:CommandTimeoutSeconds=2"]);

    public async ValueTask DisposeAsync()
    {
        if (_saito is not null)
        {
            await _saito.DisposeAsync();
        }

        await _storage.DisposeAsync();
    }

    public static TheoryData<string, int> ClientsAndQoS => new()
    {
        { "mosquitto 3.1.1", 1 },
        { "mosquitto 5.0", 0 },
        { "mosquitto 5.0", 2 },
        { "paho 3.1.1", 0 },
        { "paho 3.1.1", 1 },
        { "paho 5.0", 1 },
        { "paho 5.0", 2 },
        { "MQTT.js 3.1.1", 2 },
        { "MQTT.js 5.0", 0 },
        { "MQTT.js 5.0", 1 },
        { "MQTT.js 5.0 over WebSocket", 1 },
    };

    [Theory]
    [MemberData(nameof(ClientsAndQoS))]
    public async Task Readings_published_by_an_independent_client_are_stored(string clientName, int qos)
    {
        var client = ExternalClients.Named(clientName);
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        var start = DateTime.UtcNow.AddSeconds(-10);
        var messages = Enumerable.Range(0, 3)
            .Select(i => OutgoingMessage.Text($"saito/hub-1/{device}/biosensor",
                $"{{\"ts\":\"{Iso(start.AddMilliseconds(i * 250))}\",\"hr\":{70 + i},\"temp\":33.{i}}}"))
            .ToList();

        await client.PublishAsync(Saito.Endpoint, messages, new ClientOptions { QoS = qos }, TestContext.Current.CancellationToken);

        var stored = await WaitForDeviceReadingsAsync(ReadingKind.Biosensor, device, 3);
        stored.Select(r => r.HeartRate).ShouldBe([70d, 71d, 72d]);
        stored.Select(r => r.SkinTemperature).ShouldBe([33.0, 33.1, 33.2]);
        stored[1].Timestamp.ShouldBe(start.AddMilliseconds(250).AddTicks(-(start.Ticks % TimeSpan.TicksPerMillisecond)));
    }

    [Fact]
    public async Task A_SenML_pack_from_mosquitto_pub_is_stored_as_location_readings()
    {
        string device = "garment-" + Guid.NewGuid().ToString("N")[..8];
        double bt = Math.Round((DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 5000) / 1000.0, 3);
        string senml = string.Create(CultureInfo.InvariantCulture,
            $"[{{\"bn\":\"{device}/\",\"bt\":{bt},\"n\":\"1/x\",\"u\":\"m\",\"v\":1.5}},{{\"n\":\"1/y\",\"u\":\"m\",\"v\":2.25}},{{\"n\":\"1/z\",\"u\":\"m\",\"v\":1.1}}]");

        await ExternalClients.Mosquitto5.PublishAsync(Saito.Endpoint, OutgoingMessage.Text($"saito/hub-1/{device}/location", senml),
            new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);

        var stored = await WaitForDeviceReadingsAsync(ReadingKind.Location, device, 1);
        stored[0].Channel.ShouldBe(1);
        (stored[0].X, stored[0].Y, stored[0].Z).ShouldBe((1.5, 2.25, 1.1));
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.ExactlyOnce)]
    public async Task An_acknowledged_reading_is_already_in_the_database(MqttProtocolVersion version, MqttQoS qos)
    {
        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = Saito.Port, ProtocolVersion = version }, TestContext.Current.CancellationToken);
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        var start = DateTime.UtcNow.AddMinutes(-1);
        for (int i = 0; i < 20; i++)
        {
            var result = await client.PublishAsync($"saito/hub-1/{device}/pressure",
                Encoding.UTF8.GetBytes($"{{\"ts\":{new DateTimeOffset(start).ToUnixTimeMilliseconds() + i},\"ch\":{i % 4},\"kpa\":{10 + i}}}"),
                qos, cancellationToken: TestContext.Current.CancellationToken);
            result.ShouldBe(MqttReasonCode.Success);

            // No waiting: the acknowledgement left only after the commit.
            int id = (await Saito.Store.LoadDevicesAsync(TestContext.Current.CancellationToken))[device];
            var stored = await Saito.Store.ReadAsync(ReadingKind.Pressure, StorageTier.Hot, id, TestContext.Current.CancellationToken);
            stored.Count.ShouldBe(i + 1, $"publish {i} was acknowledged before its reading was committed");
        }
    }

    [Fact]
    public async Task Bad_readings_are_dead_lettered_and_the_good_ones_beside_them_stored()
    {
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        string ts = Iso(DateTime.UtcNow.AddSeconds(-3));
        string payload = $"[{{\"ts\":\"{ts}\",\"hr\":71}},{{\"ts\":\"{ts}\",\"ch\":1,\"hr\":900}},{{\"ts\":\"{ts}\",\"ch\":2,\"hr\":\"fast\"}},{{\"ts\":\"{ts}\",\"ch\":3,\"hr\":72}}]";

        await ExternalClients.Paho5.PublishAsync(Saito.Endpoint,
            [OutgoingMessage.Text($"saito/hub-1/{device}/biosensor", payload), OutgoingMessage.Text($"saito/hub-1/{device}/biosensor", "{not json")],
            new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);

        var stored = await WaitForDeviceReadingsAsync(ReadingKind.Biosensor, device, 2);
        stored.Select(r => (r.Channel, r.HeartRate)).ShouldBe([(0, (double?)71), (3, 72)], ignoreOrder: true);
        var letters = (await Saito.Store.ReadDeadLettersAsync(50, TestContext.Current.CancellationToken))
            .Where(l => l.Topic.Contains(device, StringComparison.Ordinal)).ToList();
        letters.Select(l => l.Reason).ShouldBe(["out-of-range", "wrong-type", "malformed-json"], ignoreOrder: true);
        letters.Single(l => l.Reason == "malformed-json").Payload.ShouldBe("{not json");
    }

    [Fact]
    public async Task A_reading_sent_twice_is_stored_once()
    {
        string device = "mat-" + Guid.NewGuid().ToString("N")[..8];
        var message = OutgoingMessage.Text($"saito/hub-1/{device}/pressure", $"{{\"ts\":\"{Iso(DateTime.UtcNow.AddSeconds(-1))}\",\"ch\":7,\"kpa\":12.5}}");

        await ExternalClients.Mosquitto311.PublishAsync(Saito.Endpoint, [message, message], new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);
        await ExternalClients.Mosquitto5.PublishAsync(Saito.Endpoint, message, new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);

        (await WaitForDeviceReadingsAsync(ReadingKind.Pressure, device, 1)).Count.ShouldBe(1);
        Saito.Metrics.DuplicatesTotal.ShouldBe(2);
    }

    [Fact]
    public async Task A_new_device_is_registered_by_its_first_reading_and_its_hello_describes_it()
    {
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        await ExternalClients.Mosquitto5.PublishAsync(Saito.Endpoint,
            OutgoingMessage.Text($"saito/hub-9/{device}/biosensor", $"{{\"ts\":\"{Iso(DateTime.UtcNow)}\",\"hr\":64}}"),
            new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);
        (await WaitForDeviceReadingsAsync(ReadingKind.Biosensor, device, 1)).Count.ShouldBe(1);

        await ExternalClients.Mosquitto5.PublishAsync(Saito.Endpoint,
            OutgoingMessage.Text($"saito/hub-9/{device}/hello", "{\"kind\":\"biosensor\",\"channels\":1,\"firmware\":\"2.4.1\"}"),
            new ClientOptions { QoS = 1 }, TestContext.Current.CancellationToken);

        await using var connection = new SqliteConnection($"Data Source={_storage.HotFile};Mode=ReadOnly");
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        await using var query = connection.CreateCommand();
        query.CommandText = "SELECT kind, firmware, hub FROM device WHERE serial = $serial";
        query.Parameters.AddWithValue("$serial", device);
        await using var row = await query.ExecuteReaderAsync(TestContext.Current.CancellationToken);
        (await row.ReadAsync(TestContext.Current.CancellationToken)).ShouldBeTrue("the device was registered");
        (row.GetString(0), row.GetString(1), row.GetString(2)).ShouldBe(("biosensor", "2.4.1", "hub-9"));
    }

    [Fact]
    public async Task A_locked_database_holds_the_acknowledgement_and_turns_health_unhealthy_until_it_is_released()
    {
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = Saito.Port }, TestContext.Current.CancellationToken);
        // Register the device first, so only the reading's write meets the lock.
        await client.PublishAsync($"saito/hub-1/{device}/biosensor", Encoding.UTF8.GetBytes($"{{\"ts\":\"{Iso(DateTime.UtcNow.AddSeconds(-5))}\",\"hr\":60}}"),
            MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        // Another program takes SQLite's write lock and keeps it: Saito's writes fail with "database is locked".
        var blocker = new SqliteConnection($"Data Source={_storage.HotFile}");
        await blocker.OpenAsync(TestContext.Current.CancellationToken);
        await using (var begin = blocker.CreateCommand())
        {
            begin.CommandText = "BEGIN EXCLUSIVE";
            await begin.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        var publish = client.PublishAsync($"saito/hub-1/{device}/biosensor", Encoding.UTF8.GetBytes($"{{\"ts\":\"{Iso(DateTime.UtcNow)}\",\"hr\":61}}"),
            MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        var deadline = DateTime.UtcNow.AddSeconds(30);
        HttpStatusCode status;
        while ((status = (await Saito.GetHealthAsync()).StatusCode) == HttpStatusCode.OK && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100, TestContext.Current.CancellationToken);
        }

        status.ShouldBe(HttpStatusCode.ServiceUnavailable, "writes are failing, so /health says so");
        publish.IsCompleted.ShouldBeFalse("the acknowledgement waits for the commit");

        await using (var rollback = blocker.CreateCommand())
        {
            rollback.CommandText = "ROLLBACK";
            await rollback.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        await blocker.DisposeAsync();
        (await publish.WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken)).ShouldBe(MqttReasonCode.Success);
        (await WaitForDeviceReadingsAsync(ReadingKind.Biosensor, device, 2)).Count.ShouldBe(2);
        // Healthy again once writes go through: waited for (health follows the commit a moment later), not read once.
        await Saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.OK);
    }

    private async Task<IReadOnlyList<Reading>> WaitForDeviceReadingsAsync(ReadingKind kind, string serial, int expected)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        IReadOnlyList<Reading> readings = [];
        while (DateTime.UtcNow < deadline)
        {
            var devices = await Saito.Store.LoadDevicesAsync(CancellationToken.None);
            if (devices.TryGetValue(serial, out int id))
            {
                readings = await Saito.Store.ReadAsync(kind, StorageTier.Hot, id, CancellationToken.None);
                if (readings.Count >= expected)
                {
                    return readings;
                }
            }

            await Task.Delay(50);
        }

        return readings;
    }

    internal static string Iso(DateTime utc) => utc.ToString("yyyy-MM-ddTHH:mm:ss.fffZ", CultureInfo.InvariantCulture);
}

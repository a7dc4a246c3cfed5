using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Hosting;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Mqtt.Tests.Server;

/// <summary>
/// At start the broker lets the registry's start-up work finish before it answers its first clients
/// (<see cref="IMqttStartGate"/>, <c>Mqtt:StartupWaitSeconds</c>). Here a gate the test holds stands for that work.
/// </summary>
public sealed class StartGateTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static string Id(string prefix) => prefix + "-" + Guid.NewGuid().ToString("N")[..8];

    [Fact]
    public async Task A_client_that_connects_during_start_up_work_is_answered_once_it_is_done_and_its_reading_stored()
    {
        var gate = new HeldGate();
        await using var saito = await SaitoHost.StartAsync(
            ["Mqtt:StartupWaitSeconds=600"], builder => builder.Services.AddSingleton<IMqttStartGate>(gate), waitUntilServed: false);
        // The registry's own gate opens by itself; the test's stays closed until it says.
        await using var early = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await early.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = Id("early"), CleanStart = true });
        string device = "wrist-" + Guid.NewGuid().ToString("N")[..8];
        var publish = Saito.Testing.ExternalClients.Mosquitto311.PublishAsync(saito.Endpoint,
            [OutgoingMessage.Text($"saito/hub-1/{device}/biosensor", $"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"hr\":64}}")],
            new ClientOptions { QoS = 1 }, Token);

        await early.ExpectNothingAsync(TimeSpan.FromMilliseconds(500));
        saito.Broker.Served.IsCompleted.ShouldBeFalse("the test's gate is closed");
        publish.IsCompleted.ShouldBeFalse("mosquitto_pub waits for its CONNACK while the gate is closed");
        await Eventually.TrueAsync(() => saito.Broker.PendingConnections == 2, "both connections wait, counted as not yet connected");

        gate.Open();

        (await early.ExpectAsync<ConnAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe((byte)0);
        await publish.WaitAsync(TimeSpan.FromSeconds(60), Token);
        await saito.Broker.Served.WaitAsync(TimeSpan.FromSeconds(10), Token);
        (await StoredReadings.BiosensorCountAsync(saito.HotDatabase, device, Token)).ShouldBe(1, "mosquitto_pub's QoS 1 reading was acknowledged, so it is stored");
    }

    [Fact]
    public async Task Start_up_work_that_never_ends_holds_clients_no_longer_than_the_startup_wait()
    {
        var never = new HeldGate();
        // Started before the broker's own wait: it cannot have held the client for longer than this clock runs. (Asking
        // whether the broker is still unserved right after start is a race on a busy machine: starting may take 3 s.)
        var clock = System.Diagnostics.Stopwatch.StartNew();
        await using var saito = await SaitoHost.StartAsync(
            ["Mqtt:StartupWaitSeconds=3"], builder => builder.Services.AddSingleton<IMqttStartGate>(never), waitUntilServed: false);
        await using var client = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await client.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = Id("waits"), CleanStart = true });

        // Answered once the wait is over, though the gate never opened: not before the 3 s, and not much later.
        (await client.ExpectAsync<ConnAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe((byte)0);
        clock.Elapsed.ShouldBeGreaterThanOrEqualTo(TimeSpan.FromSeconds(3), "the closed gate held the client for the startup wait");
        saito.Broker.Served.IsCompletedSuccessfully.ShouldBeTrue();
    }

    [Fact]
    public async Task Connections_held_during_start_up_work_count_against_the_pending_limit()
    {
        var gate = new HeldGate();
        await using var saito = await SaitoHost.StartAsync(
            ["Mqtt:StartupWaitSeconds=600", "Mqtt:MaxPendingConnections=2"], builder => builder.Services.AddSingleton<IMqttStartGate>(gate), waitUntilServed: false);
        await using var first = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await using var second = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        foreach (var held in new[] { first, second })
        {
            await held.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = Id("held"), CleanStart = true });
        }

        // Their CONNECTs are not read while the gate is closed: both still count as connections without CONNECT.
        await Eventually.TrueAsync(() => saito.Broker.PendingConnections == 2, "two connections held by the closed gate");
        await first.ExpectNothingAsync(TimeSpan.FromMilliseconds(300));

        // A third takes the place of the oldest (issue 32: the newest is never the one refused).
        await using var third = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        await first.ExpectClosedAsync();
        await third.SendAsync(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V500, ClientId = Id("held"), CleanStart = true });
        saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxPendingConnections)).ShouldBe(1);
        saito.Broker.PendingConnections.ShouldBe(2);
        gate.Open();
        (await second.ExpectAsync<ConnAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe((byte)0);
        (await third.ExpectAsync<ConnAckPacket>(TimeSpan.FromSeconds(30))).ReasonCode.ShouldBe((byte)0);
    }

    private sealed class HeldGate : IMqttStartGate
    {
        private readonly TaskCompletionSource _open = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public string Name => "the test's held work";

        public Task WaitAsync(CancellationToken cancellationToken) => _open.Task.WaitAsync(cancellationToken);

        public void Open() => _open.TrySetResult();
    }
}

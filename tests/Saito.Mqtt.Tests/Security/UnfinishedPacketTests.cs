using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Codec;

namespace Saito.Mqtt.Tests.Security;

/// <summary>
/// Issue 32, item 6: a connected client sends a PUBLISH header announcing nearly Mqtt:MaxPacketSize, then trickles or
/// stops, with keep-alive 0. 1,800 such connections held 470 MiB with no timeout. A packet now has a deadline once its
/// first bytes are in, and the bytes of unfinished packets have a broker-wide budget.
/// </summary>
public sealed class UnfinishedPacketTests(ITestOutputHelper output)
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static string Id(string prefix) => prefix + "-" + Guid.NewGuid().ToString("N")[..8];

    [Fact]
    public async Task Packets_begun_and_left_unfinished_or_trickled_close_their_connections_at_the_read_deadline()
    {
        await using var saito = await SaitoHost.StartAsync(["Mqtt:PacketReadTimeoutSeconds=2"]);
        var slow = new List<RawMqttConnection>();
        using var trickling = CancellationTokenSource.CreateLinkedTokenSource(Token);
        try
        {
            for (int i = 0; i < 10; i++)
            {
                var connection = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
                slow.Add(connection);
                (await connection.ConnectAsync(MqttProtocolVersion.V311, Id("slow"), keepAliveSeconds: 0)).ReasonCode.ShouldBe((byte)0);
            }

            // A hub on the same broker that sends whole packets, keep-alive 0 too: the deadline is not its.
            await using var hub = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            (await hub.ConnectAsync(MqttProtocolVersion.V311, Id("hub"), keepAliveSeconds: 0)).ReasonCode.ShouldBe((byte)0);

            var clock = Stopwatch.StartNew();
            foreach (var connection in slow)
            {
                await connection.SendRawAsync(UnfinishedPublish.Beginning(saito.Broker.Options.MaxPacketSize - 16, 1_000));
            }

            var closes = slow.Select(async connection =>
            {
                await connection.ExpectClosedAsync(TimeSpan.FromSeconds(8));
                return clock.Elapsed;
            }).ToList();

            // One of them trickles a byte every 200 ms: bytes that keep coming do not move the packet's deadline.
            var trickle = Task.Run(async () =>
            {
                while (await slow[0].TrySendRawAsync(new byte[] { 0x41 }))
                {
                    await Task.Delay(200, trickling.Token);
                }
            }, trickling.Token);

            for (int i = 0; i < 12; i++)
            {
                await hub.SendAsync(new PublishPacket { Topic = "hub/ok", Payload = new byte[] { 1 }, QoS = MqttQoS.AtLeastOnce, PacketId = (ushort)(i + 1) });
                await hub.ExpectAsync<PublishAckPacket>();
                await Task.Delay(250, Token);
            }

            var closedAfter = await Task.WhenAll(closes);
            await trickling.CancelAsync();
            await trickle.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            output.WriteLine($"10 unfinished packets closed {closedAfter.Min().TotalMilliseconds:F0} to {closedAfter.Max().TotalMilliseconds:F0} ms after their first bytes (deadline 2 s)");
            closedAfter.Min().ShouldBeGreaterThan(TimeSpan.FromSeconds(1.5), "not before the deadline");
            closedAfter.Max().ShouldBeLessThan(TimeSpan.FromSeconds(4), "within the deadline, a housekeeping round and the close's grace");
            saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.PacketReadTimeoutSeconds)).ShouldBe(10);
            await hub.SendAsync(new PublishPacket { Topic = "hub/ok", Payload = new byte[] { 2 }, QoS = MqttQoS.AtLeastOnce, PacketId = 100 });
            (await hub.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe((ushort)100, "the hub sending whole packets stays connected");
            await Eventually.TrueAsync(() => saito.Broker.UnfinishedPacketBytes == 0, "nothing is counted as held once they are gone");
        }
        finally
        {
            await trickling.CancelAsync();
            foreach (var connection in slow)
            {
                await connection.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task Past_the_budget_for_unfinished_packets_the_connections_whose_packets_waited_longest_are_closed()
    {
        const int Budget = 1024 * 1024;
        const int Piece = 64 * 1024;
        await using var saito = await SaitoHost.StartAsync([$"Mqtt:MaxUnfinishedPacketBytes={Budget}", "Mqtt:PacketReadTimeoutSeconds=600"]);
        var held = new List<RawMqttConnection>();
        try
        {
            // Under the budget: 8 x 64 KiB and one of 200 KiB are all held, each counted (and so begun) after the one before.
            for (int i = 0; i < 8; i++)
            {
                held.Add(await HoldCountedAsync(saito, Piece));
            }

            held.Add(await HoldCountedAsync(saito, 200 * 1024));
            saito.Broker.UnfinishedPacketBytes.ShouldBe((8 * Piece) + (200 * 1024), "the nine unfinished packets are counted");
            saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxUnfinishedPacketBytes)).ShouldBe(0);

            // Five more of 64 KiB pass the budget: the oldest goes, not the newest nor the largest.
            for (int i = 0; i < 5; i++)
            {
                held.Add(await HoldAsync(saito, Piece));
            }

            await held[0].ExpectClosedAsync(TimeSpan.FromSeconds(5));
            await held[8].ExpectNothingAsync(TimeSpan.FromMilliseconds(300));
            await held[^1].ExpectNothingAsync(TimeSpan.FromMilliseconds(10));

            // A flood of them past it: the count of bytes held stays within the budget, and so do the connections left.
            for (int i = 0; i < 20; i++)
            {
                held.Add(await HoldAsync(saito, Piece));
            }

            // Each of the 20 past the budget closes the oldest, but once the 200 KiB one goes three fit again: 1 + 17.
            await Eventually.TrueAsync(() => saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxUnfinishedPacketBytes)) >= 1 + 17,
                "a connection closed for each unfinished packet past the budget");
            await Eventually.TrueAsync(() => saito.Broker.UnfinishedPacketBytes <= Budget, "the bytes held come back within the budget");
            output.WriteLine($"budget {Budget} B: {saito.Broker.UnfinishedPacketBytes} B held at the end; " +
                             $"{saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxUnfinishedPacketBytes))} connections closed for it");

            // A hub's packet larger than any of the flood's, arriving in pieces while the budget is full, still gets in.
            await using var hub = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
            (await hub.ConnectAsync(MqttProtocolVersion.V500, Id("hub"))).ReasonCode.ShouldBe((byte)0);
            for (ushort id = 1; id <= 3; id++)
            {
                await hub.SendAsync(new PublishPacket { Topic = "hub/ok", Payload = new byte[250 * 1024], QoS = MqttQoS.AtLeastOnce, PacketId = id });
                (await hub.ExpectAsync<PublishAckPacket>()).PacketId.ShouldBe(id);
            }
        }
        finally
        {
            foreach (var connection in held)
            {
                await connection.DisposeAsync();
            }
        }
    }

    /// <summary>
    /// For the report (issue 32 asks for it; about a minute, so not in the regular run): process memory with 2,000
    /// connections that each sent 250 KiB of a 260 KiB PUBLISH and stopped, against 2,000 idle ones. The same on the
    /// server as its own process, against Mosquitto: <c>Saito.LoadTest broker idle-connections --connections 2000
    /// --slow-bytes 256000</c>.
    /// </summary>
    [Fact(Explicit = true)]
    public async Task Two_thousand_slow_connections_hold_under_100_MiB_more_than_two_thousand_idle_ones()
    {
        const int Count = 2_000;
        await using var saito = await SaitoHost.StartAsync(["Logging:LogLevel:Saito.Mqtt=Error"]);
        var broker = new IPEndPoint(IPAddress.Loopback, saito.Port);
        byte[] connect = Wire.Encode(new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V311, ClientId = string.Empty, CleanStart = true }, MqttProtocolVersion.V311);
        byte[] slowBytes = UnfinishedPublish.Beginning(saito.Broker.Options.MaxPacketSize - 16, 250 * 1024);

        var idle = await OpenConnectedAsync(broker, connect, Count);
        long idleBytes = Settled();
        long idleManaged = GC.GetTotalMemory(true);
        output.WriteLine($"{Count} idle connections: {idleBytes / (1024.0 * 1024):F1} MiB, managed heap {idleManaged / (1024.0 * 1024):F1} MiB");
        foreach (var socket in idle)
        {
            socket.Dispose();
        }

        await Eventually.TrueAsync(() => saito.Broker.ConnectedClients == 0, "the idle connections are gone");
        var slow = await OpenConnectedAsync(broker, connect, Count);
        var clock = Stopwatch.StartNew();
        await Parallel.ForEachAsync(slow, Token, async (socket, token) =>
        {
            try
            {
                await socket.SendAsync(slowBytes, SocketFlags.None, token);
            }
            catch (SocketException)
            {
                // Closed for the budget while sending.
            }
        });
        // Every byte sent is read: each connection left holds its 250 KiB, within the budget.
        await Eventually.TrueAsync(() => saito.Broker.UnfinishedPacketBytes == saito.Broker.ConnectedClients * (long)slowBytes.Length
                                         && saito.Broker.UnfinishedPacketBytes <= saito.Broker.Options.MaxUnfinishedPacketBytes,
            "every byte sent is read, the budget kept", TimeSpan.FromSeconds(20));
        long slowBytesHeld = Settled();
        int open = saito.Broker.ConnectedClients;
        long slowManaged = GC.GetTotalMemory(true);
        output.WriteLine($"managed heap with the slow connections: {slowManaged / (1024.0 * 1024):F1} MiB");
        output.WriteLine($"{Count} slow connections (250 KiB of a {saito.Broker.Options.MaxPacketSize} B PUBLISH each): {slowBytesHeld / (1024.0 * 1024):F1} MiB, " +
                         $"{(slowBytesHeld - idleBytes) / (1024.0 * 1024):F1} MiB more than idle; {open} still connected, " +
                         $"{saito.Broker.UnfinishedPacketBytes / (1024.0 * 1024):F1} MiB counted as unfinished");
        await Eventually.TrueAsync(() => saito.Broker.ConnectedClients == 0, "every slow connection closed by the read deadline", TimeSpan.FromSeconds(60));
        output.WriteLine($"all closed {clock.Elapsed.TotalSeconds:F1} s after they sent (Mqtt:PacketReadTimeoutSeconds {saito.Broker.Options.PacketReadTimeoutSeconds})");
        foreach (var socket in slow)
        {
            socket.Dispose();
        }

        // The process's memory: the 32 MiB budget held by the connections left, the pieces kept for reuse, and what the
        // garbage collector keeps committed after the flood (70-91 MiB more than idle on 2026-12-05; 114-127 MiB with the
        // buffers that doubled).
        (slowBytesHeld - idleBytes).ShouldBeLessThan(100L * 1024 * 1024);
        (slowManaged - idleManaged).ShouldBeLessThan(100L * 1024 * 1024);
    }

    /// <summary>Connections that sent CONNECT and got their CONNACK, from 127.0.0.21 on (500 an address, under Mqtt:MaxConnectionsPerAddress).</summary>
    private static async Task<List<Socket>> OpenConnectedAsync(IPEndPoint broker, byte[] connect, int count)
    {
        var sockets = new Socket[count];
        await Parallel.ForEachAsync(Enumerable.Range(0, count), new ParallelOptions { MaxDegreeOfParallelism = 32, CancellationToken = Token }, async (i, token) =>
        {
            var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
            socket.Bind(new IPEndPoint(IPAddress.Parse($"127.0.0.{21 + (i / 500)}"), 0));
            await socket.ConnectAsync(broker, token);
            await socket.SendAsync(connect, SocketFlags.None, token);
            var connAck = new byte[4];
            int read = 0;
            while (read < 4)
            {
                read += await socket.ReceiveAsync(connAck.AsMemory(read), SocketFlags.None, token);
            }

            sockets[i] = socket;
        });
        return [.. sockets];
    }

    /// <summary>The process's memory once the garbage collector has run (this process holds the broker).</summary>
    private static long Settled()
    {
        // The large read buffers live on the large object heap, which is compacted only when asked.
        System.Runtime.GCSettings.LargeObjectHeapCompactionMode = System.Runtime.GCLargeObjectHeapCompactionMode.CompactOnce;
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        GC.WaitForPendingFinalizers();
        GC.Collect(2, GCCollectionMode.Forced, blocking: true, compacting: true);
        using var process = Process.GetCurrentProcess();
        return process.WorkingSet64;
    }

    /// <summary>
    /// <see cref="HoldAsync"/>, then waits until the broker has counted the bytes and its clock has moved on, so the next
    /// packet held is younger (the order of the oldest-first rule, whatever the load on the machine).
    /// </summary>
    private static async Task<RawMqttConnection> HoldCountedAsync(SaitoHost saito, int sent)
    {
        long before = saito.Broker.UnfinishedPacketBytes;
        var connection = await HoldAsync(saito, sent);
        await Eventually.TrueAsync(() => saito.Broker.UnfinishedPacketBytes == before + sent, "the broker counts the packet's bytes");
        long counted = Environment.TickCount64;
        await Eventually.TrueAsync(() => Environment.TickCount64 > counted, "a later tick");
        return connection;
    }

    /// <summary>A connected client whose unfinished PUBLISH holds <paramref name="sent"/> bytes (of a packet announced larger).</summary>
    private static async Task<RawMqttConnection> HoldAsync(SaitoHost saito, int sent)
    {
        var connection = await RawMqttConnection.OpenAsync(saito.Endpoint, Token);
        (await connection.ConnectAsync(MqttProtocolVersion.V500, Id("held"), keepAliveSeconds: 0)).ReasonCode.ShouldBe((byte)0);
        await connection.SendRawAsync(UnfinishedPublish.Beginning(saito.Broker.Options.MaxPacketSize - 16, sent));
        return connection;
    }

}

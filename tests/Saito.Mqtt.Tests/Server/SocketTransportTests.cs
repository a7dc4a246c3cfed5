using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Hosting;
using Saito.Mqtt.Packets;
using Saito.Server;

namespace Saito.Mqtt.Tests.Server;

/// <summary>
/// Plain MQTT over TCP on Saito's own sockets (<c>Mqtt:TcpTransport=Sockets</c>, the default; issue 15, memory per idle
/// connection): the pipe over a real loopback socket pair, the listener's start and its refusal of a taken port, and
/// Kestrel kept as the other choice. The broker's own tests (conformance, limits, hostile clients) run on this
/// transport too, since it is the default.
/// </summary>
public sealed class SocketTransportTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_packet_larger_than_a_read_buffer_arriving_in_pieces_is_read_whole_and_an_idle_pipe_holds_no_buffer()
    {
        var (server, client) = await ConnectedPairAsync();
        using var peer = client;
        var pipe = new MqttSocketPipe(server);
        var packet = UnfinishedPublish.Whole(MqttSocketPipe.ReceiveSize * 12 + 7);

        // Waiting for the first byte: nothing rented.
        var first = pipe.Input.ReadAsync(Ct);
        pipe.HoldsBuffer.ShouldBeFalse();
        var sending = Task.Run(async () =>
        {
            for (int at = 0; at < packet.Length; at += 1000)
            {
                await peer.SendAsync(packet.AsMemory(at, Math.Min(1000, packet.Length - at)), SocketFlags.None, Ct);
            }
        }, Ct);

        // Read as the frame reader does: look at everything, consume nothing until the packet is whole.
        var result = await first;
        while (result.Buffer.Length < packet.Length)
        {
            pipe.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
            result = await pipe.Input.ReadAsync(Ct);
        }

        await sending;
        result.Buffer.IsSingleSegment.ShouldBeTrue("the reader hands out one contiguous buffer");
        result.Buffer.ToArray().ShouldBe(packet);
        pipe.HoldsBuffer.ShouldBeTrue();

        pipe.Input.AdvanceTo(result.Buffer.End);
        pipe.HoldsBuffer.ShouldBeFalse("consumed: the buffer goes back at once");

        // And again when idle after a small packet.
        var next = pipe.Input.ReadAsync(Ct);
        await peer.SendAsync(new byte[] { 0xC0, 0x00 }, SocketFlags.None, Ct);
        var ping = await next;
        ping.Buffer.ToArray().ShouldBe([0xC0, 0x00]);
        pipe.Input.AdvanceTo(ping.Buffer.End);
        pipe.HoldsBuffer.ShouldBeFalse();

        await pipe.Input.CompleteAsync();
        await pipe.Output.CompleteAsync();
    }

    [Fact]
    public async Task A_packet_begun_and_left_unfinished_holds_what_it_sent_not_a_buffer_for_what_it_announced()
    {
        var (server, client) = await ConnectedPairAsync();
        using var peer = client;
        var pipe = new MqttSocketPipe(server);

        // 130 KiB of a 260 KiB PUBLISH (issue 32, item 6): buffers that doubled held 256 KiB for it.
        const int Sent = 130 * 1024;
        var packet = UnfinishedPublish.Whole(260 * 1024);
        await peer.SendAsync(packet.AsMemory(0, Sent), SocketFlags.None, Ct);
        var result = await pipe.Input.ReadAsync(Ct);
        while (result.Buffer.Length < Sent)
        {
            pipe.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
            result = await pipe.Input.ReadAsync(Ct);
        }

        result.Buffer.ToArray().ShouldBe(packet[..Sent]);
        pipe.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
        pipe.BufferBytes.ShouldBeLessThanOrEqualTo(Sent + MqttSocketPipe.ReceiveSize, "what was sent, rounded up to one read");

        // Its last bytes in: one contiguous buffer, the bytes of the next packet after it.
        var reading = pipe.Input.ReadAsync(Ct);
        await peer.SendAsync(packet.AsMemory(Sent), SocketFlags.None, Ct);
        await peer.SendAsync(new byte[] { 0xC0, 0x00 }, SocketFlags.None, Ct);
        result = await reading;
        while (result.Buffer.Length < packet.Length + 2)
        {
            pipe.Input.AdvanceTo(result.Buffer.Start, result.Buffer.End);
            result = await pipe.Input.ReadAsync(Ct);
        }

        result.Buffer.IsSingleSegment.ShouldBeTrue("a whole packet is handed out in one buffer");
        var buffer = result.Buffer;
        MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var frame).ShouldBeTrue();
        frame.Size.ShouldBe(packet.Length);
        frame.Body.ToArray().ShouldBe(packet[4..]);
        MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var ping).ShouldBeTrue();
        ping.Type.ShouldBe(MqttPacketType.PingReq);
        pipe.Input.AdvanceTo(buffer.Start);
        pipe.HoldsBuffer.ShouldBeFalse();

        await pipe.Input.CompleteAsync();
        await pipe.Output.CompleteAsync();
    }

    [Fact]
    public async Task Written_bytes_reach_the_peer_in_order_and_completing_the_writer_ends_the_stream_with_a_fin()
    {
        var (server, client) = await ConnectedPairAsync();
        using var peer = client;
        var pipe = new MqttSocketPipe(server);

        // More than a socket buffer at once, so a send goes part way and the rest follows as the peer reads.
        var sent = new byte[4 * 1024 * 1024];
        Random.Shared.NextBytes(sent);
        var receiving = Task.Run(async () =>
        {
            var all = new MemoryStream();
            var chunk = new byte[64 * 1024];
            int n;
            while ((n = await peer.ReceiveAsync(chunk, SocketFlags.None, Ct)) > 0)
            {
                all.Write(chunk, 0, n);
            }

            return all.ToArray();
        }, Ct);

        for (int at = 0; at < sent.Length; at += 100_000)
        {
            int length = Math.Min(100_000, sent.Length - at);
            sent.AsSpan(at, length).CopyTo(pipe.Output.GetSpan(length));
            pipe.Output.Advance(length);
            var flushed = await pipe.Output.FlushAsync(Ct);
            flushed.IsCompleted.ShouldBeFalse();
        }

        await pipe.Output.CompleteAsync();
        (await receiving.WaitAsync(TimeSpan.FromSeconds(30), Ct)).ShouldBe(sent, "every byte, in order, then end of stream");
        await pipe.Input.CompleteAsync();
    }

    [Fact]
    public async Task A_peer_that_resets_is_an_io_error_for_the_reader_and_a_completed_writer_never_a_crash()
    {
        var (server, client) = await ConnectedPairAsync();
        var pipe = new MqttSocketPipe(server);
        var reading = pipe.Input.ReadAsync(Ct);
        client.LingerState = new LingerOption(true, 0);
        client.Dispose();

        Exception? error = null;
        ReadResult result = default;
        try
        {
            result = await reading;
        }
        catch (Exception e)
        {
            error = e;
        }

        // A reset is an IOException (what the connection's read loop handles as a failed transport); a kernel that
        // reports it as the end of the stream is fine too. Anything else would escape the read loop.
        (error is IOException || (error is null && result.IsCompleted)).ShouldBeTrue($"read after a reset: {error?.ToString() ?? "no error, completed " + result.IsCompleted}");

        // Writing to the reset connection: the writer reports itself completed (as Kestrel's did) within a few sends.
        FlushResult flushed = default;
        for (int attempt = 0; attempt < 50 && !flushed.IsCompleted; attempt++)
        {
            pipe.Output.GetSpan(100)[..100].Fill(1);
            pipe.Output.Advance(100);
            flushed = await pipe.Output.FlushAsync(Ct);
        }

        flushed.IsCompleted.ShouldBeTrue();
        await pipe.Input.CompleteAsync();
        await pipe.Output.CompleteAsync();
    }

    [Fact]
    public async Task The_default_listener_serves_the_mqtt_port_and_kestrel_still_serves_it_when_chosen()
    {
        foreach (string transport in new[] { "Sockets", "Kestrel" })
        {
            await using var saito = await SaitoHost.StartAsync([$"Mqtt:TcpTransport={transport}"]);
            var listener = saito.Services.GetRequiredService<MqttSocketListener>();
            if (transport == "Sockets")
            {
                listener.LocalEndPoints.ShouldContain(new IPEndPoint(IPAddress.Loopback, saito.Port));
            }
            else
            {
                listener.LocalEndPoints.ShouldBeEmpty();
            }

            string topic = $"transport/{transport}/" + Guid.NewGuid().ToString("N");
            await using var subscriber = await RawMqttConnection.OpenAsync(saito.Endpoint, Ct);
            (await subscriber.ConnectAsync(MqttProtocolVersion.V500, "sub-" + transport)).ReasonCode.ShouldBe((byte)0, transport);
            await subscriber.SendAsync(new SubscribePacket { PacketId = 1, Subscriptions = [new MqttSubscription { TopicFilter = topic, QoS = MqttQoS.AtLeastOnce }] });
            await subscriber.ExpectAsync<SubAckPacket>();

            await using var publisher = await RawMqttConnection.OpenAsync(saito.Endpoint, Ct);
            await publisher.ConnectAsync(MqttProtocolVersion.V311, "pub-" + transport);
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = "hello"u8.ToArray(), QoS = MqttQoS.AtLeastOnce, PacketId = 7 });
            (await publisher.ExpectAsync<PublishAckPacket>(TimeSpan.FromSeconds(10))).PacketId.ShouldBe((ushort)7, transport);

            var delivered = await subscriber.ExpectAsync<PublishPacket>(TimeSpan.FromSeconds(10));
            delivered.Topic.ShouldBe(topic, transport);
            delivered.Payload.ToArray().ShouldBe("hello"u8.ToArray(), transport);
        }
    }

    [Fact]
    public async Task A_taken_mqtt_port_stops_the_start_with_the_address_in_use_error_the_server_turns_into_exit_3()
    {
        using var holder = new TcpListener(IPAddress.Loopback, 0);
        holder.Start();
        int taken = ((IPEndPoint)holder.LocalEndpoint).Port;
        string data = Directory.CreateTempSubdirectory("saito-transport-test-").FullName;
        try
        {
            await using var app = SaitoApp.Build(
            [
                $"--urls=http://127.0.0.1:{FreePort.Next()}",
                "--Mqtt:BindAddress=127.0.0.1",
                $"--Mqtt:Port={taken}",
                $"--Storage:HotPath={Path.Combine(data, "hot")}",
                $"--Storage:ArchivePath={Path.Combine(data, "archive")}",
                "--Logging:LogLevel:Default=Warning",
            ]);

            var failure = await Should.ThrowAsync<IOException>(() => app.StartAsync(Ct));

            failure.Message.ShouldBe($"Failed to bind to address mqtt://127.0.0.1:{taken}: address already in use.");
            failure.InnerException.ShouldBeOfType<AddressInUseException>();
        }
        finally
        {
            Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
            await TestFolders.DeleteAsync(data);
        }
    }

    [Theory]
    [InlineData("localhost", new[] { "127.0.0.1", "::1" })]
    [InlineData("127.0.0.1", new[] { "127.0.0.1" })]
    [InlineData("*", new[] { "::" })]
    [InlineData("0.0.0.0", new[] { "::" })]
    [InlineData("hub-server.school.lan", new[] { "::" })]
    public void The_bind_address_means_what_it_meant_to_kestrel(string host, string[] addresses)
    {
        MqttSocketListener.EndPointsFor(host, 1883).Select(e => e.Address.ToString()).ShouldBe(addresses);
        MqttSocketListener.EndPointsFor(host, 1883).ShouldAllBe(e => e.Port == 1883);
    }

    private static async Task<(Socket Server, Socket Client)> ConnectedPairAsync()
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        var accepting = listener.AcceptAsync(Ct);
        await client.ConnectAsync(listener.LocalEndPoint!, Ct);
        return (await accepting, client);
    }
}

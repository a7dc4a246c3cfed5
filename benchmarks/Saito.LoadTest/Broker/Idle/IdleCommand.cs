using System.Buffers;
using System.CommandLine;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Saito.Mqtt.Packets;
using Spectre.Console;

namespace Saito.LoadTest.Broker.Idle;

/// <summary>
/// <c>idle-connections</c>: what an idle MQTT connection costs a broker. Starts Saito (embedded defaults) and
/// Mosquitto in turn, each as its own process, opens N connections that CONNECT and then say nothing, and reads the
/// broker's resident memory before and after (settled): KiB per connection for each, and the ratio.
/// With <c>--slow-bytes N</c> each connection then sends the first N bytes of a PUBLISH that announces 260 KiB and stops
/// (issue 32, item 6: packets begun and left unfinished): the memory that costs on top of the idle connections, and how
/// many connections the broker keeps.
/// </summary>
internal static class IdleCommand
{
    public static Command Create()
    {
        var connections = new Option<int>("--connections") { Description = "Idle connections to open", DefaultValueFactory = _ => 10_000 };
        var target = new Option<string>("--target") { Description = "saito, mosquitto or both", DefaultValueFactory = _ => "both" };
        var settle = new Option<int>("--settle") { Description = "Seconds to wait before each memory reading", DefaultValueFactory = _ => 5 };
        var slowBytes = new Option<int>("--slow-bytes")
        {
            Description = "Then each connection sends this many bytes of a 260 KiB PUBLISH and stops (0: idle only)",
            DefaultValueFactory = _ => 0,
        };
        var command = new Command("idle-connections", "Memory per idle MQTT connection: Saito against Mosquitto on this machine.") { connections, target, settle, slowBytes };
        command.SetAction(async (parse, token) =>
        {
            int n = parse.GetValue(connections);
            string which = parse.GetValue(target)!;
            var settleTime = TimeSpan.FromSeconds(parse.GetValue(settle));
            int slow = parse.GetValue(slowBytes);
            if (slow is < 0 or > AnnouncedSize - 1024)
            {
                AnsiConsole.MarkupLine($"[red]--slow-bytes must be 0 to {AnnouncedSize - 1024}[/]");
                return 2;
            }

            var rows = new List<Row>();
            foreach (var name in which == "both" ? ["saito", "mosquitto"] : new[] { which })
            {
                rows.Add(await RunOneAsync(name, n, settleTime, slow, token));
            }

            var table = new Table().AddColumns("broker", "connections", "RSS before (MiB)", "RSS after (MiB)", "KiB per connection");
            if (slow > 0)
            {
                table.AddColumns($"RSS with {slow:N0} B of a packet each (MiB)", "MiB more than idle", "still open");
            }

            foreach (var r in rows)
            {
                var cells = new List<string>
                {
                    r.Broker, r.Open.ToString("N0", CultureInfo.InvariantCulture), (r.Before / 1024.0).ToString("F1", CultureInfo.InvariantCulture),
                    (r.After / 1024.0).ToString("F1", CultureInfo.InvariantCulture), PerConnection(r).ToString("F2", CultureInfo.InvariantCulture),
                };
                if (slow > 0)
                {
                    cells.Add((r.Slow / 1024.0).ToString("F1", CultureInfo.InvariantCulture));
                    cells.Add(((r.Slow - r.After) / 1024.0).ToString("F1", CultureInfo.InvariantCulture));
                    cells.Add(r.StillOpen.ToString("N0", CultureInfo.InvariantCulture));
                }

                table.AddRow([.. cells]);
            }

            AnsiConsole.Write(table);
            if (rows.Count == 2)
            {
                AnsiConsole.MarkupLine($"Saito/Mosquitto memory per idle connection: [bold]{PerConnection(rows[0]) / PerConnection(rows[1]):F1}x[/]");
            }

            return rows.All(r => r.Open == n) ? 0 : 1;
        });
        return command;
    }

    /// <summary>What the slow connections' PUBLISH announces: Saito's default Mqtt:MaxPacketSize less a little.</summary>
    private const int AnnouncedSize = 260 * 1024;

    /// <summary>One broker's figures: RSS in KiB before, with the idle connections and with the slow packets.</summary>
    private sealed record Row(string Broker, long Before, long After, int Open, long Slow, int StillOpen);

    private static double PerConnection(Row r) => (r.After - r.Before) / (double)Math.Max(1, r.Open);

    private static async Task<Row> RunOneAsync(string name, int count, TimeSpan settle, int slowBytes, CancellationToken token)
    {
        // Each broker inherits this process's file-descriptor limit; the server's code sets none of its own.
        await using var broker = name switch
        {
            "saito" => await BrokerProcess.StartSaitoAsync(64, unlimitedQueue: false),
            "mosquitto" => await BrokerProcess.StartMosquittoAsync(20, unlimitedQueue: false),
            _ => throw new ArgumentException($"Unknown target '{name}' (saito, mosquitto or both)"),
        };
        await Task.Delay(settle, token);
        long before = broker.RssKb();
        var sockets = new List<Socket>(count);
        try
        {
            // Saito allows 1,000 connections per address and 1,000 not yet CONNECTed by default: the connections come from
            // 127.0.0.2, 127.0.0.3, ... (1,000 each) and in waves of 100, what Mqtt:MaxPendingConnectionsPerAddress lets one
            // address have waiting for their CONNACK at once (past it the oldest waiting is closed).
            const int PerAddress = 1000;
            for (int wave = 0; wave < count; wave += 100)
            {
                var batch = Enumerable.Range(wave, Math.Min(100, count - wave))
                    .Select(i => ConnectAsync(new IPAddress([127, 0, 0, (byte)(2 + (i / PerAddress))]), broker.Port, $"idle-{i}", token));
                sockets.AddRange(await Task.WhenAll(batch));
            }

            await Task.Delay(settle, token);
            long after = broker.RssKb();
            if (slowBytes == 0)
            {
                return new Row(name, before, after, sockets.Count, 0, 0);
            }

            var beginning = Saito.Testing.UnfinishedPublish.Beginning(AnnouncedSize, slowBytes);
            await Parallel.ForEachAsync(sockets, new ParallelOptions { MaxDegreeOfParallelism = 64, CancellationToken = token }, async (socket, ct) =>
            {
                try
                {
                    await socket.SendAsync(beginning, SocketFlags.None, ct);
                }
                catch (SocketException)
                {
                    // Closed by the broker while sending (a budget for unfinished packets).
                }
            });
            await Task.Delay(settle, token);
            long slow = broker.RssKb();
            return new Row(name, before, after, sockets.Count, slow, sockets.Count(IsOpen));
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket.Dispose();
            }
        }
    }

    /// <summary>The broker has not closed it: no end of stream or reset waiting to be read.</summary>
    private static bool IsOpen(Socket socket)
    {
        try
        {
            return !(socket.Poll(0, SelectMode.SelectRead) && socket.Available == 0);
        }
        catch (SocketException)
        {
            return false;
        }
    }

    private static async Task<Socket> ConnectAsync(IPAddress from, int port, string clientId, CancellationToken token)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(from, 0));
        await socket.ConnectAsync(new IPEndPoint(IPAddress.Loopback, port), token);
        var writer = new ArrayBufferWriter<byte>();
        MqttPacketEncoder.Encode(writer, new ConnectPacket { ProtocolVersion = MqttProtocolVersion.V311, ClientId = clientId, CleanStart = true, KeepAliveSeconds = 0 },
            MqttProtocolVersion.V311);
        await socket.SendAsync(writer.WrittenMemory, token);
        var connAck = new byte[4];
        int read = 0;
        while (read < 4)
        {
            int n = await socket.ReceiveAsync(connAck.AsMemory(read), token);
            if (n == 0)
            {
                throw new IOException($"{clientId}: connection closed before CONNACK");
            }

            read += n;
        }

        if (connAck[0] != 0x20 || connAck[3] != 0)
        {
            throw new IOException($"{clientId}: CONNECT refused (0x{connAck[3]:X2})");
        }

        return socket;
    }
}

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
/// </summary>
internal static class IdleCommand
{
    public static Command Create()
    {
        var connections = new Option<int>("--connections") { Description = "Idle connections to open", DefaultValueFactory = _ => 10_000 };
        var target = new Option<string>("--target") { Description = "saito, mosquitto or both", DefaultValueFactory = _ => "both" };
        var settle = new Option<int>("--settle") { Description = "Seconds to wait before each memory reading", DefaultValueFactory = _ => 5 };
        var command = new Command("idle-connections", "Memory per idle MQTT connection: Saito against Mosquitto on this machine.") { connections, target, settle };
        command.SetAction(async (parse, token) =>
        {
            int n = parse.GetValue(connections);
            string which = parse.GetValue(target)!;
            var settleTime = TimeSpan.FromSeconds(parse.GetValue(settle));
            var rows = new List<(string Broker, long Before, long After, int Open)>();
            foreach (var name in which == "both" ? ["saito", "mosquitto"] : new[] { which })
            {
                rows.Add(await RunOneAsync(name, n, settleTime, token));
            }

            var table = new Table().AddColumns("broker", "connections", "RSS before (MiB)", "RSS after (MiB)", "KiB per connection");
            foreach (var r in rows)
            {
                table.AddRow(r.Broker, r.Open.ToString("N0", CultureInfo.InvariantCulture), (r.Before / 1024.0).ToString("F1", CultureInfo.InvariantCulture),
                    (r.After / 1024.0).ToString("F1", CultureInfo.InvariantCulture), PerConnection(r).ToString("F2", CultureInfo.InvariantCulture));
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

    private static double PerConnection((string, long Before, long After, int Open) r) => (r.After - r.Before) / (double)Math.Max(1, r.Open);

    private static async Task<(string, long, long, int)> RunOneAsync(string name, int count, TimeSpan settle, CancellationToken token)
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
            // 127.0.0.2, 127.0.0.3, ... (1,000 each) and in waves of 200.
            const int PerAddress = 1000;
            for (int wave = 0; wave < count; wave += 200)
            {
                var batch = Enumerable.Range(wave, Math.Min(200, count - wave))
                    .Select(i => ConnectAsync(new IPAddress([127, 0, 0, (byte)(2 + (i / PerAddress))]), broker.Port, $"idle-{i}", token));
                sockets.AddRange(await Task.WhenAll(batch));
            }

            await Task.Delay(settle, token);
            long after = broker.RssKb();
            return (name, before, after, sockets.Count);
        }
        finally
        {
            foreach (var socket in sockets)
            {
                socket.Dispose();
            }
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

using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using Saito.Mqtt.Packets;
using Spectre.Console;

namespace Saito.LoadTest.Broker;

/// <summary>
/// <c>broker</c>: the same publish load into Saito's broker and into Mosquitto, one after the other in one run,
/// each broker in its own process on this machine; prints both and the ratio.
/// </summary>
internal static class BrokerCommand
{
    private static readonly JsonSerializerOptions s_json = new() { WriteIndented = true };

    public static Command Create()
    {
        var publishers = new Option<int>("--publishers") { Description = "Publisher connections", DefaultValueFactory = _ => 16 };
        var messages = new Option<int>("--messages") { Description = "Messages per publisher", DefaultValueFactory = _ => 20_000 };
        var payload = new Option<int>("--payload") { Description = "Payload bytes (at least 8: a timestamp)", DefaultValueFactory = _ => 64 };
        var qos = new Option<int>("--qos") { Description = "QoS of publishes and of the subscription", DefaultValueFactory = _ => 1 };
        var inflight = new Option<int>("--inflight") { Description = "Unacknowledged publishes per publisher, and the brokers' outbound inflight window", DefaultValueFactory = _ => 32 };
        var version = new Option<string>("--mqtt") { Description = "Protocol: 3.1.1 or 5", DefaultValueFactory = _ => "3.1.1" };
        var target = new Option<string>("--target") { Description = "saito, mosquitto or both", DefaultValueFactory = _ => "both" };
        var rounds = new Option<int>("--rounds") { Description = "Alternating rounds per broker; the best round of each is reported", DefaultValueFactory = _ => 1 };
        var outDir = new Option<string?>("--out") { Description = "Folder for results.json" };
        var endpoint = new Option<string?>("--endpoint") { Description = "host:port of an already running broker to drive instead (for profiling); --target names it" };
        var rate = new Option<double>("--rate") { Description = "Messages per second offered by all publishers together (open loop); 0: as fast as acknowledgements allow", DefaultValueFactory = _ => 0 };
        var unlimited = new Option<bool>("--unlimited-queues") { Description = "No limit on the subscriber's queue in either broker (nothing dropped); otherwise both on their defaults" };
        var warmup = new Option<int>("--warmup") { Description = "Messages per publisher sent first and not measured (JIT and tiered compilation settle; the same for both brokers)", DefaultValueFactory = _ => 5_000 };
        var timeout = new Option<int>("--timeout") { Description = "Seconds before a round is abandoned", DefaultValueFactory = _ => 300 };

        var command = new Command("broker", "Many publishers at QoS 1 into the broker, one subscriber on '#': Saito against Mosquitto on this machine.")
        {
            publishers, messages, payload, qos, inflight, version, target, rounds, outDir, endpoint, rate, unlimited, warmup, timeout,
            Idle.IdleCommand.Create(),
        };
        command.SetAction(async (parse, token) =>
        {
            var settings = new BrokerLoadSettings(
                parse.GetValue(publishers), parse.GetValue(messages), parse.GetValue(payload), (MqttQoS)parse.GetValue(qos), parse.GetValue(inflight),
                parse.GetValue(version) is "5" or "5.0" ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311, TimeSpan.FromSeconds(parse.GetValue(timeout)),
                parse.GetValue(rate), parse.GetValue(unlimited));
            string which = parse.GetValue(target)!;
            string[] targets = which == "both" ? ["saito", "mosquitto"] : [which];
            var results = new List<BrokerLoadResult>();
            for (int round = 0; round < parse.GetValue(rounds); round++)
            {
                foreach (var name in targets)
                {
                    results.Add(await RunOneAsync(name, parse.GetValue(endpoint), settings, parse.GetValue(warmup), token));
                }
            }

            Report(results, settings);
            if (parse.GetValue(outDir) is { } dir)
            {
                Directory.CreateDirectory(dir);
                await File.WriteAllTextAsync(Path.Combine(dir, "results.json"), JsonSerializer.Serialize(results.Select(ToJson), s_json), token);
            }

            return results.All(r => r.Delivered >= r.Published) ? 0 : 1;
        });
        return command;
    }

    private static async Task<BrokerLoadResult> RunOneAsync(string name, string? endpoint, BrokerLoadSettings settings, int warmup, CancellationToken token)
    {
        if (endpoint is not null)
        {
            var parts = endpoint.Split(':');
            return await BrokerLoad.RunAsync(name, parts[0], int.Parse(parts[1], CultureInfo.InvariantCulture), settings, null, null, token);
        }

        await using var broker = name switch
        {
            "saito" => await BrokerProcess.StartSaitoAsync(settings.Inflight, settings.UnlimitedQueues),
            "mosquitto" => await BrokerProcess.StartMosquittoAsync(settings.Inflight, settings.UnlimitedQueues),
            _ => throw new ArgumentException($"Unknown target '{name}' (saito, mosquitto or both)"),
        };
        if (warmup > 0)
        {
            await BrokerLoad.RunAsync(name, "127.0.0.1", broker.Port, settings with { MessagesPerPublisher = warmup }, null, null, token);
        }

        long total = (long)settings.Publishers * settings.MessagesPerPublisher;
        BrokerLoadResult? result = null;
        await AnsiConsole.Progress()
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var bar = context.AddTask($"{name}: delivered", maxValue: total);
                result = await BrokerLoad.RunAsync(name, "127.0.0.1", broker.Port, settings, broker.CpuSeconds,
                    (_, delivered) => bar.Value = delivered, token);
                bar.Value = total;
            });
        return result!;
    }

    private static void Report(List<BrokerLoadResult> results, BrokerLoadSettings s)
    {
        AnsiConsole.MarkupLine($"[bold]{s.Publishers} publishers x {s.MessagesPerPublisher:N0} messages, {s.PayloadBytes} B, QoS {(int)s.QoS}, MQTT {(s.Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1")}, inflight {s.Inflight}, one subscriber on '#', " +
            $"{(s.Rate > 0 ? $"offered {s.Rate:N0} msg/s" : "closed loop")}, {(s.UnlimitedQueues ? "unlimited queues" : "default queues")}[/]");
        var table = new Table().AddColumns("broker", "delivered", "accepted msg/s", "delivered msg/s", "ack p50 ms", "ack p99 ms", "ack max ms", "e2e p50 ms", "e2e p99 ms", "broker CPU (cores)");
        foreach (var r in results)
        {
            table.AddRow(r.Broker, $"{r.Delivered:N0}/{r.Published:N0}", F(r.AcceptedPerSecond, "N0"), F(r.DeliveredPerSecond, "N0"), F(r.AckP50Ms), F(r.AckP99Ms), F(r.AckMaxMs),
                F(r.EndToEndP50Ms), F(r.EndToEndP99Ms), F(r.BrokerCores));
        }

        AnsiConsole.Write(table);
        var saito = results.Where(r => r.Broker == "saito").MaxBy(r => r.DeliveredPerSecond);
        var mosquitto = results.Where(r => r.Broker == "mosquitto").MaxBy(r => r.DeliveredPerSecond);
        if (saito is not null && mosquitto is not null)
        {
            AnsiConsole.MarkupLine($"Best rounds: Saito/Mosquitto throughput ratio [bold]{saito.DeliveredPerSecond / mosquitto.DeliveredPerSecond:F2}[/], " +
                $"ack p99 {saito.AckP99Ms:F1} ms vs {mosquitto.AckP99Ms:F1} ms");
        }
    }

    private static string F(double value, string format = "F2") => double.IsNaN(value) ? "-" : value.ToString(format, CultureInfo.InvariantCulture);

    private static object ToJson(BrokerLoadResult r) => new
    {
        command = "broker",
        broker = r.Broker,
        publishers = r.Settings.Publishers,
        messages_per_publisher = r.Settings.MessagesPerPublisher,
        payload_bytes = r.Settings.PayloadBytes,
        qos = (int)r.Settings.QoS,
        mqtt = r.Settings.Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1",
        inflight = r.Settings.Inflight,
        offered_rate = r.Settings.Rate,
        unlimited_queues = r.Settings.UnlimitedQueues,
        accepted_per_s = r.AcceptedPerSecond,
        published = r.Published,
        delivered = r.Delivered,
        seconds = r.Seconds,
        messages_per_s = r.DeliveredPerSecond,
        ack_p50_ms = r.AckP50Ms,
        ack_p99_ms = r.AckP99Ms,
        ack_max_ms = r.AckMaxMs,
        e2e_p50_ms = r.EndToEndP50Ms,
        e2e_p99_ms = r.EndToEndP99Ms,
        broker_cores = r.BrokerCores,
    };
}

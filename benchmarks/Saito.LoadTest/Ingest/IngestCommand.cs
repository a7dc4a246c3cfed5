using System.CommandLine;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Broker;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Spectre.Console;

namespace Saito.LoadTest.Ingest;

/// <summary>
/// <c>ingest</c>: end to end through a Saito.Server process, publish to committed. Saito acknowledges a QoS 1/2
/// publish only after its readings are committed, so acknowledged readings per second is the committed rate.
/// Reports it, publish-to-acknowledge latency, the server's RSS and CPU over time, and at the end counts the rows
/// in the database (through <see cref="IReadingStore.CountAsync"/>) to check every acknowledged reading is there.
/// </summary>
internal static class IngestCommand
{
    // A run too short for three samples has no RSS flatness (NaN): written as "NaN" rather than failing the report.
    private static readonly JsonSerializerOptions s_json = new() { WriteIndented = true, NumberHandling = System.Text.Json.Serialization.JsonNumberHandling.AllowNamedFloatingPointLiterals };

    /// <summary>The loads worth naming, and what each must reach.</summary>
    private sealed record Preset(string Name, int Connections, int ReadingsPerMessage, int DevicesPerConnection, double Rate, int DurationSeconds,
        double? TargetReadingsPerSecond, double? TargetP99Ms, bool FlatMemory, string Story);

    private static readonly Preset[] s_presets =
    [
        new("hubs", 16, 100, 20, 0, 60, 150_000, null, false, "16 hubs, each batching 100 readings per message from 20 wrist sensors, as fast as the inflight window allows"),
        new("sensors", 320, 1, 1, 0, 60, 20_000, null, false, "320 sensors publishing directly, one reading per message, as fast as the inflight window allows"),
        new("class", 320, 1, 1, 4, 600, null, 1000, true, "a class: 16 students x 20 sensors, each sensor 4 messages/s of one reading (1,280 readings/s)"),
    ];

    public static Command Create()
    {
        var preset = new Option<string?>("--preset") { Description = "hubs (16 x 100 readings/message), sensors (320 x 1) or class (320 x 1 at 4 msg/s for 10 min); other options override it" };
        preset.AcceptOnlyFromAmong(s_presets.Select(p => p.Name).ToArray());
        var db = new Option<string>("--db") { Description = "sqlite or postgres", DefaultValueFactory = _ => "sqlite" };
        db.AcceptOnlyFromAmong("sqlite", "postgres");
        var pg = new Option<string?>("--pg") { Description = "PostgreSQL connection string of a server where the tool may create and drop databases (default: env SAITO_BENCH_POSTGRES)" };
        var connections = new Option<int?>("--connections") { Description = "Publisher connections (hubs or sensors)" };
        var perMessage = new Option<int?>("--readings-per-message") { Description = "Readings in each message (1: one JSON object; more: an array)" };
        var devices = new Option<int?>("--devices-per-connection") { Description = "Devices each connection publishes for, in turn (a hub's sensors)" };
        var rate = new Option<double?>("--rate") { Description = "Messages/s per connection; 0 = as fast as the inflight window allows" };
        var inflight = new Option<int>("--inflight") { Description = "QoS 1/2 publishes outstanding per connection", DefaultValueFactory = _ => 16 };
        var duration = new Option<int?>("--duration") { Description = "Seconds to publish (default 60; class 600)" };
        var messages = new Option<long?>("--messages") { Description = "Messages per connection instead of a duration" };
        var qos = new Option<int>("--qos") { Description = "1 or 2", DefaultValueFactory = _ => 1 };
        qos.AcceptOnlyFromAmong("1", "2");
        var version = new Option<string>("--mqtt") { Description = "Protocol: 3.1.1 or 5", DefaultValueFactory = _ => "3.1.1" };
        var synchronous = new Option<string>("--synchronous") { Description = "SQLite: full or normal", DefaultValueFactory = _ => "full" };
        synchronous.AcceptOnlyFromAmong("full", "normal");
        var sample = new Option<int>("--sample-seconds") { Description = "Seconds between samples of the server's RSS and CPU", DefaultValueFactory = _ => 5 };
        var serverArgs = new Option<string[]>("--server-arg") { Description = "Extra Saito.Server setting, Section:Key=value (repeatable), e.g. Storage:Writers=2" };
        var serverEnv = new Option<string[]>("--server-env") { Description = "Environment variable for Saito.Server, NAME=value (repeatable), e.g. DOTNET_PerfMapEnabled=1" };
        var work = new Option<string?>("--work") { Description = "Folder for the SQLite files (default: under the temp directory, deleted after)" };
        var keep = new Option<bool>("--keep") { Description = "Keep the database (SQLite files or PostgreSQL database) afterwards" };
        var serverDll = new Option<string?>("--server") { Description = "Saito.Server.dll to run (default: src/Saito.Server/bin/Release/net10.0); a published copy keeps a long run safe from rebuilds" };
        var warmup = new Option<int>("--warmup")
        {
            Description = "Seconds of the same load before the measured run, on other devices (JIT, pools, caches settle); not counted",
            DefaultValueFactory = _ => 0,
        };
        var againstMosquitto = new Option<bool>("--against-mosquitto")
        {
            Description = "First run the same load against Mosquitto (accepting in memory, no subscriber), then Saito, back to back; report the ratio",
        };
        var outDir = new Option<string?>("--out") { Description = "Folder for results.json, samples.csv, chart.svg and server.log" };
        var generator = new Option<string>("--generator")
        {
            Description = "Who publishes: dotnet (this tool), c (benchmarks/loadgen-c on libmosquitto, built with make; one reading per message, " +
                $"one device per connection, as fast as the window allows; needs {CPublishGenerator.AptPackages}) or raw (the same program writing and " +
                "parsing MQTT 3.1.1 at QoS 1 itself, one send per window and one recv per wake-up: less of the machine goes to the generator)",
            DefaultValueFactory = _ => "dotnet",
        };
        generator.AcceptOnlyFromAmong("dotnet", "c", "raw");

        var command = new Command("ingest", "End to end through a Saito.Server process: MQTT publishes to committed rows, acknowledged only after the commit.")
        {
            preset, db, pg, connections, perMessage, devices, rate, inflight, duration, messages, qos, version, synchronous, sample, serverArgs, serverEnv, serverDll, work, keep, warmup, againstMosquitto, outDir, generator,
        };
        command.SetAction(async (parse, token) =>
        {
            var chosen = parse.GetValue(preset) is { } name ? s_presets.Single(p => p.Name == name) : null;
            var provider = parse.GetValue(db) == "postgres" ? StorageProvider.Postgres : StorageProvider.Sqlite;
            string? server = parse.GetValue(pg) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES");
            if (provider == StorageProvider.Postgres && string.IsNullOrWhiteSpace(server))
            {
                AnsiConsole.MarkupLine("[red]--db postgres needs --pg <connection string> (or SAITO_BENCH_POSTGRES).[/]");
                return 2;
            }

            var settings = new IngestSettings(
                parse.GetValue(connections) ?? chosen?.Connections ?? 16,
                parse.GetValue(perMessage) ?? chosen?.ReadingsPerMessage ?? 100,
                parse.GetValue(devices) ?? chosen?.DevicesPerConnection ?? 1,
                parse.GetValue(rate) ?? chosen?.Rate ?? 0,
                parse.GetValue(inflight),
                TimeSpan.FromSeconds(parse.GetValue(duration) ?? chosen?.DurationSeconds ?? 60),
                parse.GetValue(messages),
                (MqttQoS)parse.GetValue(qos),
                parse.GetValue(version) is "5" or "5.0" ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311,
                TimeSpan.FromSeconds(parse.GetValue(sample)),
                TimeSpan.FromSeconds(60));
            string who = parse.GetValue(generator) ?? "dotnet";
            bool c = who != "dotnet";
            if (who == "raw" && (settings.QoS != MqttQoS.AtLeastOnce || settings.Version != MqttProtocolVersion.V311))
            {
                AnsiConsole.MarkupLine("[red]--generator raw publishes at QoS 1 over MQTT 3.1.1 only: use --generator c for QoS 2 or MQTT 5.[/]");
                return 2;
            }

            if (c && (settings.ReadingsPerMessage != 1 || settings.DevicesPerConnection != 1 || settings.Rate > 0 || settings.MessagesPerConnection is not null))
            {
                AnsiConsole.MarkupLine($"[red]--generator {who} publishes one reading per message from one device per connection, as fast as the inflight window allows, " +
                    "for --duration: --readings-per-message, --devices-per-connection, --rate and --messages are for the dotnet generator.[/]");
                return 2;
            }

            var options = new RunOptions(provider, server, parse.GetValue(synchronous) == "normal" ? SqliteSynchronous.Normal : SqliteSynchronous.Full,
                parse.GetValue(serverArgs) ?? [], parse.GetValue(serverEnv) ?? [], parse.GetValue(serverDll), parse.GetValue(work), parse.GetValue(keep), parse.GetValue(warmup), parse.GetValue(againstMosquitto), parse.GetValue(outDir),
                c ? who : null);
            return await RunAsync(chosen, settings, options, token);
        });
        return command;
    }

    private sealed record RunOptions(StorageProvider Database, string? PostgresServer, SqliteSynchronous Synchronous, string[] ServerArgs, string[] ServerEnv,
        string? ServerDll, string? Work, bool Keep, int WarmupSeconds, bool AgainstMosquitto, string? OutDir, string? CGenerator)
    {
        public bool Raw => CGenerator == "raw";
    }

    private static async Task<int> RunAsync(Preset? preset, IngestSettings s, RunOptions o, CancellationToken token)
    {
        string? generator = null;
        if (o.CGenerator is not null)
        {
            try
            {
                generator = await CPublishGenerator.BuildAsync(token);
            }
            catch (InvalidOperationException ex)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(ex.Message)}[/]");
                return 2;
            }
        }

        string run = "lt" + DateTime.UtcNow.ToString("HHmmss", CultureInfo.InvariantCulture);
        string outDir = o.OutDir ?? Path.Combine(Path.GetTempPath(), $"saito-ingest-{Environment.ProcessId}");
        Directory.CreateDirectory(outDir);
        string dbName = PostgresTools.Name("ingest");
        string workDir = o.Work ?? Path.Combine(Path.GetTempPath(), $"saito-ingest-db-{Environment.ProcessId}");

        var storage = new StorageOptions { Provider = o.Database };
        var storageArgs = new List<string> { $"--Storage:Provider={(o.Database == StorageProvider.Postgres ? "postgres" : "sqlite")}" };
        if (o.Database == StorageProvider.Postgres)
        {
            storage.ConnectionString = await PostgresDatabases.CreateAsync(o.PostgresServer!, dbName, token);
            storageArgs.Add($"--Storage:ConnectionString={storage.ConnectionString}");
        }
        else
        {
            LocalServers.UseFreshSqlite(storage, storageArgs, workDir, o.Synchronous);
        }

        string machine = await DescribeMachineAsync(o, token);
        string load = Describe(preset, s) + (generator is null ? string.Empty : (o.Raw ? ", published by benchmarks/loadgen-c --raw (C, MQTT written by the generator)" : ", published by benchmarks/loadgen-c (C, libmosquitto)"));
        AnsiConsole.MarkupLine($"[bold]ingest {o.Database.ToString().ToLowerInvariant()}{(preset is null ? string.Empty : " --preset " + preset.Name)}[/]: {Markup.Escape(load)}");
        AnsiConsole.MarkupLine(Markup.Escape(machine));

        // The same load against Mosquitto first, which only accepts the publishes in memory (no subscriber, no
        // persistence): what one-reading-per-message costs a broker that stores nothing.
        IngestLoadResult? mosquitto = null;
        if (o.AgainstMosquitto)
        {
            await using var broker = await BrokerProcess.StartMosquittoAsync(s.Inflight, unlimitedQueue: true);
            AnsiConsole.MarkupLine($"Mosquitto pid {broker.Pid}, MQTT on 127.0.0.1:{broker.Port}: the same load, accepted in memory");
            if (generator is not null)
            {
                var c = await CPublishGenerator.RunAsync(generator, o.Raw, broker.Port, s, o.WarmupSeconds, run + "m", broker.Pid, token);
                await File.WriteAllTextAsync(Path.Combine(outDir, "generator-mosquitto.json"), c.Json + "\n", token);
                mosquitto = c.Result;
            }
            else
            {
                await WarmUpAsync(s, o, broker.Port, broker.Pid, run + "mw", token);
                mosquitto = await IngestLoad.RunAsync(s, broker.Port, broker.Pid, run + "m", token);
            }

            AnsiConsole.MarkupLine($"Mosquitto accepted {mosquitto.AckedReadings / mosquitto.Seconds:N0} readings/s ({mosquitto.Cores.Process:F2} cores); now Saito");
        }

        var environment = o.ServerEnv.Select(e => e.Split('=', 2)).Select(p => new KeyValuePair<string, string>(p[0], p.Length > 1 ? p[1] : string.Empty));
        IngestLoadResult result;
        long stored;
        int deadLetters;
        string? firstDeadLetter;
        int pid;
        string logPath = Path.Combine(outDir, "server.log");
        try
        {
            await using (var server = await LocalServers.StartSaitoAsync(o.ServerDll, storageArgs, o.ServerArgs.Select(a => "--" + a), environment,
                             logPath, TimeSpan.FromSeconds(120), token))
            {
                pid = server.Pid;
                AnsiConsole.MarkupLine($"Saito.Server pid {pid}, MQTT on 127.0.0.1:{server.Port}, log {Markup.Escape(logPath)}");
                long warmReadings;
                if (generator is not null)
                {
                    var c = await CPublishGenerator.RunAsync(generator, o.Raw, server.Port, s, o.WarmupSeconds, run, server.Pid, token);
                    await File.WriteAllTextAsync(Path.Combine(outDir, "generator-saito.json"), c.Json + "\n", token);
                    warmReadings = c.WarmAcked;
                    result = c.Result;
                }
                else
                {
                    warmReadings = await WarmUpAsync(s, o, server.Port, server.Pid, run + "w", token);
                    result = await IngestLoad.RunAsync(s, server.Port, server.Pid, run, token);
                }

                if (server.HasExited)
                {
                    throw new InvalidOperationException($"Saito.Server exited during the run; see {server.LogPath}");
                }

                // Every acknowledged reading was committed before its acknowledgement left: count them, with the
                // server still up (SQLite's WAL lets this reader in beside Saito's writer).
                using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning));
                await using var store = ReadingStores.Create(storage, loggers);
                stored = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token) - warmReadings;
                var letters = await store.ReadDeadLettersAsync(1000, token);
                deadLetters = letters.Count;
                firstDeadLetter = letters.Count > 0 ? $"{letters[^1].Reason}: {letters[^1].Detail}" : null;
            }
        }
        finally
        {
            if (!o.Keep)
            {
                if (o.Database == StorageProvider.Postgres)
                {
                    await PostgresDatabases.DropAsync(o.PostgresServer!, dbName, CancellationToken.None);
                }
                else if (Directory.Exists(workDir))
                {
                    Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
                    Directory.Delete(workDir, recursive: true);
                }
            }
        }

        var report = new IngestReport(preset, s, o.Database, machine, load, result, stored, deadLetters, firstDeadLetter, mosquitto, o.CGenerator ?? "dotnet");
        report.Print();
        await report.WriteAsync(outDir, token);
        AnsiConsole.MarkupLine($"Results in {Markup.Escape(outDir)} (results.json, samples.csv, chart.svg, server.log)");
        return report.AllStored && report.AllAcked ? 0 : 1;
    }

    /// <summary>
    /// The same load for <see cref="RunOptions.WarmupSeconds"/> on devices of their own, not counted; returns the readings it
    /// had acknowledged (they are in the database too).
    /// </summary>
    private static async Task<long> WarmUpAsync(IngestSettings s, RunOptions o, int port, int pid, string run, CancellationToken token)
    {
        if (o.WarmupSeconds <= 0)
        {
            return 0;
        }

        AnsiConsole.MarkupLine($"Warming up for {o.WarmupSeconds} s (not counted)");
        var warm = await IngestLoad.RunAsync(s with { Duration = TimeSpan.FromSeconds(o.WarmupSeconds), MessagesPerConnection = null }, port, pid, run, token);
        return warm.AckedReadings;
    }

    private static string Describe(Preset? preset, IngestSettings s)
    {
        string pace = s.Rate > 0 ? $"{s.Rate:G} msg/s each ({s.Rate * s.Connections * s.ReadingsPerMessage:N0} readings/s offered)" : "as fast as acknowledged";
        string amount = s.MessagesPerConnection is { } m ? $"{m:N0} messages each" : $"{s.Duration.TotalSeconds:F0} s";
        return $"{s.Connections} connections x {s.ReadingsPerMessage} reading(s)/message, {s.DevicesPerConnection} device(s) each, {pace}, " +
            $"QoS {(int)s.QoS}, inflight {s.Inflight}, MQTT {(s.Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1")}, {amount}" +
            (preset is null ? string.Empty : $" ({preset.Story})");
    }

    private static async Task<string> DescribeMachineAsync(RunOptions o, CancellationToken token)
    {
        string cpu = (await File.ReadAllLinesAsync("/proc/cpuinfo", token)).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "?";
        string text = $"{Environment.ProcessorCount} cores ({cpu}), .NET {Environment.Version}";
        text += o.Database == StorageProvider.Postgres
            ? ", PostgreSQL " + await PostgresTools.DescribeAsync(o.PostgresServer!, token)
            : $", SQLite synchronous={o.Synchronous.ToString().ToLowerInvariant()}";
        if (o.ServerArgs.Length > 0)
        {
            text += ", server args: " + string.Join(' ', o.ServerArgs.Select(a => "--" + a));
        }

        return text;
    }

    /// <summary>What one run found, as a table for a person and as files.</summary>
    private sealed class IngestReport(Preset? preset, IngestSettings s, StorageProvider database, string machine, string load, IngestLoadResult r,
        long stored, int deadLetters, string? firstDeadLetter, IngestLoadResult? mosquitto, string generator)
    {
        private readonly double _p50 = r.LatencyMs(0.5);
        private readonly double _p99 = r.LatencyMs(0.99);
        private readonly double _p999 = r.LatencyMs(0.999);
        private readonly double _max = r.LatencyMs(1.0);

        public bool AllStored => stored >= r.AckedReadings && deadLetters == 0;
        public bool AllAcked => r.AckedMessages == r.SentMessages;

        private double ReadingsPerSecond => r.AckedReadings / r.Seconds;

        private double MosquittoReadingsPerSecond => mosquitto is null ? double.NaN : mosquitto.AckedReadings / mosquitto.Seconds;

        /// <summary>CPU per committed reading in Saito's arm: Saito, PostgreSQL, the load tool (the generator), and their sum.</summary>
        private (double Saito, double Postgres, double Tool, double Sum) Costs()
        {
            double saito = CpuBudget.MicrosPerReading(r.Cores.Process, ReadingsPerSecond);
            // On SQLite a PostgreSQL elsewhere on the machine (a test suite's) is not this run's database: its CPU is "rest".
            double postgres = database == StorageProvider.Postgres ? CpuBudget.MicrosPerReading(r.Cores.Postgres, ReadingsPerSecond) : 0;
            double tool = CpuBudget.MicrosPerReading(r.Cores.Tool, ReadingsPerSecond);
            return (saito, postgres, tool, saito + postgres + tool);
        }

        /// <summary>Cores 0.8x Mosquitto's rate would take at this run's costs per reading (Saito, PostgreSQL and the generator).</summary>
        private double CoresForTarget => CpuBudget.CoresNeeded(0.8 * MosquittoReadingsPerSecond, Costs().Sum);

        private IEnumerable<long> Rss => r.Samples.Select(x => x.ResidentBytes).Where(x => x > 0);

        /// <summary>
        /// Memory is called flat when RSS at the end is within 10% of RSS a third of the way in (after start-up
        /// and warm-up), and the second half's samples do not climb by more than that either.
        /// </summary>
        private (bool Flat, double ThirdMiB, double EndMiB) Flatness()
        {
            var samples = r.Samples.Where(x => x.ResidentBytes > 0).ToArray();
            if (samples.Length < 3)
            {
                return (false, double.NaN, double.NaN);
            }

            var third = samples.First(x => x.Seconds >= r.Seconds / 3);
            double end = samples[^1].ResidentBytes;
            double secondHalfMax = samples.Where(x => x.Seconds >= r.Seconds / 2).Max(x => x.ResidentBytes);
            bool flat = end <= third.ResidentBytes * 1.10 && secondHalfMax <= third.ResidentBytes * 1.10;
            return (flat, third.ResidentBytes / 1048576.0, end / 1048576.0);
        }

        public void Print()
        {
            var table = new Table().AddColumns("measure", "value");
            table.AddRow("messages acknowledged / sent", $"{r.AckedMessages:N0} / {r.SentMessages:N0}");
            table.AddRow("readings acknowledged (= committed)", $"{r.AckedReadings:N0} in {r.Seconds:F1} s");
            table.AddRow("[bold]committed readings/s[/]", $"[bold]{ReadingsPerSecond:N0}[/]");
            table.AddRow("rows counted in the database", $"{stored:N0}{(deadLetters > 0 ? $" (+{deadLetters} dead letters)" : string.Empty)}");
            table.AddRow("publish-to-ack p50 / p99 / p99.9 / max ms", $"{F(_p50)} / {F(_p99)} / {F(_p999)} / {F(_max)}");
            table.AddRow("Saito RSS first / max / last MiB", $"{Rss.First() / 1048576.0:N0} / {Rss.Max() / 1048576.0:N0} / {Rss.Last() / 1048576.0:N0}");
            if (mosquitto is not null)
            {
                table.AddRow("Mosquitto, same load, accepted in memory: readings/s", $"{MosquittoReadingsPerSecond:N0} (ack p99 {F(mosquitto.LatencyMs(0.99))} ms, {F(mosquitto.Cores.Process)} cores, tool {F(mosquitto.Cores.Tool)}, rest {F(mosquitto.Cores.Rest)})");
                table.AddRow("[bold]Saito committed / Mosquitto accepted[/]", $"[bold]{ReadingsPerSecond / MosquittoReadingsPerSecond:F2}x[/]");
            }

            table.AddRow("cores: Saito / PostgreSQL / load tool / rest / machine",
                $"{F(r.Cores.Process)} / {F(r.Cores.Postgres)} / {F(r.Cores.Tool)} / {F(r.Cores.Rest)} / {F(r.Cores.Machine)}");
            var costs = Costs();
            table.AddRow("CPU µs per reading: Saito / PostgreSQL / load tool / sum",
                $"{F(costs.Saito)} / {F(costs.Postgres)} / {F(costs.Tool)} / {F(costs.Sum)}");
            if (mosquitto is not null)
            {
                table.AddRow("Mosquitto arm, CPU µs per reading: broker / load tool",
                    $"{F(CpuBudget.MicrosPerReading(mosquitto.Cores.Process, MosquittoReadingsPerSecond))} / {F(CpuBudget.MicrosPerReading(mosquitto.Cores.Tool, MosquittoReadingsPerSecond))}");
                table.AddRow("cores 0.8x Mosquitto's rate takes at these costs",
                    $"{F(CoresForTarget)} of {Environment.ProcessorCount} ({0.8 * MosquittoReadingsPerSecond:N0} readings/s x {F(costs.Sum)} µs)");
            }

            AnsiConsole.Write(table);

            AnsiConsole.MarkupLine(AllStored
                ? $"[green]Every acknowledged reading is stored[/] ({stored:N0} rows >= {r.AckedReadings:N0} acknowledged)."
                : $"[red]Stored {stored:N0} rows for {r.AckedReadings:N0} acknowledged readings; dead letters {deadLetters}{Markup.Escape(firstDeadLetter is null ? string.Empty : " (" + firstDeadLetter + ")")}.[/]");
            if (!AllAcked)
            {
                AnsiConsole.MarkupLine($"[red]{r.SentMessages - r.AckedMessages:N0} messages were not acknowledged within {s.DrainTimeout.TotalSeconds:F0} s of the end.[/]");
            }

            foreach (var verdict in Verdicts())
            {
                AnsiConsole.MarkupLine(verdict.Met ? $"[green]target met[/]: {Markup.Escape(verdict.Text)}" : $"[red]target missed[/]: {Markup.Escape(verdict.Text)}");
            }
        }

        private IEnumerable<(bool Met, string Text)> Verdicts()
        {
            if (mosquitto is not null)
            {
                double ratio = ReadingsPerSecond / MosquittoReadingsPerSecond;
                yield return (ratio >= 0.8, $"Saito committed {ratio:F2}x the rate Mosquitto accepted the same load ({ReadingsPerSecond:N0} against {MosquittoReadingsPerSecond:N0} readings/s; target >= 0.8x)");
            }

            if (preset is null)
            {
                yield break;
            }

            if (preset.TargetReadingsPerSecond is { } target)
            {
                yield return (ReadingsPerSecond >= target, $"{ReadingsPerSecond:N0} committed readings/s against >= {target:N0} ({ReadingsPerSecond / target:P0})");
            }

            if (preset.TargetP99Ms is { } p99)
            {
                yield return (_p99 < p99, $"p99 publish-to-ack {_p99:F1} ms against < {p99:N0} ms");
            }

            if (preset.FlatMemory)
            {
                var (flat, thirdMiB, endMiB) = Flatness();
                yield return (flat, $"RSS {thirdMiB:N0} MiB a third of the way in, {endMiB:N0} MiB at the end, max {Rss.Max() / 1048576.0:N0} MiB " +
                    $"over {r.Seconds / 60:F1} min (flat: within 10%)");
            }
        }

        public async Task WriteAsync(string dir, CancellationToken token)
        {
            var (flat, thirdMiB, endMiB) = Flatness();
            var costs = Costs();
            var json = new
            {
                command = "ingest",
                preset = preset?.Name,
                generator,
                database = database.ToString().ToLowerInvariant(),
                machine,
                load,
                connections = s.Connections,
                readings_per_message = s.ReadingsPerMessage,
                devices_per_connection = s.DevicesPerConnection,
                rate_per_connection = s.Rate,
                inflight = s.Inflight,
                qos = (int)s.QoS,
                seconds = r.Seconds,
                sent_messages = r.SentMessages,
                acked_messages = r.AckedMessages,
                acked_readings = r.AckedReadings,
                committed_readings_per_s = ReadingsPerSecond,
                stored_rows = stored,
                dead_letters = deadLetters,
                every_acked_reading_stored = AllStored,
                ack_p50_ms = _p50,
                ack_p99_ms = _p99,
                ack_p999_ms = _p999,
                ack_max_ms = _max,
                rss_first_mib = Rss.First() / 1048576.0,
                rss_max_mib = Rss.Max() / 1048576.0,
                rss_last_mib = Rss.Last() / 1048576.0,
                rss_third_mib = thirdMiB,
                rss_end_mib = endMiB,
                rss_flat = flat,
                saito_cores = r.Cores.Process,
                postgres_cores = r.Cores.Postgres,
                tool_cores = r.Cores.Tool,
                rest_cores = r.Cores.Rest,
                machine_cores = r.Cores.Machine,
                mosquitto_accepted_readings_per_s = mosquitto is null ? (double?)null : MosquittoReadingsPerSecond,
                mosquitto_ack_p99_ms = mosquitto is null ? (double?)null : mosquitto.LatencyMs(0.99),
                mosquitto_cores = mosquitto?.Cores.Process,
                mosquitto_tool_cores = mosquitto?.Cores.Tool,
                // Whether the reference had the machine: what everything else took while Mosquitto ran.
                mosquitto_rest_cores = mosquitto?.Cores.Rest,
                mosquitto_machine_cores = mosquitto?.Cores.Machine,
                ratio_to_mosquitto = mosquitto is null ? (double?)null : ReadingsPerSecond / MosquittoReadingsPerSecond,
                cpu_us_per_reading = new { saito = costs.Saito, postgres = costs.Postgres, tool = costs.Tool, sum = costs.Sum },
                mosquitto_cpu_us_per_reading = mosquitto is null ? null : new
                {
                    broker = CpuBudget.MicrosPerReading(mosquitto.Cores.Process, MosquittoReadingsPerSecond),
                    tool = CpuBudget.MicrosPerReading(mosquitto.Cores.Tool, MosquittoReadingsPerSecond),
                },
                cores_for_target = mosquitto is null ? (double?)null : CoresForTarget,
                processor_count = Environment.ProcessorCount,
                targets = Verdicts().Select(v => new { met = v.Met, v.Text }),
            };
            await File.WriteAllTextAsync(Path.Combine(dir, "results.json"), JsonSerializer.Serialize(json, s_json), token);

            var csv = new StringBuilder("seconds,acked_readings,readings_per_s,rss_mib,saito_cores,postgres_cores,tool_cores,rest_cores,machine_cores\n");
            for (int i = 1; i < r.Samples.Count; i++)
            {
                var a = r.Samples[i - 1];
                var b = r.Samples[i];
                double dt = b.Seconds - a.Seconds;
                if (dt <= 0)
                {
                    continue;
                }

                var use = new CpuUse((b.ServerCpuSeconds - a.ServerCpuSeconds) / dt, (b.ToolCpuSeconds - a.ToolCpuSeconds) / dt,
                    (b.PostgresCpuSeconds - a.PostgresCpuSeconds) / dt, (b.MachineBusySeconds - a.MachineBusySeconds) / dt);
                csv.Append(CultureInfo.InvariantCulture,
                    $"{b.Seconds:F1},{b.AckedReadings},{(b.AckedReadings - a.AckedReadings) / dt:F0},{b.ResidentBytes / 1048576.0:F1},{use.Process:F2},{use.Postgres:F2},{use.Tool:F2},{use.Rest:F2},{use.Machine:F2}\n");
            }

            await File.WriteAllTextAsync(Path.Combine(dir, "samples.csv"), csv.ToString(), token);
            await File.WriteAllTextAsync(Path.Combine(dir, "chart.svg"), IngestChart.Render(r.Samples, $"ingest {database.ToString().ToLowerInvariant()} {preset?.Name}: {load}"), token);
        }

        private static string F(double value) => double.IsNaN(value) ? "-" : value.ToString("F2", CultureInfo.InvariantCulture);
    }
}

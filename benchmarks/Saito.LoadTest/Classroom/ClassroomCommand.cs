using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.LoadTest.Ingest;
using Saito.LoadTest.Results;
using Saito.Mqtt.Packets;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;
using Spectre.Console;

namespace Saito.LoadTest.Classroom;

/// <summary>
/// <c>classroom</c>: a simulated class publishing over MQTT, as the study's classroom would (students x sensors x
/// readings a second), measured from publish to committed row.
/// <para>
/// The class: per student a hub and a wristband, location tags on an over-garment and pressure cells in the chair
/// seat and a foot mat; <see cref="ClassroomLayout.Split"/> says how the sensors are spread (20: 1 + 6 + 9 + 4) and
/// <see cref="ClassroomValues"/> what they read (seeded, so runs repeat). One MQTT connection per hub
/// (<c>--connection hub</c>, as docs/protocol.md recommends) or per sensor; one reading per message, or a device's
/// readings batched into arrays (<c>--readings-per-message</c>).
/// </para>
/// <para>
/// The broker: by default the tool starts Saito.Server (embedded broker) on a fresh SQLite folder or PostgreSQL
/// database; with <c>--broker host:port</c> it publishes to any broker (say a Mosquitto that a Saito in external
/// mode consumes from), and <c>--db</c> with <c>--pg</c> (that Saito's database) or <c>--sqlite-hot</c> (its hot
/// folder or file) says where the rows land.
/// </para>
/// <para>
/// What it reports, and how latency is measured. Every reading's <c>ts</c> is the time its tick was due (the
/// publish time; a batched reading waits in its hub until the batch is full, and its latency counts from when the
/// batch's message was due). Commit time is observed, never taken from the database's own clocks:
/// <list type="bullet">
/// <item>Against the Saito.Server the tool started, at QoS 1/2: publish to PUBACK/PUBREC. Saito sends it only once
/// the message's readings are committed (docs/durability.md), so it is publish-to-commit, to the acknowledgement's
/// arrival.</item>
/// <item>At QoS 0, and always with <c>--broker</c> (a broker's PUBACK only says it has the message): the database
/// poller (<see cref="ClassroomPoller"/>), which reads every <c>--poll-ms</c> which readings are committed; a reading
/// counts from the start of the first poll that sees it (and every earlier reading of its sensor): an upper bound,
/// high by at most one poll interval.</item>
/// </list>
/// The poller runs in every mode: it gives the committed rate over time (rows of the run counted at every poll) and,
/// where PUBACK is the measure, a second opinion on latency. At the end the tool checks that every acknowledged
/// reading (QoS 1/2) is in the database, and exits 1 if one is missing, a message went unacknowledged, a reading
/// became a dead letter or the run failed. At QoS 0 losses are reported, not failed.
/// </para>
/// </summary>
internal static class ClassroomCommand
{
    /// <summary>The small class <c>--quick</c> runs, for smoke tests (options given explicitly still win).</summary>
    private static readonly (int Students, int Sensors, double Rate, int Seconds) s_quick = (4, 5, 4, 3);

    public static Command Create()
    {
        var students = new Option<int?>("--students") { Description = "Students in the class (default 16)" };
        var sensors = new Option<int?>("--sensors") { Description = "Sensors per student (default 20: 1 wristband, 6 garment location tags, 9 seat cells, 4 foot-mat cells)" };
        var rate = new Option<double?>("--rate") { Description = "Readings per second of each sensor, Hz (default 4)" };
        var duration = new Option<int?>("--duration") { Description = "Seconds to publish (default 60)" };
        var qos = new Option<int>("--qos") { Description = "0, 1 or 2", DefaultValueFactory = _ => 1 };
        qos.AcceptOnlyFromAmong("0", "1", "2");
        var perMessage = new Option<int>("--readings-per-message") { Description = "Readings in a message: 1 is one JSON object; more is an array of one device's readings", DefaultValueFactory = _ => 1 };
        var connection = new Option<string>("--connection") { Description = "hub: one MQTT connection per student's hub; sensor: one per sensor", DefaultValueFactory = _ => "hub" };
        connection.AcceptOnlyFromAmong("hub", "sensor");
        var version = new Option<string>("--mqtt") { Description = "Protocol: 3.1.1 or 5", DefaultValueFactory = _ => "3.1.1" };
        version.AcceptOnlyFromAmong("3.1.1", "5", "5.0");
        var inflight = new Option<int>("--inflight") { Description = "QoS 1/2 messages unacknowledged per connection, at most", DefaultValueFactory = _ => 100 };
        var seed = new Option<int>("--seed") { Description = "Seed of the simulated class (same seed, same readings)", DefaultValueFactory = _ => 1 };
        var broker = new Option<string?>("--broker") { Description = "host:port of a broker to publish to instead of starting Saito.Server (then --db with --pg or --sqlite-hot say where Saito stores)" };
        var db = new Option<string>("--db") { Description = "sqlite or postgres", DefaultValueFactory = _ => "sqlite" };
        db.AcceptOnlyFromAmong("sqlite", "postgres");
        var pg = new Option<string?>("--pg") { Description = "PostgreSQL: a server where the tool may create a database (default env SAITO_BENCH_POSTGRES); with --broker, the database Saito writes" };
        var sqliteHot = new Option<string?>("--sqlite-hot") { Description = "With --broker and --db sqlite: Saito's Storage:HotPath folder (or its saito-hot.db)" };
        var key = new Option<string>("--key") { Description = "Key strategy: natural, guid or sequential-guid (the server's; with --broker, the one it uses)", DefaultValueFactory = _ => "natural" };
        key.AcceptOnlyFromAmong("natural", "guid", "sequential-guid");
        var synchronous = new Option<string>("--synchronous") { Description = "SQLite: full or normal", DefaultValueFactory = _ => "full" };
        synchronous.AcceptOnlyFromAmong("full", "normal");
        var pollMs = new Option<int>("--poll-ms") { Description = "Milliseconds between polls of the database for committed readings", DefaultValueFactory = _ => 100 };
        var sampleSeconds = new Option<double>("--sample-seconds") { Description = "Seconds per timeline point", DefaultValueFactory = _ => 1 };
        var drain = new Option<int>("--drain-seconds") { Description = "Seconds to wait at the end for acknowledgements and commits that do not come", DefaultValueFactory = _ => 30 };
        var serverArgs = new Option<string[]>("--server-arg") { Description = "Extra Saito.Server setting, Section:Key=value (repeatable)" };
        var serverDll = new Option<string?>("--server") { Description = "Saito.Server.dll to run (default: src/Saito.Server/bin/Release/net10.0)" };
        var work = new Option<string?>("--work") { Description = "Folder for the SQLite files (default: under the temp directory, deleted after)" };
        var keep = new Option<bool>("--keep") { Description = "Keep the database (SQLite files or PostgreSQL database) afterwards" };
        var quick = new Option<bool>("--quick") { Description = $"A smoke test: {s_quick.Students} students x {s_quick.Sensors} sensors x {s_quick.Rate} Hz for {s_quick.Seconds} s" };
        var outDir = new Option<string?>("--out") { Description = "Folder for results.json, results.csv (ReportWriter), classroom.json and server.log" };

        var command = new Command("classroom", "A simulated class publishing over MQTT: publish rate, committed rate and publish-to-commit latency.")
        {
            students, sensors, rate, duration, qos, perMessage, connection, version, inflight, seed, broker, db, pg, sqliteHot, key, synchronous,
            pollMs, sampleSeconds, drain, serverArgs, serverDll, work, keep, quick, outDir,
        };
        command.SetAction(async (parse, token) =>
        {
            bool isQuick = parse.GetValue(quick);
            var settings = new ClassroomSettings(
                parse.GetValue(students) ?? (isQuick ? s_quick.Students : 16),
                parse.GetValue(sensors) ?? (isQuick ? s_quick.Sensors : 20),
                parse.GetValue(rate) ?? (isQuick ? s_quick.Rate : 4),
                TimeSpan.FromSeconds(parse.GetValue(duration) ?? (isQuick ? s_quick.Seconds : 60)),
                (MqttQoS)parse.GetValue(qos),
                parse.GetValue(perMessage),
                parse.GetValue(connection) == "sensor",
                parse.GetValue(version) is "5" or "5.0" ? MqttProtocolVersion.V500 : MqttProtocolVersion.V311,
                parse.GetValue(inflight),
                parse.GetValue(seed),
                TimeSpan.FromMilliseconds(parse.GetValue(pollMs)),
                TimeSpan.FromSeconds(parse.GetValue(sampleSeconds)),
                TimeSpan.FromSeconds(parse.GetValue(drain)));
            var options = new RunOptions(
                parse.GetValue(db) == "postgres" ? StorageProvider.Postgres : StorageProvider.Sqlite,
                parse.GetValue(pg) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES"),
                parse.GetValue(broker), parse.GetValue(sqliteHot), parse.GetValue(key) ?? "natural",
                parse.GetValue(synchronous) == "normal" ? SqliteSynchronous.Normal : SqliteSynchronous.Full,
                parse.GetValue(serverArgs) ?? [], parse.GetValue(serverDll), parse.GetValue(work), parse.GetValue(keep), parse.GetValue(outDir),
                BenchOptions.CommandLine(parse, "classroom"));
            if (Validate(settings, options) is { } problem)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(problem)}[/]");
                return 2;
            }

            return await RunAsync(settings, options, token);
        });
        return command;
    }

    private sealed record RunOptions(StorageProvider Database, string? Postgres, string? Broker, string? SqliteHot, string Key, SqliteSynchronous Synchronous,
        string[] ServerArgs, string? ServerDll, string? Work, bool Keep, string? OutDir, string CommandLine)
    {
        public KeyStrategy KeyStrategy => Key switch
        {
            "guid" => KeyStrategy.Guid,
            "sequential-guid" => KeyStrategy.SequentialGuid,
            _ => KeyStrategy.Natural,
        };

        public string DbName => Database == StorageProvider.Postgres ? "postgres" : "sqlite";
    }

    private static string? Validate(ClassroomSettings s, RunOptions o)
    {
        if (s.Students < 1 || s.SensorsPerStudent < 1)
        {
            return "--students and --sensors must be at least 1.";
        }

        if (!(s.Rate > 0) || s.Rate > 1000)
        {
            return "--rate must be above 0 and at most 1000 Hz.";
        }

        if (s.ReadingsPerMessage is < 1 or > 10_000)
        {
            return "--readings-per-message must be 1 to 10,000 (Saito's Ingestion:MaxReadingsPerMessage).";
        }

        if (s.Inflight is < 1 or > 60_000)
        {
            return "--inflight must be 1 to 60,000.";
        }

        if (s.Duration <= TimeSpan.Zero || s.PollInterval <= TimeSpan.Zero || s.SampleInterval <= TimeSpan.Zero)
        {
            return "--duration, --poll-ms and --sample-seconds must be above 0.";
        }

        if (o.Broker is not null && ParseBroker(o.Broker) is null)
        {
            return $"--broker must be host:port (was '{o.Broker}').";
        }

        if (o.Database == StorageProvider.Postgres && string.IsNullOrWhiteSpace(o.Postgres))
        {
            return "--db postgres needs --pg <connection string> (or SAITO_BENCH_POSTGRES).";
        }

        if (o.Broker is not null && o.Database == StorageProvider.Sqlite && string.IsNullOrWhiteSpace(o.SqliteHot))
        {
            return "--broker with --db sqlite needs --sqlite-hot <Saito's Storage:HotPath>, so the tool can read committed rows back.";
        }

        return null;
    }

    private static (string Host, int Port)? ParseBroker(string text)
    {
        int colon = text.LastIndexOf(':');
        return colon > 0 && int.TryParse(text.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port is > 0 and < 65536
            ? (text[..colon], port)
            : null;
    }

    private static async Task<int> RunAsync(ClassroomSettings s, RunOptions o, CancellationToken token)
    {
        var startedAt = DateTimeOffset.UtcNow;
        string run = "cr" + startedAt.ToString("MMddHHmmssfff", CultureInfo.InvariantCulture);
        var layout = ClassroomLayout.Create(run, s.Students, s.SensorsPerStudent);
        bool external = o.Broker is not null;
        // PUBACK is publish-to-commit only from the Saito the tool started (it acknowledges after the commit).
        bool latencyFromAcks = !external && s.QoS != MqttQoS.AtMostOnce;
        string machine = await DescribeMachineAsync(o, token);
        string load = Describe(s, layout);
        AnsiConsole.MarkupLine($"[bold]classroom {o.DbName}[/]: {Markup.Escape(load)}");
        AnsiConsole.MarkupLine(Markup.Escape(machine));

        string dbName = PostgresTools.Name("classroom");
        string workDir = o.Work ?? Path.Combine(Path.GetTempPath(), $"saito-classroom-db-{Environment.ProcessId}");
        string logPath = o.OutDir is not null ? Path.Combine(o.OutDir, "server.log") : Path.Combine(Path.GetTempPath(), $"saito-classroom-{Environment.ProcessId}-server.log");
        bool created = false;
        ClassroomLoadResult result;
        long? storeCount = null;
        (long Count, string? Newest) deadLetters;
        try
        {
            var storage = new StorageOptions { Provider = o.Database, KeyStrategy = o.KeyStrategy };
            ClassroomDatabase database;
            SaitoServerProcess? server = null;
            try
            {
                if (external)
                {
                    database = o.Database == StorageProvider.Postgres
                        ? new ClassroomDatabase(o.Database, o.Postgres, null, o.KeyStrategy)
                        : new ClassroomDatabase(o.Database, null, HotFile(o.SqliteHot!), o.KeyStrategy);
                }
                else
                {
                    var storageArgs = new List<string> { $"--Storage:Provider={o.DbName}", $"--Storage:KeyStrategy={o.Key}" };
                    if (o.Database == StorageProvider.Postgres)
                    {
                        storage.ConnectionString = await PostgresDatabases.CreateAsync(o.Postgres!, dbName, token);
                        created = true;
                        storageArgs.Add($"--Storage:ConnectionString={storage.ConnectionString}");
                    }
                    else
                    {
                        LocalServers.UseFreshSqlite(storage, storageArgs, workDir, o.Synchronous);
                        created = true;
                    }

                    server = await LocalServers.StartSaitoAsync(o.ServerDll, storageArgs, o.ServerArgs.Select(a => "--" + a), [], logPath, TimeSpan.FromSeconds(120), token);
                    AnsiConsole.MarkupLine($"Saito.Server pid {server.Pid}, MQTT on 127.0.0.1:{server.Port}, log {Markup.Escape(logPath)}");
                    database = new ClassroomDatabase(o.Database, storage.ConnectionString, Path.Combine(storage.HotPath, SqliteSchema.HotFileName), o.KeyStrategy);
                }

                var (host, port) = external ? ParseBroker(o.Broker!)!.Value : ("127.0.0.1", server!.Port);
                await using var poller = await ClassroomPoller.OpenAsync(database, layout, token);
                result = await ClassroomLoad.RunAsync(s, layout, host, port, poller, latencyFromAcks, server?.Pid, token);
                if (server is { HasExited: true })
                {
                    throw new InvalidOperationException($"Saito.Server exited during the run; see {server.LogPath}");
                }

                deadLetters = await poller.DeadLettersAsync(token);
                if (server is not null)
                {
                    // Saito's own count, with the server still up (the database holds only this run's rows).
                    using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning));
                    await using var store = ReadingStores.Create(storage, loggers);
                    long total = 0;
                    foreach (var kind in ReadingKinds.All)
                    {
                        total += await store.CountAsync(kind, StorageTier.Hot, token);
                    }

                    storeCount = total;
                }
            }
            finally
            {
                if (server is not null)
                {
                    await server.DisposeAsync();
                }
            }
        }
        finally
        {
            if (created && !o.Keep)
            {
                if (o.Database == StorageProvider.Postgres)
                {
                    await PostgresDatabases.DropAsync(o.Postgres!, dbName, CancellationToken.None);
                }
                else if (Directory.Exists(workDir))
                {
                    Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
                    Directory.Delete(workDir, recursive: true);
                }
            }
        }

        var report = new ClassroomReport(s, o, layout, result, latencyFromAcks, external, storeCount, deadLetters, machine, load);
        report.Print();
        if (o.OutDir is not null)
        {
            var files = await ReportWriter.WriteAsync(o.OutDir, [report.Row()], new RunContext("classroom", o.CommandLine, machine, startedAt), token);
            await File.WriteAllTextAsync(Path.Combine(o.OutDir, "classroom.json"), JsonSerializer.Serialize(report.Details(), ReportWriter.Json), token);
            foreach (string warning in files.Warnings)
            {
                AnsiConsole.MarkupLine($"[yellow]{Markup.Escape(warning)}[/]");
            }

            AnsiConsole.MarkupLine($"Results in {Markup.Escape(o.OutDir)}: {Markup.Escape(string.Join(", ", files.Written.Select(Path.GetFileName).Append("classroom.json")))}");
        }

        return report.Passed ? 0 : 1;
    }

    private static string HotFile(string path) => Directory.Exists(path) ? Path.Combine(path, SqliteSchema.HotFileName) : path;

    private static string Describe(ClassroomSettings s, ClassroomLayout layout)
    {
        var (wrist, garment, seat, foot) = ClassroomLayout.Split(s.SensorsPerStudent);
        int connections = s.PerSensor ? layout.Sensors.Count : s.Students;
        double offered = layout.Sensors.Count * s.Rate;
        return string.Create(CultureInfo.InvariantCulture,
            $"{s.Students} students x {s.SensorsPerStudent} sensors ({wrist} wristband, {garment} garment tags, {seat} seat cells, {foot} foot cells) x {s.Rate:G} Hz " +
            $"= {offered:N0} readings/s offered, {s.ReadingsPerMessage} reading(s)/message, {connections} connections (one per {(s.PerSensor ? "sensor" : "hub")}), " +
            $"QoS {(int)s.QoS}, MQTT {(s.Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1")}, {s.Duration.TotalSeconds:F0} s, seed {s.Seed}");
    }

    private static async Task<string> DescribeMachineAsync(RunOptions o, CancellationToken token)
    {
        string cpu = (await File.ReadAllLinesAsync("/proc/cpuinfo", token)).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "?";
        string text = $"{Environment.ProcessorCount} cores ({cpu}), .NET {Environment.Version}";
        if (o.Database == StorageProvider.Postgres)
        {
            text += ", PostgreSQL " + await PostgresTools.DescribeAsync(o.Postgres!, token);
        }
        else if (o.Broker is null)
        {
            text += $", SQLite synchronous={o.Synchronous.ToString().ToLowerInvariant()}";
        }

        return text + (o.Broker is null ? ", Saito.Server embedded broker" : $", broker {o.Broker}");
    }

    /// <summary>What one run found: a table for a person, a <see cref="ResultRow"/> and classroom.json.</summary>
    private sealed class ClassroomReport(ClassroomSettings s, RunOptions o, ClassroomLayout layout, ClassroomLoadResult r, bool latencyFromAcks, bool external,
        long? storeCount, (long Count, string? Newest) deadLetters, string machine, string load)
    {
        private readonly long[] _latency = latencyFromAcks ? r.AckLatencyTicks : r.SeenLatencyTicks;

        private bool Acknowledging => s.QoS != MqttQoS.AtMostOnce;

        /// <summary>Readings that had to be stored: acknowledged ones at QoS 1/2 (published ones at QoS 0, not failed on).</summary>
        private long Expected => Acknowledging ? r.AckedReadings : r.SentReadings;

        private bool AllAcked => !Acknowledging || (r.AckedMessages == r.SentMessages && r.RefusedMessages == 0);

        private bool AllCommitted => r.Committed >= Expected && (storeCount is null || storeCount >= Expected);

        public bool Passed => deadLetters.Count == 0 && (!Acknowledging || (AllAcked && AllCommitted));

        private string LatencySource => latencyFromAcks
            ? "publish to PUBACK/PUBREC from Saito's embedded broker (sent only after the commit)"
            : $"publish to first seen committed by the database poller (every {s.PollInterval.TotalMilliseconds:F0} ms; an upper bound, high by up to one interval)";

        private string Method => $"qos{(int)s.QoS}-{(s.PerSensor ? "sensor" : "hub")}" + (s.ReadingsPerMessage > 1 ? $"-x{s.ReadingsPerMessage}" : string.Empty)
            + (s.Version == MqttProtocolVersion.V500 ? "-mqtt5" : string.Empty);

        private static double? Ms(long[] ticks, double p) => ticks.Length == 0 ? null : IngestLoad.Percentile(ticks, p);

        private static string F(double? value) => value is { } v ? v.ToString("F1", CultureInfo.InvariantCulture) : "-";

        public ResultRow Row() => new()
        {
            Command = "classroom",
            Op = "publish",
            Db = o.DbName,
            Tier = "default",
            Key = o.Key,
            Threads = r.Connections,
            Method = Method,
            Rows = r.Committed,
            Seconds = Math.Round(r.Seconds, 3),
            P50Ms = Ms(_latency, 0.50),
            P99Ms = Ms(_latency, 0.99),
            MaxMs = Ms(_latency, 1.0),
            Timeline = r.Timeline,
            Note = string.Create(CultureInfo.InvariantCulture,
                $"{layout.Students} students x {layout.SensorsPerStudent} sensors x {s.Rate:G} Hz, {s.ReadingsPerMessage}/message; published {r.SentReadings / r.PublishSeconds:N0} readings/s; " +
                $"latency: {(latencyFromAcks ? "publish-to-PUBACK" : "publish-to-seen-in-db")}"),
        };

        public object Details()
        {
            var (wrist, garment, seat, foot) = ClassroomLayout.Split(layout.SensorsPerStudent);
            return new
            {
                command = "classroom",
                run = layout.Run,
                machine,
                load,
                broker = o.Broker ?? "saito-embedded",
                db = o.DbName,
                key = o.Key,
                students = layout.Students,
                sensors_per_student = layout.SensorsPerStudent,
                sensor_split = new { wrist, garment, seat, foot },
                rate_hz = s.Rate,
                qos = (int)s.QoS,
                readings_per_message = s.ReadingsPerMessage,
                connection = s.PerSensor ? "sensor" : "hub",
                connections = r.Connections,
                mqtt = s.Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1",
                seed = s.Seed,
                duration_s = s.Duration.TotalSeconds,
                published_messages = r.SentMessages,
                published_readings = r.SentReadings,
                publish_seconds = r.PublishSeconds,
                published_messages_per_s = r.SentMessages / r.PublishSeconds,
                published_readings_per_s = r.SentReadings / r.PublishSeconds,
                acked_messages = r.AckedMessages,
                acked_readings = r.AckedReadings,
                refused_messages = r.RefusedMessages,
                committed_readings = r.Committed,
                committed_seconds = r.Seconds,
                committed_readings_per_s = r.Committed / r.Seconds,
                store_count = storeCount,
                dead_letters = deadLetters.Count,
                newest_dead_letter = deadLetters.Newest,
                latency_source = latencyFromAcks ? "puback" : "db-poller",
                latency = new { p50_ms = Ms(_latency, 0.50), p99_ms = Ms(_latency, 0.99), max_ms = Ms(_latency, 1.0), readings = _latency.Length },
                ack_latency = new { p50_ms = Ms(r.AckLatencyTicks, 0.50), p99_ms = Ms(r.AckLatencyTicks, 0.99), max_ms = Ms(r.AckLatencyTicks, 1.0), readings = r.AckLatencyTicks.Length },
                db_latency = new { p50_ms = Ms(r.SeenLatencyTicks, 0.50), p99_ms = Ms(r.SeenLatencyTicks, 0.99), max_ms = Ms(r.SeenLatencyTicks, 1.0), readings = r.SeenLatencyTicks.Length },
                poll_ms = s.PollInterval.TotalMilliseconds,
                polls = r.Polls,
                poll_mean_ms = r.PollMilliseconds.Mean,
                poll_max_ms = r.PollMilliseconds.Max,
                saito_cores = r.Cores.Process,
                postgres_cores = r.Cores.Postgres,
                tool_cores = r.Cores.Tool,
                machine_cores = r.Cores.Machine,
                passed = Passed,
            };
        }

        public void Print()
        {
            var table = new Table().AddColumns("measure", "value");
            table.AddRow("published messages / readings", $"{r.SentMessages:N0} / {r.SentReadings:N0} in {r.PublishSeconds:F1} s");
            table.AddRow("[bold]publish rate[/]", $"[bold]{r.SentMessages / r.PublishSeconds:N0} messages/s, {r.SentReadings / r.PublishSeconds:N0} readings/s[/]");
            if (Acknowledging)
            {
                table.AddRow(external ? "acknowledged by the broker (messages / readings)" : "acknowledged = committed (messages / readings)",
                    $"{r.AckedMessages:N0} / {r.AckedReadings:N0}{(r.RefusedMessages > 0 ? $", {r.RefusedMessages:N0} refused" : string.Empty)}");
            }

            table.AddRow("committed readings (read back from the database)",
                $"{r.Committed:N0}{(storeCount is { } c ? $" (IReadingStore.CountAsync: {c:N0})" : string.Empty)}{(deadLetters.Count > 0 ? $", {deadLetters.Count:N0} dead letters" : string.Empty)}");
            table.AddRow("[bold]committed rate[/]", $"[bold]{r.Committed / r.Seconds:N0} readings/s[/] (to the last commit, {r.Seconds:F1} s)");
            table.AddRow("[bold]publish-to-commit p50 / p99 / max ms[/]", $"[bold]{F(Ms(_latency, 0.50))} / {F(Ms(_latency, 0.99))} / {F(Ms(_latency, 1.0))}[/]");
            table.AddRow("  measured as", Markup.Escape(LatencySource));
            if (latencyFromAcks)
            {
                table.AddRow("  cross-check: seen by the poller p50 / p99 / max ms",
                    $"{F(Ms(r.SeenLatencyTicks, 0.50))} / {F(Ms(r.SeenLatencyTicks, 0.99))} / {F(Ms(r.SeenLatencyTicks, 1.0))} (every {s.PollInterval.TotalMilliseconds:F0} ms)");
            }
            else if (Acknowledging)
            {
                table.AddRow("  publish to the broker's ack (not a commit) p50 / p99 / max ms",
                    $"{F(Ms(r.AckLatencyTicks, 0.50))} / {F(Ms(r.AckLatencyTicks, 0.99))} / {F(Ms(r.AckLatencyTicks, 1.0))}");
            }

            table.AddRow("database polls", $"{r.Polls:N0}, {r.PollMilliseconds.Mean:F1} ms mean, {r.PollMilliseconds.Max:F1} ms max");
            table.AddRow("cores: Saito / PostgreSQL / load tool / machine",
                $"{(external ? "-" : r.Cores.Process.ToString("F2", CultureInfo.InvariantCulture))} / {r.Cores.Postgres:F2} / {r.Cores.Tool:F2} / {r.Cores.Machine:F2}");
            AnsiConsole.Write(table);

            if (deadLetters.Count > 0)
            {
                AnsiConsole.MarkupLine($"[red]{deadLetters.Count:N0} readings became dead letters[/]: {Markup.Escape(deadLetters.Newest ?? string.Empty)}");
            }

            if (!Acknowledging)
            {
                AnsiConsole.MarkupLine(r.Committed >= r.SentReadings
                    ? "[green]Every published reading is stored[/] (QoS 0)."
                    : $"[yellow]QoS 0: {r.SentReadings - r.Committed:N0} of {r.SentReadings:N0} published readings were not stored (at most once; not a failure).[/]");
                return;
            }

            if (!AllAcked)
            {
                AnsiConsole.MarkupLine($"[red]{r.SentMessages - r.AckedMessages:N0} messages were not acknowledged within {s.DrainTimeout.TotalSeconds:F0} s, {r.RefusedMessages:N0} refused.[/]");
            }

            AnsiConsole.MarkupLine(AllCommitted
                ? $"[green]Every acknowledged reading is stored[/] ({r.Committed:N0} committed, {r.AckedReadings:N0} acknowledged)."
                : $"[red]Only {r.Committed:N0} of {r.AckedReadings:N0} acknowledged readings were found in the database.[/]");
        }
    }
}

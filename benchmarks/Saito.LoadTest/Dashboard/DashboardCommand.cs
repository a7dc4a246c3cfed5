using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using Saito.LoadTest.Classroom;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Sqlite;
using Spectre.Console;

namespace Saito.LoadTest.Dashboard;

/// <summary>
/// <c>dashboard</c>: the <c>classroom</c> load (students x sensors x Hz over MQTT, QoS 1, one connection per hub)
/// into a Saito.Server the tool starts, first with no dashboard open, then with N live class pages open in chromium,
/// back to back. It reports the committed rate of each run (the classroom machinery: <see cref="ClassroomLoad"/>, PUBACK
/// sent only after the commit, every acknowledged reading read back by <see cref="ClassroomPoller"/>), their ratio,
/// and, from the pages, publish-to-tile latency: each page's <c>window.saitoTileLatency</c>, the ms from a biosensor
/// reading's <c>ts</c> (its publish time) to the moment its tile was rendered with it.
/// <para>
/// Setup, as an admin would do it: <c>Saito.Server.dll users add</c> (before the server starts), then through the API
/// the students, a class with a slot around now, its roster and today's session (<see cref="SaitoApi"/>). Each run has
/// its own devices (serials named after the run, so the poller counts that run's rows only), added by hand and assigned
/// to the students before it starts and retired after it, so the live view does the same work in every run. A short
/// warm-up run (devices not assigned) comes first and is not reported.
/// </para>
/// <para>
/// Exit 1 when a run failed (a reading not acknowledged or not stored, a dead letter, a dashboard that got no update or
/// a tile that never showed the run's readings, Saito exiting); missing a target is reported, not failed.
/// </para>
/// </summary>
internal static class DashboardCommand
{
    public const double P99TargetMs = 500;
    public const double RatioTarget = 0.9;
    private const string AdminName = "bench-admin";
    private static readonly (int Students, int Sensors, double Rate, int Seconds, int Dashboards, int Warmup) s_quick = (4, 5, 4, 3, 2, 1);

    public static Command Create()
    {
        var dashboards = new Option<int?>("--dashboards") { Description = "Live class pages open in the second run (default 10)" };
        var duration = new Option<int?>("--duration") { Description = "Seconds each run publishes (default 30)" };
        var students = new Option<int?>("--students") { Description = "Students in the class (default 16)" };
        var sensors = new Option<int?>("--sensors") { Description = "Sensors per student (default 20: 1 wristband, 6 garment tags, 9 seat cells, 4 foot cells)" };
        var rate = new Option<double?>("--rate") { Description = "Readings per second of each sensor, Hz (default 4)" };
        var rounds = new Option<int>("--rounds") { Description = "1: without, with. N > 1: N x (without, with), then without; medians reported", DefaultValueFactory = _ => 1 };
        var warmup = new Option<int?>("--warmup") { Description = "Seconds of unreported load first, to warm Saito up (default 5)" };
        var db = new Option<string>("--db") { Description = "sqlite or postgres", DefaultValueFactory = _ => "sqlite" };
        db.AcceptOnlyFromAmong("sqlite", "postgres");
        var pg = new Option<string?>("--pg") { Description = "PostgreSQL server where the tool may create a database (default env SAITO_BENCH_POSTGRES)" };
        var serverArgs = new Option<string[]>("--server-arg") { Description = "Extra Saito.Server setting, Section:Key=value (repeatable)" };
        var serverDll = new Option<string?>("--server") { Description = "Saito.Server.dll to run (default: src/Saito.Server/bin/Release/net10.0)" };
        var work = new Option<string?>("--work") { Description = "Folder for the SQLite files and Saito's keys (default: under the temp directory, deleted after)" };
        var keep = new Option<bool>("--keep") { Description = "Keep the database afterwards" };
        var quick = new Option<bool>("--quick") { Description = $"A smoke test: {s_quick.Students} students x {s_quick.Sensors} sensors x {s_quick.Rate} Hz, {s_quick.Seconds} s a run, {s_quick.Dashboards} dashboards" };
        var outDir = new Option<string?>("--out") { Description = "Folder for dashboard.json, dashboard.md and server.log" };

        var command = new Command("dashboard", "The classroom load without and then with N live dashboards open in chromium: committed rate of each, and publish-to-tile latency.")
        {
            dashboards, duration, students, sensors, rate, rounds, warmup, db, pg, serverArgs, serverDll, work, keep, quick, outDir,
        };
        command.SetAction(async (parse, token) =>
        {
            bool isQuick = parse.GetValue(quick);
            var load = new ClassroomSettings(
                parse.GetValue(students) ?? (isQuick ? s_quick.Students : 16),
                parse.GetValue(sensors) ?? (isQuick ? s_quick.Sensors : 20),
                parse.GetValue(rate) ?? (isQuick ? s_quick.Rate : 4),
                TimeSpan.FromSeconds(parse.GetValue(duration) ?? (isQuick ? s_quick.Seconds : 30)),
                MqttQoS.AtLeastOnce, 1, false, MqttProtocolVersion.V311, 100, 1,
                TimeSpan.FromMilliseconds(100), TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(30));
            var options = new DashboardRunOptions(
                parse.GetValue(dashboards) ?? (isQuick ? s_quick.Dashboards : 10),
                parse.GetValue(rounds),
                TimeSpan.FromSeconds(parse.GetValue(warmup) ?? (isQuick ? s_quick.Warmup : 5)),
                parse.GetValue(db) == "postgres" ? StorageProvider.Postgres : StorageProvider.Sqlite,
                parse.GetValue(pg) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES"),
                parse.GetValue(serverArgs) ?? [], parse.GetValue(serverDll), parse.GetValue(work), parse.GetValue(keep), parse.GetValue(outDir),
                BenchOptions.CommandLine(parse, "dashboard"));
            if (Validate(load, options) is { } problem)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(problem)}[/]");
                return 2;
            }

            try
            {
                return await RunAsync(load, options, token);
            }
            catch (Exception ex) when (ex is InvalidOperationException or HttpRequestException or TimeoutException or Microsoft.Playwright.PlaywrightException)
            {
                AnsiConsole.MarkupLine($"[red]The run failed:[/] {Markup.Escape(ex.Message)}");
                return 1;
            }
        });
        return command;
    }

    internal sealed record DashboardRunOptions(int Dashboards, int Rounds, TimeSpan Warmup, StorageProvider Database, string? Postgres, string[] ServerArgs,
        string? ServerDll, string? Work, bool Keep, string? OutDir, string CommandLine)
    {
        public string DbName => Database == StorageProvider.Postgres ? "postgres" : "sqlite";

        /// <summary>The runs in order: false without dashboards, true with.</summary>
        public IReadOnlyList<bool> Phases =>
            [.. Enumerable.Range(0, Rounds).SelectMany(_ => s_round), .. Rounds > 1 ? s_last : []];

        private static readonly bool[] s_round = [false, true];
        private static readonly bool[] s_last = [false];
    }

    private static string? Validate(ClassroomSettings s, DashboardRunOptions o)
    {
        if (s.Students < 1 || s.SensorsPerStudent < 1 || o.Dashboards < 1 || o.Rounds < 1)
        {
            return "--students, --sensors, --dashboards and --rounds must be at least 1.";
        }

        if (!(s.Rate > 0) || s.Rate > 1000)
        {
            return "--rate must be above 0 and at most 1000 Hz.";
        }

        if (s.Duration <= TimeSpan.Zero || o.Warmup < TimeSpan.Zero)
        {
            return "--duration must be above 0 and --warmup at least 0.";
        }

        if (o.Database == StorageProvider.Postgres && string.IsNullOrWhiteSpace(o.Postgres))
        {
            return "--db postgres needs --pg <connection string> (or SAITO_BENCH_POSTGRES).";
        }

        return null;
    }

    private static async Task<int> RunAsync(ClassroomSettings s, DashboardRunOptions o, CancellationToken token)
    {
        var startedAt = DateTimeOffset.UtcNow;
        string run = "db" + startedAt.ToString("MMddHHmmss", CultureInfo.InvariantCulture);
        string machine = await DescribeMachineAsync(o, token);
        string load = string.Create(CultureInfo.InvariantCulture,
            $"{s.Students} students x {s.SensorsPerStudent} sensors x {s.Rate:G} Hz = {s.Students * s.SensorsPerStudent * s.Rate:N0} readings/s offered, " +
            $"1 reading/message, {s.Students} connections (one per hub), QoS 1, {s.Duration.TotalSeconds:F0} s a run; {o.Dashboards} dashboards in the runs with");
        AnsiConsole.MarkupLine($"[bold]dashboard {o.DbName}[/]: {Markup.Escape(load)}");
        AnsiConsole.MarkupLine(Markup.Escape(machine));

        string serverDll = o.ServerDll ?? LocalServers.SaitoServerDll();
        string dbName = PostgresTools.Name("dashboard");
        string workDir = o.Work ?? Path.Combine(Path.GetTempPath(), $"saito-dashboard-{Environment.ProcessId}");
        string logPath = o.OutDir is not null ? Path.Combine(o.OutDir, "server.log") : Path.Combine(Path.GetTempPath(), $"saito-dashboard-{Environment.ProcessId}-server.log");
        bool created = false;
        var phases = new List<PhaseResult>();
        string? failure = null;
        try
        {
            var storage = new StorageOptions { Provider = o.Database, KeyStrategy = KeyStrategy.Natural };
            var storageArgs = new List<string> { $"--Storage:Provider={o.DbName}", "--Storage:KeyStrategy=natural" };
            if (o.Database == StorageProvider.Postgres)
            {
                Directory.CreateDirectory(workDir);
                storage.ConnectionString = await PostgresDatabases.CreateAsync(o.Postgres!, dbName, token);
                created = true;
                storageArgs.Add($"--Storage:ConnectionString={storage.ConnectionString}");
            }
            else
            {
                LocalServers.UseFreshSqlite(storage, storageArgs, workDir, SqliteSynchronous.Full);
                created = true;
            }

            // Saito's keys and credentials file in the work folder; school time a whole number of hours off UTC, chosen so
            // that it is about noon there now: the class slot is "now", and a slot cannot cross midnight, so a run started
            // just before midnight UTC would otherwise find no session that lasts through it.
            int schoolHours = SaitoApi.NoonOffsetHours(DateTime.UtcNow);
            storageArgs.AddRange([$"--Auth:KeysPath={Path.Combine(workDir, "keys")}", $"--Security:CredentialsFile={Path.Combine(workDir, "credentials.json")}",
                $"--School:TimeZone={SaitoApi.EtcZone(schoolHours)}"]);
            string password = await SaitoApi.AddAdminAsync(serverDll, AdminName, storageArgs, token);
            int httpPort = FreePort.Next();
            var baseAddress = new Uri($"http://127.0.0.1:{httpPort}");
            var extra = new List<string> { $"--urls={baseAddress.ToString().TrimEnd('/')}" };
            if (o.Dashboards + 1 > 20)
            {
                extra.Add($"--Dashboard:MaxConnectionsPerUser={o.Dashboards + 1}"); // the pages and the probe
            }

            extra.AddRange(o.ServerArgs.Select(a => "--" + a));
            await using var server = await LocalServers.StartSaitoAsync(serverDll, storageArgs, extra, [], logPath, TimeSpan.FromSeconds(120), token);
            AnsiConsole.MarkupLine($"Saito.Server pid {server.Pid}, MQTT on 127.0.0.1:{server.Port}, HTTP on {baseAddress}, log {Markup.Escape(logPath)}");
            await WaitForHttpAsync(baseAddress, token);
            var database = new ClassroomDatabase(o.Database, storage.ConnectionString, Path.Combine(storage.HotPath, SqliteSchema.HotFileName), KeyStrategy.Natural);
            using var api = await SaitoApi.SignInAsync(baseAddress, AdminName, password, token);
            var lasting = TimeSpan.FromSeconds((o.Phases.Count + 1) * (s.Duration.TotalSeconds + 120));
            var (classId, students) = await api.ClassAsync($"Dashboard bench {run}", s.Students, lasting, schoolHours, token);
            AnsiConsole.MarkupLine($"Class {classId}: {students.Length} students on the roster, in session now; signed in as {AdminName} (admin: sees every class)");

            if (o.Warmup > TimeSpan.Zero)
            {
                AnsiConsole.MarkupLine($"[grey]warm-up: {o.Warmup.TotalSeconds:F0} s of the same load, devices not assigned, not reported[/]");
                var warm = ClassroomLayout.Create(run + "w", s.Students, s.SensorsPerStudent);
                await using var warmPoller = await ClassroomPoller.OpenAsync(database, warm, token);
                await ClassroomLoad.RunAsync(s with { Duration = o.Warmup }, warm, "127.0.0.1", server.Port, warmPoller, true, server.Pid, token);
            }

            var order = o.Phases;
            for (int i = 0; i < order.Count && failure is null; i++)
            {
                bool with = order[i];
                AnsiConsole.MarkupLine($"[bold]run {i + 1} of {order.Count}: {(with ? $"with {o.Dashboards} dashboards open" : "no dashboard open")}[/]");
                var layout = ClassroomLayout.Create($"{run}p{i}", s.Students, s.SensorsPerStudent);
                int[] devices = await api.AssignAsync(layout, students, token);
                DashboardBrowsers? browsers = null;
                LiveProbe? probe = null;
                try
                {
                    if (with)
                    {
                        browsers = await DashboardBrowsers.OpenAsync(baseAddress, classId, o.Dashboards, AdminName, password, token);
                        AnsiConsole.MarkupLine(Markup.Escape($"{browsers.Count} dashboards signed in, #live[data-ready=true] on each"));
                        probe = await LiveProbe.ConnectAsync(baseAddress, api.Bearer, classId, token);
                    }

                    // The live view reads the registry again at once after a change made through Saito; a moment for it.
                    await Task.Delay(TimeSpan.FromSeconds(1), token);
                    if (browsers is not null)
                    {
                        await browsers.ResetAsync();
                    }

                    probe?.Reset();

                    await using var poller = await ClassroomPoller.OpenAsync(database, layout, token);
                    var since = DateTimeOffset.UtcNow;
                    double chromiumBefore = ProcStat.CpuSecondsOfAll("chromium");
                    long clock = System.Diagnostics.Stopwatch.GetTimestamp();
                    var result = await ClassroomLoad.RunAsync(s, layout, "127.0.0.1", server.Port, poller, true, server.Pid, token);
                    double chromiumCores = browsers is null ? 0
                        : (ProcStat.CpuSecondsOfAll("chromium") - chromiumBefore) / System.Diagnostics.Stopwatch.GetElapsedTime(clock).TotalSeconds;
                    var deadLetters = await poller.DeadLettersAsync(token);
                    List<PageLatency>? pages = null;
                    if (browsers is not null)
                    {
                        // The last readings' tiles: pushed at most Dashboard:PushIntervalMilliseconds after their commit, so a
                        // second for them; then, on a machine too busy for that, until every tile shows this run's vitals
                        // (at most 30 s more: past it the pages are reported as they are, and the run fails on them).
                        await Task.Delay(TimeSpan.FromSeconds(1), token);
                        pages = await browsers.CollectAsync(since);
                        var shown = DateTime.UtcNow.AddSeconds(30);
                        while (!pages.TrueForAll(p => p.TilesUpdated >= s.Students && p.LatencyMs.Length > 0) && DateTime.UtcNow < shown)
                        {
                            await Task.Delay(TimeSpan.FromMilliseconds(200), token);
                            pages = await browsers.CollectAsync(since);
                        }
                    }

                    var phase = new PhaseResult(i + 1, with, with ? o.Dashboards : 0, layout.Run, result, deadLetters.Count, deadLetters.Newest, pages, probe?.Latencies(),
                        chromiumCores, s.Students, since);
                    phases.Add(phase);
                    phase.PrintLine();
                    if (server.HasExited)
                    {
                        failure = $"Saito.Server exited during run {i + 1}; see {logPath}";
                    }
                }
                finally
                {
                    if (probe is not null)
                    {
                        await probe.DisposeAsync();
                    }

                    if (browsers is not null)
                    {
                        await browsers.DisposeAsync();
                    }
                }

                if (!server.HasExited)
                {
                    await api.RetireAsync(devices, token);
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

                if (Directory.Exists(workDir))
                {
                    Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
                    Directory.Delete(workDir, recursive: true);
                }
            }
        }

        var report = new DashboardReport(s, o, phases, machine, load, ServerLog.Read(logPath), failure);
        report.Print();
        if (o.OutDir is not null)
        {
            Directory.CreateDirectory(o.OutDir);
            await File.WriteAllTextAsync(Path.Combine(o.OutDir, "dashboard.json"), JsonSerializer.Serialize(report.Details(), Results.ReportWriter.Json), token);
            await File.WriteAllTextAsync(Path.Combine(o.OutDir, "dashboard.md"), report.Markdown(), token);
            AnsiConsole.MarkupLine($"Results in {Markup.Escape(o.OutDir)}: dashboard.json, dashboard.md, server.log");
        }

        return report.Passed ? 0 : 1;
    }

    private static async Task WaitForHttpAsync(Uri baseAddress, CancellationToken token)
    {
        using var http = new HttpClient { BaseAddress = baseAddress, Timeout = TimeSpan.FromSeconds(10) };
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (true)
        {
            try
            {
                using var response = await http.GetAsync("/login", token);
                if (response.IsSuccessStatusCode)
                {
                    return;
                }
            }
            catch (HttpRequestException) when (DateTime.UtcNow < deadline)
            {
            }

            if (DateTime.UtcNow >= deadline)
            {
                throw new TimeoutException($"Saito's HTTP port {baseAddress} did not answer /login within 60 s");
            }

            await Task.Delay(200, token);
        }
    }

    private static async Task<string> DescribeMachineAsync(DashboardRunOptions o, CancellationToken token)
    {
        string cpu = (await File.ReadAllLinesAsync("/proc/cpuinfo", token)).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "?";
        string text = $"{Environment.ProcessorCount} cores ({cpu}), .NET {Environment.Version}";
        text += o.Database == StorageProvider.Postgres ? ", PostgreSQL " + await PostgresTools.DescribeAsync(o.Postgres!, token) : ", SQLite synchronous=full";
        return text + ", Saito.Server embedded broker, chromium " + ChromiumVersion();
    }

    private static string ChromiumVersion()
    {
        try
        {
            using var process = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo(DashboardBrowsers.ChromiumPath, "--version")
                { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true });
            string text = process?.StandardOutput.ReadToEnd().Trim() ?? "?";
            process?.WaitForExit();
            return text.Replace("Chromium ", string.Empty, StringComparison.Ordinal);
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return "(missing)";
        }
    }

}

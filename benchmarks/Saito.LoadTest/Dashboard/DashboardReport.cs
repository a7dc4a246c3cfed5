using System.Globalization;
using System.Text;
using Saito.LoadTest.Classroom;
using Saito.LoadTest.Ingest;
using Spectre.Console;

namespace Saito.LoadTest.Dashboard;

/// <summary>One run of the classroom load, with or without dashboards open, and what the pages saw.</summary>
internal sealed record PhaseResult(int Number, bool With, int Dashboards, string Run, ClassroomLoadResult Load, long DeadLetters, string? NewestDeadLetter,
    List<PageLatency>? Pages, double[]? ProbeLatencyMs, double ChromiumCores, int Students, DateTimeOffset Since)
{
    /// <summary>Seconds per point of the tile latency's timeline.</summary>
    public const double TimelineSeconds = 5;

    /// <summary>The <see cref="LiveProbe"/>'s latencies (publish to a tile update's arrival at a client that does not render), sorted.</summary>
    public double[] ProbeMs { get; } = ProbeLatencyMs is null ? [] : [.. ProbeLatencyMs.Order()];

    /// <summary>The pages' main-thread lag samples, pooled and sorted (ms).</summary>
    public double[] LagMs { get; } = Pages is null ? [] : [.. Pages.SelectMany(p => p.LagMs).Order()];

    public double? Probe(double p) => ProbeMs.Length == 0 ? null : Quantile(ProbeMs, p);

    public double? Lag(double p) => LagMs.Length == 0 ? null : Quantile(LagMs, p);

    /// <summary>Tile latency over the run: every <see cref="TimelineSeconds"/>, p50 and p99 of the updates shown in it (all pages).</summary>
    public IReadOnlyList<(double Seconds, int Count, double P50, double P99)> Timeline()
    {
        if (Pages is null)
        {
            return [];
        }

        double since = Since.ToUnixTimeMilliseconds();
        return [.. Pages.SelectMany(p => p.AtMs.Zip(p.LatencyMs))
            .GroupBy(x => Math.Floor((x.First - since) / 1000 / TimelineSeconds))
            .OrderBy(g => g.Key)
            .Select(g =>
            {
                double[] sorted = [.. g.Select(x => x.Second).Order()];
                return ((g.Key + 1) * TimelineSeconds, sorted.Length, Quantile(sorted, 0.5), Quantile(sorted, 0.99));
            })];
    }

    public double CommittedPerSecond => Load.Committed / Load.Seconds;

    public double PublishedPerSecond => Load.SentReadings / Load.PublishSeconds;

    /// <summary>Every page's tile latencies, pooled (ms).</summary>
    public double[] TileMs { get; } = Pages is null ? [] : [.. Pages.SelectMany(p => p.LatencyMs).Order()];

    public bool AllAcked => Load.AckedMessages == Load.SentMessages && Load.RefusedMessages == 0;

    public bool AllCommitted => Load.Committed >= Load.AckedReadings;

    /// <summary>Pages that got no update, or on which some tile never showed this run's vitals.</summary>
    public int StalePages => Pages?.Count(p => p.LatencyMs.Length == 0 || p.TilesUpdated < Students) ?? 0;

    public bool Passed => AllAcked && AllCommitted && DeadLetters == 0 && StalePages == 0 && (!With || TileMs.Length > 0);

    public double? Tile(double p) => TileMs.Length == 0 ? null : Quantile(TileMs, p);

    public double CommitMs(double p) => Load.AckLatencyTicks.Length == 0 ? double.NaN : IngestLoad.Percentile(Load.AckLatencyTicks, p);

    /// <summary>Nearest rank, as the other commands report.</summary>
    public static double Quantile(double[] sorted, double p) => sorted[Math.Max(0, (int)Math.Min(sorted.Length - 1, Math.Ceiling(p * sorted.Length) - 1))];

    public void PrintLine()
    {
        string line = string.Create(CultureInfo.InvariantCulture,
            $"  committed {CommittedPerSecond:N0} readings/s ({Load.Committed:N0} of {Load.AckedReadings:N0} acknowledged), publish-to-commit p99 {CommitMs(0.99):F1} ms");
        if (With)
        {
            line += string.Create(CultureInfo.InvariantCulture,
                $"; tiles: {TileMs.Length:N0} updates, p50 {DashboardReport.F(Tile(0.5))} / p99 {DashboardReport.F(Tile(0.99))} / max {DashboardReport.F(Tile(1))} ms") +
                string.Create(CultureInfo.InvariantCulture,
                $"\n  pushes at a client that does not render: p50 {DashboardReport.F(Probe(0.5))} / p99 {DashboardReport.F(Probe(0.99))} / max {DashboardReport.F(Probe(1))} ms ({ProbeMs.Length:N0}); ") +
                string.Create(CultureInfo.InvariantCulture, $"pages' main-thread lag p99 {DashboardReport.F(Lag(0.99))} / max {DashboardReport.F(Lag(1))} ms") +
                "\n  tile p50/p99 ms every 5 s: " + string.Join(", ", Timeline().Select(t => string.Create(CultureInfo.InvariantCulture, $"{t.P50:F0}/{t.P99:F0}")));
        }

        AnsiConsole.MarkupLine(Markup.Escape(line));
    }

    public object Details() => new
    {
        number = Number,
        dashboards = Dashboards,
        run = Run,
        published_readings = Load.SentReadings,
        published_readings_per_s = PublishedPerSecond,
        acked_readings = Load.AckedReadings,
        committed_readings = Load.Committed,
        committed_seconds = Load.Seconds,
        committed_readings_per_s = CommittedPerSecond,
        dead_letters = DeadLetters,
        newest_dead_letter = NewestDeadLetter,
        publish_to_commit = new { p50_ms = CommitMs(0.5), p99_ms = CommitMs(0.99), max_ms = CommitMs(1), source = "puback" },
        tile_latency = With
            ? new { p50_ms = Tile(0.5), p95_ms = Tile(0.95), p99_ms = Tile(0.99), max_ms = Tile(1), count = TileMs.Length }
            : null,
        probe_latency = With
            ? new { p50_ms = Probe(0.5), p95_ms = Probe(0.95), p99_ms = Probe(0.99), max_ms = Probe(1), count = ProbeMs.Length, measure = "publish to a tiles push's arrival at a SignalR client that does not render (the tool)" }
            : null,
        page_main_thread_lag = With ? new { p50_ms = Lag(0.5), p99_ms = Lag(0.99), max_ms = Lag(1), samples = LagMs.Length, measure = "lateness of a 50 ms setInterval in each page" } : null,
        tile_timeline = Timeline().Select(t => new { until_s = t.Seconds, updates = t.Count, p50_ms = t.P50, p99_ms = t.P99 }),
        pages = Pages?.Select(p => new
        {
            updates = p.LatencyMs.Length,
            p99_ms = p.LatencyMs.Length == 0 ? (double?)null : Quantile([.. p.LatencyMs.Order()], 0.99),
            tiles = p.Tiles,
            tiles_updated = p.TilesUpdated,
            behind = p.Behind,
            status = p.Status,
        }),
        cores = new { saito = Load.Cores.Process, tool = Load.Cores.Tool, postgres = Load.Cores.Postgres, chromium = ChromiumCores, machine = Load.Cores.Machine },
        passed = Passed,
    };
}

/// <summary>What Saito logged that a reader of the figures should know: errors, exceptions, the live view falling behind, slow dashboards.</summary>
internal sealed record ServerLog(int Errors, int Exceptions, int Behind, int SlowDashboards, IReadOnlyList<string> Samples)
{
    public static ServerLog Read(string path)
    {
        if (!File.Exists(path))
        {
            return new ServerLog(0, 0, 0, 0, []);
        }

        var lines = File.ReadAllLines(path);
        bool Error(string l) => l.StartsWith("fail:", StringComparison.Ordinal) || l.StartsWith("crit:", StringComparison.Ordinal);
        bool Exception(string l) => l.Contains("Exception", StringComparison.Ordinal);
        return new ServerLog(
            lines.Count(Error),
            lines.Count(Exception),
            lines.Count(l => l.Contains("fell behind", StringComparison.Ordinal)),
            lines.Count(l => l.Contains("did not take an update", StringComparison.Ordinal)),
            [.. lines.Select((l, i) => (l, i)).Where(x => Error(x.l) || Exception(x.l)).Take(5).Select(x => x.l + (x.i + 1 < lines.Length ? " | " + lines[x.i + 1].Trim() : string.Empty))]);
    }
}

/// <summary>The runs side by side, the medians, the targets and whether they were met.</summary>
internal sealed class DashboardReport(ClassroomSettings s, DashboardCommand.DashboardRunOptions o, List<PhaseResult> phases, string machine, string load,
    ServerLog log, string? failure)
{
    private IEnumerable<PhaseResult> Without => phases.Where(p => !p.With);

    private IEnumerable<PhaseResult> With => phases.Where(p => p.With);

    public bool Complete => failure is null && phases.Count == o.Phases.Count;

    public bool Passed => Complete && phases.All(p => p.Passed);

    private double? RateWithout => Median(Without.Select(p => p.CommittedPerSecond));

    private double? RateWith => Median(With.Select(p => p.CommittedPerSecond));

    private double? Ratio => RateWith / RateWithout;

    /// <summary>The median over the runs with dashboards of each run's p99 (one run: its p99).</summary>
    private double? P99 => Median(With.Select(p => p.Tile(0.99)).OfType<double>());

    private bool? P99Met => P99 is { } v ? v < DashboardCommand.P99TargetMs : null;

    private bool? RatioMet => Ratio is { } r ? r >= DashboardCommand.RatioTarget : null;

    public static string F(double? value) => value is { } v && !double.IsNaN(v) ? v.ToString("F1", CultureInfo.InvariantCulture) : "-";

    private static double? Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length == 0 ? null : sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static string Met(bool? met) => met switch { true => "met", false => "NOT met", null => "not measured" };

    private string OrderText => string.Join(", ", phases.Select(p => p.With ? $"with {p.Dashboards}" : "without")) + " (back to back, on one Saito)";

    public void Print()
    {
        var table = new Table().AddColumns("run", "dashboards", "published/s", "committed/s", "commit p50 / p99 ms", "tile updates", "tile p50 / p95 / p99 / max ms",
            "push p50 / p99 ms", "page lag p99 ms", "cores Saito / chromium / machine");
        foreach (var p in phases)
        {
            table.AddRow(
                p.Number.ToString(CultureInfo.InvariantCulture), p.Dashboards.ToString(CultureInfo.InvariantCulture),
                p.PublishedPerSecond.ToString("N0", CultureInfo.InvariantCulture), p.CommittedPerSecond.ToString("N0", CultureInfo.InvariantCulture),
                $"{F(p.CommitMs(0.5))} / {F(p.CommitMs(0.99))}",
                p.With ? p.TileMs.Length.ToString("N0", CultureInfo.InvariantCulture) : "-",
                p.With ? $"{F(p.Tile(0.5))} / {F(p.Tile(0.95))} / {F(p.Tile(0.99))} / {F(p.Tile(1))}" : "-",
                p.With ? $"{F(p.Probe(0.5))} / {F(p.Probe(0.99))}" : "-",
                p.With ? F(p.Lag(0.99)) : "-",
                string.Create(CultureInfo.InvariantCulture, $"{p.Load.Cores.Process:F2} / {(p.With ? p.ChromiumCores.ToString("F2", CultureInfo.InvariantCulture) : "-")} / {p.Load.Cores.Machine:F2}"));
        }

        AnsiConsole.Write(table);
        AnsiConsole.MarkupLine(Markup.Escape($"Order: {OrderText}."));
        AnsiConsole.MarkupLine(Markup.Escape(string.Create(CultureInfo.InvariantCulture,
            $"Publish-to-tile p99: {F(P99)} ms (target < {DashboardCommand.P99TargetMs:F0} ms): ")) + Colour(P99Met));
        AnsiConsole.MarkupLine(Markup.Escape(string.Create(CultureInfo.InvariantCulture,
            $"Committed rate with / without dashboards: {F(RateWith)} / {F(RateWithout)} readings/s = {(Ratio is { } r ? r.ToString("P1", CultureInfo.InvariantCulture) : "-")} (target >= {DashboardCommand.RatioTarget:P0}): ")) + Colour(RatioMet));
        if (log.Errors > 0 || log.Exceptions > 0 || log.Behind > 0 || log.SlowDashboards > 0)
        {
            AnsiConsole.MarkupLine(Markup.Escape($"Saito's log: {log.Errors} errors, {log.Exceptions} lines with an exception, {log.Behind} 'live view fell behind', {log.SlowDashboards} 'dashboard did not take an update'"));
            foreach (string line in log.Samples)
            {
                AnsiConsole.MarkupLine("  [grey]" + Markup.Escape(line.Length > 300 ? line[..300] : line) + "[/]");
            }
        }

        foreach (var p in phases.Where(p => !p.Passed))
        {
            AnsiConsole.MarkupLine(Markup.Escape($"Run {p.Number} failed: acknowledged {p.Load.AckedMessages:N0} of {p.Load.SentMessages:N0} messages, committed {p.Load.Committed:N0} of {p.Load.AckedReadings:N0} acknowledged readings, " +
                $"{p.DeadLetters} dead letters, {p.StalePages} dashboards without an update on every tile"));
        }

        if (failure is not null)
        {
            AnsiConsole.MarkupLine($"[red]{Markup.Escape(failure)}[/]");
        }

        AnsiConsole.MarkupLine(Passed ? "[green]Every run completed and every acknowledged reading is stored.[/]" : "[red]The run failed.[/]");
    }

    private static string Colour(bool? met) => met switch { true => "[green]met[/]", false => "[red]NOT met[/]", null => "[yellow]not measured[/]" };

    public object Details() => new
    {
        command = "dashboard",
        command_line = o.CommandLine,
        machine,
        load,
        db = o.DbName,
        students = s.Students,
        sensors_per_student = s.SensorsPerStudent,
        rate_hz = s.Rate,
        duration_s = s.Duration.TotalSeconds,
        dashboards = o.Dashboards,
        rounds = o.Rounds,
        order = OrderText,
        tile_latency_measure = "window.saitoTileLatency on each live class page: Date.now() when a tile is rendered with a newer biosensor reading minus the reading's ts (its publish time)",
        targets = new
        {
            tile_p99_ms = DashboardCommand.P99TargetMs,
            tile_p99_measured_ms = P99,
            tile_p99_met = P99Met,
            rate_ratio = DashboardCommand.RatioTarget,
            committed_per_s_without = RateWithout,
            committed_per_s_with = RateWith,
            rate_ratio_measured = Ratio,
            rate_ratio_met = RatioMet,
        },
        runs = phases.Select(p => p.Details()),
        server_log = new { errors = log.Errors, exception_lines = log.Exceptions, live_view_behind = log.Behind, slow_dashboards = log.SlowDashboards, samples = log.Samples },
        failure,
        passed = Passed,
    };

    public string Markdown()
    {
        var md = new StringBuilder();
        md.AppendLine("# dashboard").AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"`{o.CommandLine}`").AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"- Machine: {machine}");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Load: {load}");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Order: {OrderText}").AppendLine();
        md.AppendLine("| run | dashboards | published/s | committed/s | publish-to-commit p50 / p99 ms | tile updates | publish-to-tile p50 / p95 / p99 / max ms | publish-to-push (no rendering) p50 / p99 ms | pages' main-thread lag p99 ms | cores Saito / chromium / machine |");
        md.AppendLine("|---|---|---|---|---|---|---|---|---|---|");
        foreach (var p in phases)
        {
            md.AppendLine(CultureInfo.InvariantCulture,
                $"| {p.Number} | {p.Dashboards} | {p.PublishedPerSecond:N0} | {p.CommittedPerSecond:N0} | {F(p.CommitMs(0.5))} / {F(p.CommitMs(0.99))} | " +
                $"{(p.With ? p.TileMs.Length.ToString("N0", CultureInfo.InvariantCulture) : "-")} | " +
                $"{(p.With ? $"{F(p.Tile(0.5))} / {F(p.Tile(0.95))} / {F(p.Tile(0.99))} / {F(p.Tile(1))}" : "-")} | " +
                $"{(p.With ? $"{F(p.Probe(0.5))} / {F(p.Probe(0.99))}" : "-")} | {(p.With ? F(p.Lag(0.99)) : "-")} | " +
                $"{p.Load.Cores.Process:F2} / {(p.With ? p.ChromiumCores.ToString("F2", CultureInfo.InvariantCulture) : "-")} / {p.Load.Cores.Machine:F2} |");
        }

        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"- Publish-to-tile p99: {F(P99)} ms, target < {DashboardCommand.P99TargetMs:F0} ms: **{Met(P99Met)}**");
        md.AppendLine(CultureInfo.InvariantCulture,
            $"- Committed rate with / without: {F(RateWith)} / {F(RateWithout)} readings/s = {(Ratio is { } r ? r.ToString("P1", CultureInfo.InvariantCulture) : "-")}, target >= {DashboardCommand.RatioTarget:P0}: **{Met(RatioMet)}**");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Saito's log: {log.Errors} errors, {log.Exceptions} lines with an exception, {log.Behind} 'live view fell behind', {log.SlowDashboards} 'dashboard did not take an update'");
        md.AppendLine(CultureInfo.InvariantCulture, $"- Passed: {Passed}{(failure is null ? string.Empty : " (" + failure + ")")}");
        return md.ToString();
    }
}

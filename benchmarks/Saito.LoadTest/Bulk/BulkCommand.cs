using System.CommandLine;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.Storage;
using Saito.Storage.Keys;
using Spectre.Console;

namespace Saito.LoadTest.Bulk;

/// <summary>
/// <c>bulk</c>: Saito's own bulk writer against the database's reference load path, on the same rows, the same
/// table, this machine, in one run: PostgreSQL against <c>psql \copy</c>, SQLite against a plain prepared-statement
/// loop. Rounds alternate which goes first; prints every run, the best and median ratio, and the 80% target.
/// </summary>
internal static class BulkCommand
{
    private const double Target = 0.80;
    private static readonly JsonSerializerOptions s_json = new() { WriteIndented = true };

    public static Command Create()
    {
        var db = new Option<string>("--db") { Description = "sqlite or postgres", DefaultValueFactory = _ => "sqlite" };
        db.AcceptOnlyFromAmong("sqlite", "postgres");
        var pg = new Option<string?>("--pg") { Description = "PostgreSQL connection string of a server where the tool may create and drop databases (default: env SAITO_BENCH_POSTGRES)" };
        var rows = new Option<int>("--rows") { Description = "Rows per run", DefaultValueFactory = _ => 1_000_000 };
        var batch = new Option<int>("--batch") { Description = "Rows per committed batch (Saito's WriteAsync, the SQLite loop's transaction)", DefaultValueFactory = _ => 5000 };
        var writers = new Option<int?>("--writers") { Description = "Concurrent Saito writers (default 1 for sqlite, 4 for postgres)" };
        var rounds = new Option<int>("--rounds") { Description = "Rounds; each runs Saito and the reference, alternating which goes first", DefaultValueFactory = _ => 3 };
        var synchronous = new Option<string>("--synchronous") { Description = "SQLite synchronous for both: full or normal", DefaultValueFactory = _ => "full" };
        synchronous.AcceptOnlyFromAmong("full", "normal");
        var work = new Option<string?>("--work") { Description = "Folder for the SQLite files and the CSV (default: a folder under the temp directory)" };
        var psql = new Option<string>("--psql") { Description = "psql to run", DefaultValueFactory = _ => "psql" };
        var warmup = new Option<bool>("--warmup") { Description = "Run each writer once before round 1 (shown as round 0, left out of the summary)", DefaultValueFactory = _ => true };
        var sorted = new Option<bool>("--sorted-reference") { Description = "SQLite: the loop also writes each batch in primary-key order (as Saito's store does), to separate ordering from the rest" };
        var outDir = new Option<string?>("--out") { Description = "Folder for results.json and results.csv" };

        var command = new Command("bulk", "Saito's bulk writer against psql \\copy (PostgreSQL) or a prepared-statement loop (SQLite): same rows, same table, this machine.")
        {
            db, pg, rows, batch, writers, rounds, synchronous, work, psql, warmup, sorted, outDir,
        };
        command.SetAction(async (parse, token) =>
        {
            var provider = parse.GetValue(db) == "postgres" ? StorageProvider.Postgres : StorageProvider.Sqlite;
            string? server = parse.GetValue(pg) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES");
            if (provider == StorageProvider.Postgres && string.IsNullOrWhiteSpace(server))
            {
                AnsiConsole.MarkupLine("[red]--db postgres needs --pg <connection string> (or SAITO_BENCH_POSTGRES).[/]");
                return 2;
            }

            string workDir = parse.GetValue(work) ?? Path.Combine(Path.GetTempPath(), $"saito-bulk-{Environment.ProcessId}");
            Directory.CreateDirectory(workDir);
            var settings = new BulkSettings(provider, server, parse.GetValue(rows), parse.GetValue(batch),
                parse.GetValue(writers) ?? (provider == StorageProvider.Postgres ? 4 : 1), parse.GetValue(rounds),
                parse.GetValue(synchronous) == "normal" ? SqliteSynchronous.Normal : SqliteSynchronous.Full, workDir, parse.GetValue(psql)!, parse.GetValue(warmup), parse.GetValue(sorted));
            try
            {
                return await RunAsync(settings, parse.GetValue(outDir), token);
            }
            finally
            {
                if (parse.GetValue(work) is null)
                {
                    Directory.Delete(workDir, recursive: true);
                }
            }
        });
        return command;
    }

    private static async Task<int> RunAsync(BulkSettings s, string? outDir, CancellationToken token)
    {
        using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning));
        string machine = await DescribeMachineAsync(s, token);
        AnsiConsole.MarkupLine($"[bold]bulk {s.Database.ToString().ToLowerInvariant()}[/]: {s.Rows:N0} biosensor rows ({BulkReadings.Devices} devices x {BulkReadings.ChannelsPerDevice} channels, natural key), " +
            $"batches of {s.Batch:N0}, {s.Writers} Saito writer(s), {s.Rounds} round(s)");
        AnsiConsole.MarkupLine(Markup.Escape(machine));

        var rows = BulkReadings.Biosensor(s.Rows, Enumerable.Range(1, BulkReadings.Devices).ToArray());
        string? csv = null;
        if (s.Database == StorageProvider.Postgres)
        {
            csv = Path.Combine(s.WorkDirectory, "rows.csv");
            await AnsiConsole.Status().StartAsync($"Writing {s.Rows:N0} rows to {csv} (not timed)", async _ => await BulkReadings.WriteCsvAsync(csv, rows, token));
        }

        var runners = new BulkRunners(s, rows, csv, loggers);
        var results = new List<BulkRun>();
        // Round 0 warms up: the JIT (Saito's and Npgsql's or Microsoft.Data.Sqlite's code starts at tier 0), the page
        // cache and the database server. It is shown but left out of the summary.
        for (int round = s.Warmup ? 0 : 1; round <= s.Rounds; round++)
        {
            string[] order = round % 2 == 1 ? [BulkRunners.Saito, runners.Reference] : [runners.Reference, BulkRunners.Saito];
            foreach (string writer in order)
            {
                var run = await WithProgressAsync($"{(round == 0 ? "warm-up" : "round " + round)}: {writer}", s.Rows, writer == "psql \\copy", progress =>
                    writer == BulkRunners.Saito ? runners.SaitoAsync(round, progress, token) : runners.ReferenceAsync(round, progress, token));
                results.Add(run);
                AnsiConsole.MarkupLine($"  {(round == 0 ? "warm-up" : "round " + round)} {Markup.Escape(writer)}: {run.RowsPerSecond:N0} rows/s ({run.Seconds:F2} s), {run.Stored:N0}/{run.Rows:N0} stored");
            }
        }

        var summary = Summarize(results, runners.Reference);
        Report(results, summary, s, runners.Reference);
        if (outDir is not null)
        {
            Directory.CreateDirectory(outDir);
            var json = new
            {
                command = "bulk",
                database = s.Database.ToString().ToLowerInvariant(),
                machine,
                rows = s.Rows,
                batch = s.Batch,
                writers = s.Writers,
                rounds = s.Rounds,
                warmup = s.Warmup,
                sorted_reference = s.SortedReference,
                sqlite_synchronous = s.Database == StorageProvider.Sqlite ? s.Synchronous.ToString().ToLowerInvariant() : null,
                reference = runners.Reference,
                runs = results.Select(r => new
                {
                    writer = r.Writer,
                    round = r.Round,
                    rows = r.Rows,
                    stored = r.Stored,
                    seconds = r.Seconds,
                    rows_per_s = r.RowsPerSecond,
                    tool_cores = r.Cores.Tool,
                    postgres_cores = r.Cores.Postgres,
                    rest_cores = r.Cores.Rest,
                    machine_cores = r.Cores.Machine,
                }),
                summary = new
                {
                    best_saito_rows_per_s = summary.BestSaito,
                    best_reference_rows_per_s = summary.BestReference,
                    best_ratio = summary.BestRatio,
                    median_saito_rows_per_s = summary.MedianSaito,
                    median_reference_rows_per_s = summary.MedianReference,
                    median_ratio = summary.MedianRatio,
                    target_ratio = Target,
                    target_met = summary.MedianRatio >= Target,
                },
            };
            await File.WriteAllTextAsync(Path.Combine(outDir, "results.json"), JsonSerializer.Serialize(json, s_json), token);
            var lines = new StringBuilder("database,writer,round,rows,stored,seconds,rows_per_s,tool_cores,postgres_cores,rest_cores,machine_cores\n");
            foreach (var r in results)
            {
                lines.Append(CultureInfo.InvariantCulture,
                    $"{s.Database.ToString().ToLowerInvariant()},{r.Writer},{r.Round},{r.Rows},{r.Stored},{r.Seconds:F3},{r.RowsPerSecond:F0},{r.Cores.Tool:F2},{r.Cores.Postgres:F2},{r.Cores.Rest:F2},{r.Cores.Machine:F2}\n");
            }

            await File.WriteAllTextAsync(Path.Combine(outDir, "results.csv"), lines.ToString(), token);
        }

        return results.All(r => r.Stored == r.Rows) ? 0 : 1;
    }

    private static async Task<BulkRun> WithProgressAsync(string label, long total, bool indeterminate, Func<Action<long>, Task<BulkRun>> run)
    {
        BulkRun? result = null;
        await AnsiConsole.Progress()
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn(), new SpinnerColumn())
            .StartAsync(async context =>
            {
                var bar = context.AddTask(label, maxValue: total);
                bar.IsIndeterminate = indeterminate;
                result = await run(done => bar.Value = done);
                bar.IsIndeterminate = false;
                bar.Value = total;
            });
        return result!;
    }

    private sealed record Summary(double BestSaito, double BestReference, double MedianSaito, double MedianReference)
    {
        public double BestRatio => BestSaito / BestReference;
        public double MedianRatio => MedianSaito / MedianReference;
    }

    private static Summary Summarize(List<BulkRun> results, string reference)
    {
        var saito = results.Where(r => r.Round > 0 && r.Writer == BulkRunners.Saito).Select(r => r.RowsPerSecond).ToArray();
        var other = results.Where(r => r.Round > 0 && r.Writer == reference).Select(r => r.RowsPerSecond).ToArray();
        return new Summary(saito.Max(), other.Max(), Median(saito), Median(other));
    }

    private static double Median(double[] values)
    {
        var sorted = values.Order().ToArray();
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    private static void Report(List<BulkRun> results, Summary summary, BulkSettings s, string reference)
    {
        var table = new Table().AddColumns("writer", "round", "stored/rows", "seconds", "rows/s", "cores: tool / PostgreSQL / rest / machine");
        foreach (var r in results)
        {
            table.AddRow(Markup.Escape(r.Writer), r.Round == 0 ? "warm-up" : r.Round.ToString(CultureInfo.InvariantCulture), $"{r.Stored:N0}/{r.Rows:N0}",
                r.Seconds.ToString("F2", CultureInfo.InvariantCulture), r.RowsPerSecond.ToString("N0", CultureInfo.InvariantCulture),
                string.Create(CultureInfo.InvariantCulture, $"{r.Cores.Tool:F2} / {r.Cores.Postgres:F2} / {r.Cores.Rest:F2} / {r.Cores.Machine:F2}"));
        }

        AnsiConsole.Write(table);
        AnsiConsole.MarkupLine("Cores: tool = this process (Saito's store or the SQLite loop run in it), rest = psql, the kernel and anything else on the machine.");
        string verdict = summary.MedianRatio >= Target ? "[green]met[/]" : "[red]missed[/]";
        AnsiConsole.MarkupLine($"Saito / {Markup.Escape(reference)}: median {summary.MedianSaito:N0} / {summary.MedianReference:N0} rows/s = [bold]{summary.MedianRatio:P0}[/], " +
            $"best {summary.BestSaito:N0} / {summary.BestReference:N0} = {summary.BestRatio:P0}; target >= {Target:P0}: {verdict}");
        if (results.Any(r => r.Stored != r.Rows))
        {
            AnsiConsole.MarkupLine("[red]Some run did not store every row (see stored/rows).[/]");
        }
    }

    private static async Task<string> DescribeMachineAsync(BulkSettings s, CancellationToken token)
    {
        string cpu = (await File.ReadAllLinesAsync("/proc/cpuinfo", token)).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "?";
        string text = $"{Environment.ProcessorCount} cores ({cpu}), .NET {Environment.Version}";
        if (s.Database == StorageProvider.Postgres)
        {
            text += ", PostgreSQL " + await PostgresTools.DescribeAsync(s.PostgresServer!, token);
        }
        else
        {
            using var memory = new Microsoft.Data.Sqlite.SqliteConnection("Data Source=:memory:");
            await memory.OpenAsync(token);
            text += $", SQLite {memory.ServerVersion}, synchronous={s.Synchronous.ToString().ToLowerInvariant()}, files in {s.WorkDirectory}";
        }

        return text;
    }
}

using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.LoadTest.Results;
using Saito.Storage.Keys;
using Spectre.Console;

namespace Saito.LoadTest.Archive;

/// <summary>
/// <c>archive</c>: rows/s moved from hot to archive by Saito's archiver (select, export, reinsert, delete, all
/// journaled) against a hand-written set-based move of the same rows, in one run, each from a fresh database, with
/// an insert probe running beside it that records how long inserts waited. See <see cref="ArchiveBench"/>.
/// </summary>
internal static class ArchiveCommand
{
    public static Command Create()
    {
        var options = new BenchOptions();
        var rows = new Option<long>("--rows") { Description = "Old rows to move (rounded up to whole seconds of 256 series)", DefaultValueFactory = _ => 10_000_000 };
        var threads = new Option<string>("--threads") { Description = "Archiver threads, comma-separated", DefaultValueFactory = _ => "1,4" };
        var batchRows = new Option<int>("--batch-rows") { Description = "Rows per archiver batch (Archiver:BatchRows)", DefaultValueFactory = _ => 50_000 };
        var methods = new Option<string>("--methods") { Description = "saito, set-based or both", DefaultValueFactory = _ => "saito,set-based" };
        var verbose = new Option<bool>("--verbose") { Description = "Log what the archiver does with each batch (select/export, insert, delete times)" };
        var command = new Command("archive", "Saito's archiver against a hand-written set-based move (COPY ... TO plus DELETE ... RETURNING into the archive), same rows, this machine.")
        {
            rows, threads, batchRows, methods, verbose,
        };
        options.AddTo(command);
        command.SetAction(async (parse, token) =>
        {
            if (options.Target(parse, out string? error) is not { } target)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(error!)}[/]");
                return 2;
            }

            string[] chosen = BenchOptions.List(parse.GetValue(methods)!);
            if (chosen.Except([ArchiveBench.SaitoMethod, ArchiveBench.SetBasedMethod]).FirstOrDefault() is { } unknown)
            {
                AnsiConsole.MarkupLine($"[red]--methods: unknown method '{Markup.Escape(unknown)}' (saito, set-based).[/]");
                return 2;
            }

            if (target.Database == StorageProvider.SqlServer && chosen.Contains(ArchiveBench.SetBasedMethod))
            {
                AnsiConsole.MarkupLine("[yellow]set-based: not written for SQL Server; measuring saito only.[/]");
                chosen = [ArchiveBench.SaitoMethod];
            }

            try
            {
                return await RunAsync(target, parse.GetValue(rows), BenchOptions.Numbers(parse.GetValue(threads)!), parse.GetValue(batchRows), chosen, options.OutDir(parse), parse.GetValue(verbose), token);
            }
            finally
            {
                options.CleanUp(parse, target);
            }
        });
        return command;
    }

    private static async Task<int> RunAsync(BenchTarget target, long rows, int[] threads, int batchRows, string[] methods, string? outDir, bool verbose, CancellationToken token)
    {
        using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning).AddFilter("Saito.Storage.Archive", verbose ? LogLevel.Information : LogLevel.Warning));
        var bench = new ArchiveBench(target, rows, batchRows, loggers);
        string machine = await BenchOptions.DescribeMachineAsync(target, token);
        AnsiConsole.MarkupLine($"[bold]archive {target.DbName}[/]: {bench.Rows:N0} old biosensor rows ({target.KeyName} keys) from {Markup.Escape(target.Hot.Name)} to {Markup.Escape(target.Archive.Name)}, " +
            $"batches of {batchRows:N0}, threads {string.Join(", ", threads)}, methods {string.Join(", ", methods)}; an insert probe writes 256 rows every 10 ms meanwhile");
        AnsiConsole.MarkupLine(Markup.Escape(machine));
        var started = DateTimeOffset.UtcNow;
        var measures = new List<ArchiveMeasure>();
        foreach (int t in threads)
        {
            foreach (string method in methods)
            {
                var measure = await BenchProgress.RunAsync((progress) => bench.RunAsync(method, t, progress, token));
                measures.Add(measure);
                AnsiConsole.MarkupLine($"  {method}, {t} thread(s): {measure.RowsPerSecond:N0} rows/s ({measure.Seconds:F1} s); inserts meanwhile: {measure.Waits.Calls:N0}, " +
                    $"p99 {measure.Waits.P99Ms:F0} ms, longest {measure.Waits.MaxMs:F0} ms{(measure.Exact(bench.Rows, 0) ? string.Empty : " [red]COUNTS DO NOT MATCH[/]")}");
            }
        }

        Print(target, bench, measures);
        var results = measures.Select(m => new ResultRow
        {
            Command = "archive",
            Op = "archive",
            Db = target.DbName,
            Tier = $"{target.Hot.Name}->{target.Archive.Name}",
            Key = target.KeyName,
            Threads = m.Threads,
            Method = m.Method,
            Rows = m.Rows,
            Seconds = m.Seconds,
            P50Ms = m.Waits.P50Ms,
            P99Ms = m.Waits.P99Ms,
            MaxMs = m.Waits.MaxMs,
            Note = string.Create(CultureInfo.InvariantCulture, $"latency columns: inserts of 256 rows made meanwhile ({m.Waits.Calls} calls); cores: tool {m.Cores.Tool:F2}, postgres {m.Cores.Postgres:F2}, machine {m.Cores.Machine:F2}"),
        }).ToList();
        if (outDir is not null)
        {
            var files = await ReportWriter.WriteAsync(outDir, results, new RunContext("archive", BenchOptions.CommandLine(), machine, started), token);
            BenchOptions.PrintFiles(files);
        }

        return measures.All(m => m.Exact(bench.Rows, 0)) ? 0 : 1;
    }

    private static void Print(BenchTarget target, ArchiveBench bench, List<ArchiveMeasure> measures)
    {
        double goal = target.Database == StorageProvider.Sqlite ? 200_000 : 100_000;
        var table = new Table().AddColumns("method", "threads", "rows moved", "seconds", "rows/s", "of set-based", "inserts meanwhile", "insert p99 / longest (ms)", "cores tool / postgres / machine", "exact");
        foreach (var m in measures)
        {
            var reference = measures.FirstOrDefault(r => r.Method == ArchiveBench.SetBasedMethod && r.Threads == m.Threads);
            string ratio = m.Method == ArchiveBench.SaitoMethod && reference is not null ? (m.RowsPerSecond / reference.RowsPerSecond).ToString("P0", CultureInfo.InvariantCulture) : string.Empty;
            table.AddRow(m.Method, m.Threads.ToString(CultureInfo.InvariantCulture), m.Rows.ToString("N0", CultureInfo.InvariantCulture), m.Seconds.ToString("F1", CultureInfo.InvariantCulture),
                m.RowsPerSecond.ToString("N0", CultureInfo.InvariantCulture), ratio, m.Waits.Calls.ToString("N0", CultureInfo.InvariantCulture),
                string.Create(CultureInfo.InvariantCulture, $"{m.Waits.P99Ms:F0} / {m.Waits.MaxMs:F0}"),
                string.Create(CultureInfo.InvariantCulture, $"{m.Cores.Tool:F2} / {m.Cores.Postgres:F2} / {m.Cores.Machine:F2}"),
                m.Exact(bench.Rows, 0) ? "yes" : $"NO: archived {m.Archived:N0}, left {m.HotLeft:N0}");
        }

        AnsiConsole.Write(table);
        AnsiConsole.MarkupLine($"Targets: saito >= {goal:N0} rows/s on {target.DbName} and >= 50% of set-based; the study's best was about 13,300 rows/s (SEED_FACTS).");
    }
}

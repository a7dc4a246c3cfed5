using System.CommandLine;
using System.Globalization;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.LoadTest.Results;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Spectre.Console;

namespace Saito.LoadTest.Tiers;

/// <summary>
/// <c>tiers</c>: the study's experiment on any of Saito's databases. For every tier, key strategy and thread count,
/// on a fresh database: insert the rows with Saito's bulk path (timed), read them all back (timed), archive them all
/// to the archive tier with Saito's archiver (timed); and, on another fresh database, insert rows the study's way,
/// one INSERT per reading in autocommit per thread (timed), so bulk against row-by-row is measured in the same run.
/// Prints the results in the shape of the study's table (operation x tier x threads, seconds) and as rows/s.
/// </summary>
internal static class TiersCommand
{
    private static readonly string[] s_ops = ["insert", "select", "archive"];
    private static readonly string[] s_methods = ["bulk", "row-by-row"];

    /// <summary>The study's seconds for about 16 million rows (SEED_FACTS), by operation, tier and threads 1/16/32.</summary>
    private static readonly (string Op, string Tier, double[] Seconds)[] s_study =
    [
        ("insert, natural key", "HDD", [7689, 3479, 2174]),
        ("insert, natural key", "SSD", [3632, 1543, 969]),
        ("insert, natural key", "Optane", [1316, 583, 373]),
        ("insert, GUID key", "HDD", [9842, 7342, 5391]),
        ("insert, GUID key", "SSD", [4744, 2501, 1496]),
        ("insert, GUID key", "Optane", [2263, 1580, 1051]),
        ("archive", "HDD", [14117, 7397, 5015]),
        ("archive", "SSD", [6376, 4540, 3096]),
        ("archive", "Optane", [2972, 1833, 1201]),
    ];

    private const long StudyRows = 16_000_000;

    public static Command Create()
    {
        var options = new BenchOptions("natural,guid,sequential-guid");
        var threads = new Option<string>("--threads") { Description = "Thread counts, comma-separated", DefaultValueFactory = _ => "1,16,32" };
        var rows = new Option<long?>("--rows") { Description = "Rows per bulk insert, select and archive (default 16,000,000 like the study; --quick 25,600)" };
        var rowByRowRows = new Option<long?>("--row-by-row-rows") { Description = "Rows per row-by-row insert (default: --rows up to 320,000, the study's smaller run; row-by-row is slow by design)" };
        var ops = new Option<string>("--ops") { Description = "Operations, comma-separated: insert, select, archive", DefaultValueFactory = _ => "insert,select,archive" };
        var methods = new Option<string>("--method") { Description = "Insert methods, comma-separated: bulk, row-by-row", DefaultValueFactory = _ => "bulk,row-by-row" };
        var quick = new Option<bool>("--quick") { Description = "The whole matrix with small counts (25,600 rows, 2,560 row by row), for smoke tests" };
        var command = new Command("tiers", "The study's experiment per storage tier: insert (bulk and row-by-row), select and archive; natural and GUID keys; 1, 16 and 32 threads.")
        {
            threads, rows, rowByRowRows, ops, methods, quick,
        };
        options.AddTo(command);
        command.SetAction(async (parse, token) =>
        {
            if (options.Target(parse, out string? error) is not { } target)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(error!)}[/]");
                return 2;
            }

            try
            {
                var plan = new TiersPlan(
                    target,
                    options.Tiers(parse, target.WorkDirectory),
                    options.Keys(parse),
                    BenchOptions.Numbers(parse.GetValue(threads)!),
                    Checked(BenchOptions.List(parse.GetValue(ops)!), s_ops, "--ops"),
                    Checked(BenchOptions.List(parse.GetValue(methods)!), s_methods, "--method"),
                    parse.GetValue(rows) ?? (parse.GetValue(quick) ? 25_600 : StudyRows),
                    parse.GetValue(rowByRowRows) ?? (parse.GetValue(quick) ? 2_560 : Math.Min(parse.GetValue(rows) ?? StudyRows, 320_000)));
                return await RunAsync(plan, options.OutDir(parse), token);
            }
            catch (FormatException ex)
            {
                AnsiConsole.MarkupLine($"[red]{Markup.Escape(ex.Message)}[/]");
                return 2;
            }
            finally
            {
                options.CleanUp(parse, target);
            }
        });
        return command;
    }

    private static string[] Checked(string[] given, string[] allowed, string option) =>
        given.Except(allowed).FirstOrDefault() is { } unknown
            ? throw new FormatException($"{option}: unknown value '{unknown}' ({string.Join(", ", allowed)}).")
            : given;

    private sealed record TiersPlan(BenchTarget Target, IReadOnlyList<BenchTier> Tiers, IReadOnlyList<KeyStrategy> Keys, int[] Threads, string[] Ops, string[] Methods,
        long Rows, long RowByRowRows)
    {
        public bool Bulk => Methods.Contains("bulk");

        public bool RowByRow => Methods.Contains("row-by-row") && Ops.Contains("insert");
    }

    private static async Task<int> RunAsync(TiersPlan plan, string? outDir, CancellationToken token)
    {
        using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning));
        var target = plan.Target;
        string machine = await BenchOptions.DescribeMachineAsync(target, token);
        long rows = (plan.Rows + BulkReadings.Series - 1) / BulkReadings.Series * BulkReadings.Series;
        AnsiConsole.MarkupLine($"[bold]tiers {target.DbName}[/]: tiers {Markup.Escape(string.Join(", ", plan.Tiers.Select(t => $"{t.Name}={t.Location}")))}, archive to {Markup.Escape(target.Archive.Name)}; " +
            $"keys {string.Join(", ", plan.Keys.Select(k => Saito.Storage.Schema.SchemaScript.KeyStrategyName(k)))}; threads {string.Join(", ", plan.Threads)}; ops {string.Join(", ", plan.Ops)}; " +
            $"methods {string.Join(", ", plan.Methods)}; {rows:N0} rows (row by row: {plan.RowByRowRows:N0})");
        AnsiConsole.MarkupLine(Markup.Escape(machine));
        var started = DateTimeOffset.UtcNow;
        var results = new List<ResultRow>();
        bool exact = true;
        foreach (var tier in plan.Tiers)
        {
            foreach (var keys in plan.Keys)
            {
                var run = target with { Hot = tier, Keys = keys };
                var runners = new TierRunners(run, loggers);
                foreach (int threads in plan.Threads)
                {
                    ResultRow Row(string op, string method, long count, double seconds, string? note = null) => new()
                    {
                        Command = "tiers",
                        Op = op,
                        Db = run.DbName,
                        Tier = tier.Name,
                        Key = run.KeyName,
                        Threads = threads,
                        Method = method,
                        Rows = count,
                        Seconds = seconds,
                        Note = note,
                    };

                    string label = $"{tier.Name}, {run.KeyName}, {threads} thread(s)";
                    if (plan.Bulk || plan.Ops.Any(o => o != "insert"))
                    {
                        var measured = await BenchProgress.RunAsync(async progress =>
                        {
                            var found = new List<ResultRow>();
                            await using var database = await BenchDatabase.CreateAsync(run, $"tiers_{tier.Name}_{threads}", threads, TierRunners.BulkBatch, token);
                            await using var store = ReadingStores.Create(database.Options, loggers);
                            await BenchSeeder.PrepareAsync(store, token);
                            bool timed = plan.Ops.Contains("insert") && plan.Bulk;
                            double insertSeconds = await TierRunners.BulkInsertAsync(store, rows, threads,
                                done => progress(timed ? $"insert bulk: {label}" : $"loading (not timed): {label}", done, rows), token);
                            long stored = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
                            exact &= stored == rows;
                            if (timed)
                            {
                                found.Add(Row("insert", "bulk", stored, insertSeconds, stored == rows ? null : $"{rows - stored} rows missing"));
                            }

                            await BenchSeeder.SettleAsync(database.Options, token);
                            if (plan.Ops.Contains("select"))
                            {
                                var (read, seconds) = await runners.SelectAsync(database.Options, threads, done => progress($"select: {label}", done, rows), token);
                                exact &= read == rows;
                                found.Add(Row("select", "reader", read, seconds, read == rows ? null : $"read {read} of {rows}"));
                            }

                            if (plan.Ops.Contains("archive"))
                            {
                                var (moved, seconds) = await runners.ArchiveAsync(database.Options, BulkReadings.EndOf(rows), threads, done => progress($"archive: {label}", done, rows), token);
                                long archived = await store.CountAsync(ReadingKind.Biosensor, StorageTier.Archive, token);
                                exact &= moved == rows && archived == rows;
                                found.Add(Row("archive", "saito", moved, seconds, archived == rows ? $"to {run.Archive.Name}" : $"archive holds {archived} of {rows}"));
                            }

                            return found;
                        });
                        results.AddRange(measured);
                        PrintLines(measured);
                    }

                    if (plan.RowByRow)
                    {
                        long count = (plan.RowByRowRows + BulkReadings.Series - 1) / BulkReadings.Series * BulkReadings.Series;
                        var measured = await BenchProgress.RunAsync(async progress =>
                        {
                            await using var database = await BenchDatabase.CreateAsync(run, $"tiers_rbr_{tier.Name}_{threads}", threads, TierRunners.BulkBatch, token);
                            await using (var store = ReadingStores.Create(database.Options, loggers))
                            {
                                await BenchSeeder.PrepareAsync(store, token);
                            }

                            double seconds = await runners.RowByRowInsertAsync(database.Options, count, threads, done => progress($"insert row-by-row: {label}", done, count), token);
                            await using var counter = ReadingStores.Create(database.Options, loggers);
                            long stored = await counter.CountAsync(ReadingKind.Biosensor, StorageTier.Hot, token);
                            exact &= stored == count;
                            return Row("insert", "row-by-row", stored, seconds, stored == count ? null : $"{count - stored} rows missing");
                        });
                        results.Add(measured);
                        PrintLines([measured]);
                    }
                }
            }
        }

        PrintStudyTable(results, plan);
        PrintRatios(results);
        if (outDir is not null)
        {
            var files = await ReportWriter.WriteAsync(outDir, results, new RunContext("tiers", BenchOptions.CommandLine(), machine, started), token);
            BenchOptions.PrintFiles(files);
        }

        if (!exact)
        {
            AnsiConsole.MarkupLine("[red]Some step did not store, read or move every row (see the notes).[/]");
        }

        return exact ? 0 : 1;
    }

    private static void PrintLines(IEnumerable<ResultRow> rows)
    {
        foreach (var r in rows)
        {
            AnsiConsole.MarkupLine(Markup.Escape(string.Create(CultureInfo.InvariantCulture,
                $"  {r.Op} {r.Method}, {r.Tier}, {r.Key}, {r.Threads} thread(s): {r.Rows:N0} rows in {r.Seconds:F2} s = {r.RowsPerS:N0} rows/s{(r.Note is null ? string.Empty : " (" + r.Note + ")")}")));
        }
    }

    /// <summary>The study's shape: one line per operation and tier, a column per thread count; seconds, and rows/s beneath.</summary>
    private static void PrintStudyTable(List<ResultRow> results, TiersPlan plan)
    {
        var table = new Table().AddColumn("operation").AddColumn("tier");
        foreach (int t in plan.Threads)
        {
            table.AddColumn(new TableColumn($"{t} thread{(t == 1 ? string.Empty : "s")}").RightAligned());
        }

        foreach (var group in results.GroupBy(r => (r.Op, r.Method, r.Key, r.Tier)))
        {
            string op = group.Key.Op == "insert" ? $"insert {group.Key.Method}, {group.Key.Key} key" : $"{group.Key.Op}, {group.Key.Key} key";
            var cells = new List<string> { Markup.Escape(op), Markup.Escape(group.Key.Tier) };
            foreach (int t in plan.Threads)
            {
                var r = group.FirstOrDefault(x => x.Threads == t);
                cells.Add(r is null ? "-" : string.Create(CultureInfo.InvariantCulture, $"{r.Seconds:F1} s\n{r.RowsPerS:N0}/s"));
            }

            table.AddRow(cells.ToArray());
        }

        AnsiConsole.MarkupLine($"[bold]Seconds and rows/s[/] ({results.FirstOrDefault()?.Rows:N0} rows per bulk step; row by row {results.FirstOrDefault(r => r.Method == "row-by-row")?.Rows:N0}):");
        AnsiConsole.Write(table);
        var study = new Table().AddColumns("the study (SQL Server 2014, 4 cores, row by row, ~16M rows)", "tier", "1 thread", "16 threads", "32 threads");
        foreach (var (op, tier, seconds) in s_study)
        {
            study.AddRow(op, tier, Cell(seconds[0]), Cell(seconds[1]), Cell(seconds[2]));
        }

        AnsiConsole.Write(study);

        static string Cell(double seconds) => string.Create(CultureInfo.InvariantCulture, $"{seconds:N0} s\n{StudyRows / seconds:N0}/s");
    }

    /// <summary>Bulk against row-by-row, same database, tier, key and threads, this run.</summary>
    private static void PrintRatios(List<ResultRow> results)
    {
        var pairs = results.Where(r => r is { Op: "insert", Method: "bulk" })
            .Select(b => (Bulk: b, Row: results.FirstOrDefault(r => r is { Op: "insert", Method: "row-by-row" } && r.Tier == b.Tier && r.Key == b.Key && r.Threads == b.Threads)))
            .Where(p => p.Row is not null)
            .ToList();
        if (pairs.Count == 0)
        {
            return;
        }

        var table = new Table().AddColumns("tier", "key", "threads", "bulk rows/s", "row-by-row rows/s", "bulk / row-by-row");
        foreach (var (bulk, row) in pairs)
        {
            table.AddRow(Markup.Escape(bulk.Tier), bulk.Key, bulk.Threads.ToString(CultureInfo.InvariantCulture), bulk.RowsPerS.ToString("N0", CultureInfo.InvariantCulture),
                row!.RowsPerS.ToString("N0", CultureInfo.InvariantCulture), string.Create(CultureInfo.InvariantCulture, $"{bulk.RowsPerS / row.RowsPerS:F1}x"));
        }

        AnsiConsole.MarkupLine("[bold]Bulk against row-by-row[/] (same database, tier, key and threads, this run):");
        AnsiConsole.Write(table);
    }
}

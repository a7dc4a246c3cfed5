using System.CommandLine;
using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.Logging;
using Saito.LoadTest.Common;
using Saito.LoadTest.Results;
using Saito.Readings;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Storage.Queries;
using Spectre.Console;

namespace Saito.LoadTest.Query;

/// <summary>
/// <c>query</c>: issue 12's readings-query target. Stores a day of a full class (<see cref="QueryClass"/>: 16 students x
/// 20 sensors, 8 school hours, about 35 million readings) through Saito's bulk path on a fresh database, settles it
/// (PostgreSQL vacuumed and analyzed, SQLite checkpointed), then times N repetitions of each query a dashboard makes:
/// a two-hour class for one sensor at 4 Hz (28,800 readings), its downsample at 10 s and 1 min buckets, and the latest
/// values of every device of the class (320; one query per kind). Reports p50/p99/max ms against the 100 ms target.
/// </summary>
internal static class QueryCommand
{
    public const double TargetMs = 100;

    public static Command Create()
    {
        var options = new BenchOptions();
        var students = new Option<int?>("--students") { Description = "Students in the class, 20 sensors each (default 16; --quick 2)" };
        var hours = new Option<double?>("--hours") { Description = "School hours stored (default 8; --quick 0.1)" };
        var repeat = new Option<int?>("--repeat") { Description = "Timed repetitions of each query, after 3 untimed (default 50; --quick 3)" };
        var writers = new Option<int?>("--writers") { Description = "Concurrent WriteAsync calls while loading (default 1 for sqlite, 2 otherwise)" };
        var quick = new Option<bool>("--quick") { Description = "2 students, 6 minutes, 3 repetitions: for smoke tests" };
        var command = new Command("query", "Readings queries against a day of a full class: a two-hour range of one 4 Hz sensor, its downsample, the latest values; p50/p99/max ms, target < 100 ms.")
        {
            students, hours, repeat, writers, quick,
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
                bool isQuick = parse.GetValue(quick);
                var plan = new QueryPlan(
                    target,
                    parse.GetValue(students) ?? (isQuick ? 2 : 16),
                    parse.GetValue(hours) ?? (isQuick ? 0.1 : 8),
                    parse.GetValue(repeat) ?? (isQuick ? 3 : 50),
                    parse.GetValue(writers) ?? (target.Database == StorageProvider.Sqlite ? 1 : 2));
                if (plan.Students < 1 || plan.Hours <= 0 || plan.Hours > 24 || plan.Repeat < 1 || plan.Writers < 1)
                {
                    AnsiConsole.MarkupLine("[red]--students, --repeat and --writers must be at least 1, --hours above 0 and at most 24.[/]");
                    return 2;
                }

                return await RunAsync(plan, options.OutDir(parse), token);
            }
            finally
            {
                options.CleanUp(parse, target);
            }
        });
        return command;
    }

    private sealed record QueryPlan(BenchTarget Target, int Students, double Hours, int Repeat, int Writers);

    /// <summary>One timed query: its name in the results, and a call answering the rows it returned.</summary>
    private sealed record TimedQuery(string Op, long ExpectedRows, Func<CancellationToken, Task<long>> Run);

    private static async Task<int> RunAsync(QueryPlan plan, string? outDir, CancellationToken token)
    {
        using var loggers = LoggerFactory.Create(b => b.AddSimpleConsole().SetMinimumLevel(LogLevel.Warning));
        var target = plan.Target;
        string machine = await BenchOptions.DescribeMachineAsync(target, token);
        var started = DateTimeOffset.UtcNow;
        await using var database = await BenchDatabase.CreateAsync(target, "query", plan.Writers, 10_000, token);
        await using var store = ReadingStores.Create(database.Options, loggers);
        await store.EnsureSchemaAsync(token);
        var day = await QueryClass.RegisterAsync(store, plan.Students, plan.Hours, token);
        AnsiConsole.MarkupLine($"[bold]query {target.DbName}[/] ({target.KeyName} keys): {plan.Students} students x {QueryClass.SensorsPerStudent} sensors, " +
            $"{plan.Hours:0.##} h = {day.Readings:N0} readings; {plan.Repeat} timed repetitions of each query");
        AnsiConsole.MarkupLine(Markup.Escape(machine));

        var loadClock = Stopwatch.StartNew();
        await BenchProgress.RunAsync(async progress =>
        {
            await LoadAsync(store, day, plan.Writers, done => progress("storing the day (bulk path)", done, day.Readings), token);
            return true;
        });
        double loadSeconds = loadClock.Elapsed.TotalSeconds;
        await RetryAsync(store, () => BenchSeeder.SettleAsync(database.Options, token));
        AnsiConsole.MarkupLine(string.Create(CultureInfo.InvariantCulture,
            $"Stored {day.Readings:N0} readings in {loadSeconds:F1} s ({day.Readings / loadSeconds:N0}/s, {plan.Writers} writer(s)); settled."));

        var queries = (IReadingQueries)store;
        var results = new List<ResultRow>();
        bool exact = true;
        foreach (var query in Queries(day, queries))
        {
            var (samples, rows) = await TimeAsync(query, plan.Repeat, token);
            exact &= rows == query.ExpectedRows;
            var sorted = samples.Order().ToArray();
            double p50 = Percentile(sorted, 0.50);
            double p99 = Percentile(sorted, 0.99);
            string verdict = p99 < TargetMs ? "met" : "missed";
            results.Add(new ResultRow
            {
                Command = "query",
                Op = query.Op,
                Db = target.DbName,
                Tier = target.Hot.Name,
                Key = target.KeyName,
                Threads = 1,
                Method = "saito",
                Rows = rows,
                Seconds = p50 / 1000,
                P50Ms = p50,
                P99Ms = p99,
                MaxMs = sorted[^1],
                Note = string.Create(CultureInfo.InvariantCulture,
                    $"{plan.Repeat} repetitions over {day.Readings:N0} stored readings; p99 < {TargetMs:F0} ms: {verdict}") +
                    (rows == query.ExpectedRows ? string.Empty : string.Create(CultureInfo.InvariantCulture, $"; {rows} rows, expected {query.ExpectedRows}")),
            });
        }

        Print(results);
        if (outDir is not null)
        {
            var files = await ReportWriter.WriteAsync(outDir, results, new RunContext("query", BenchOptions.CommandLine(), machine, started), token);
            BenchOptions.PrintFiles(files);
        }

        if (!exact)
        {
            AnsiConsole.MarkupLine("[red]Some query did not answer the expected number of rows (see the notes).[/]");
        }

        return exact ? 0 : 1;
    }

    /// <summary>The day, a slice of seconds per batch, with <paramref name="writers"/> calls in flight.</summary>
    private static async Task LoadAsync(IReadingStore store, QueryClass day, int writers, Action<long> progress, CancellationToken token)
    {
        // About 10,000 readings per batch: the writer pool's batch size under a full class.
        int secondsPerBatch = (int)Math.Max(1, 10_000 / day.ReadingsPerSecond);
        int next = -secondsPerBatch;
        long written = 0;
        await Task.WhenAll(Enumerable.Range(0, writers).Select(_ => Task.Run(async () =>
        {
            var batch = new ReadingBatch();
            int first;
            while ((first = Interlocked.Add(ref next, secondsPerBatch)) < day.Seconds)
            {
                batch.Clear();
                day.Fill(batch, first, Math.Min(secondsPerBatch, day.Seconds - first));
                await RetryAsync(store, () => store.WriteAsync(batch, token));
                progress(Interlocked.Add(ref written, batch.ReadingCount));
            }
        }, token)));
    }

    /// <summary>
    /// A step again after a transient failure (up to 5 tries): on a shared database server another tool may end this
    /// one's connections (57P01, "terminating connection due to administrator command"); a batch is all or nothing and
    /// its readings already stored are skipped, so writing it again is safe.
    /// </summary>
    private static async Task RetryAsync(IReadingStore store, Func<Task> step)
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                await step();
                return;
            }
            catch (Exception e) when (attempt < 5 && store.IsTransient(e))
            {
                await Task.Delay(TimeSpan.FromMilliseconds(200 * attempt));
            }
        }
    }

    private static IEnumerable<TimedQuery> Queries(QueryClass day, IReadingQueries queries)
    {
        var (from, to) = day.RangeWindow();
        DeviceInterval[] sensor = [new(day.DeviceIds[day.RangeSensor], from, to)];
        long rangeRows = (long)(to - from).TotalSeconds * QueryClass.FastHz;
        yield return new TimedQuery("range", rangeRows, async token =>
            (await queries.ReadRangeAsync(ReadingKind.Pressure, sensor, ReadingQueryLimits.MaxRangeRows, null, token)).Count);
        foreach (var (name, bucket) in new[] { ("downsample-10s", TimeSpan.FromSeconds(10)), ("downsample-1min", TimeSpan.FromMinutes(1)) })
        {
            long buckets = (long)Math.Ceiling((to - from) / bucket);
            yield return new TimedQuery(name, buckets, async token =>
                (await queries.DownsampleAsync(ReadingKind.Pressure, sensor, from, to, bucket, null, token)).Count);
        }

        var byKind = Enumerable.Range(0, day.DeviceIds.Length).GroupBy(QueryClass.KindOf, s => day.DeviceIds[s]).ToList();
        yield return new TimedQuery("latest", day.DeviceIds.Length, async token =>
        {
            long rows = 0;
            foreach (var kind in byKind)
            {
                rows += (await queries.LatestAsync(kind.Key, kind.ToArray(), null, token)).Count;
            }

            return rows;
        });
    }

    /// <summary>Three untimed calls, then <paramref name="repeat"/> timed ones; the milliseconds of each and the rows of the last.</summary>
    private static async Task<(double[] Samples, long Rows)> TimeAsync(TimedQuery query, int repeat, CancellationToken token)
    {
        long rows = 0;
        for (int i = 0; i < 3; i++)
        {
            rows = await query.Run(token);
        }

        var samples = new double[repeat];
        for (int i = 0; i < repeat; i++)
        {
            long begin = Stopwatch.GetTimestamp();
            rows = await query.Run(token);
            samples[i] = Stopwatch.GetElapsedTime(begin).TotalMilliseconds;
        }

        return (samples, rows);
    }

    /// <summary>Nearest-rank percentile of sorted samples.</summary>
    private static double Percentile(double[] sorted, double p) => sorted[Math.Clamp((int)Math.Ceiling(p * sorted.Length) - 1, 0, sorted.Length - 1)];

    private static void Print(List<ResultRow> results)
    {
        var table = new Table().AddColumns("query", "database", "keys", "rows", "p50 ms", "p99 ms", "max ms", $"p99 < {TargetMs:F0} ms");
        foreach (var r in results)
        {
            table.AddRow(r.Op, r.Db, r.Key, r.Rows.ToString("N0", CultureInfo.InvariantCulture),
                r.P50Ms!.Value.ToString("F1", CultureInfo.InvariantCulture), r.P99Ms!.Value.ToString("F1", CultureInfo.InvariantCulture),
                r.MaxMs!.Value.ToString("F1", CultureInfo.InvariantCulture), r.P99Ms < TargetMs ? "[green]met[/]" : "[red]missed[/]");
        }

        AnsiConsole.Write(table);
    }
}

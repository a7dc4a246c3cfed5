using System.Text.Json;
using Saito.LoadTest.Archive;
using Saito.LoadTest.Tests.Classroom;
using Saito.LoadTest.Tiers;

namespace Saito.LoadTest.Tests.Tiers;

/// <summary>
/// <c>tiers</c> and <c>archive</c> run in-process with tiny counts against real SQLite files and the real PostgreSQL
/// of <c>SAITO_TEST_POSTGRES</c>; what they write to <c>--out</c> is read back and checked field by field. In the
/// classroom runs' collection: one live console display at a time.
/// </summary>
[Collection(ClassroomRuns.Name)]
public sealed class TiersCommandTests(PostgresServer postgres) : IDisposable
{
    private static readonly string[] s_fields = ["command", "op", "db", "tier", "key", "threads", "method", "rows", "seconds", "rows_per_s", "p50_ms", "p99_ms", "max_ms"];

    private readonly string _dir = Directory.CreateTempSubdirectory("saito-tiers-test-").FullName;

    public void Dispose()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dir, recursive: true);
    }

    private static List<JsonElement> ReadResults(string outDir)
    {
        string path = Path.Combine(outDir, "results.json");
        File.Exists(path).ShouldBeTrue("results.json was not written");
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        var rows = document.RootElement.EnumerateArray().Select(e => e.Clone()).ToList();
        foreach (var row in rows)
        {
            foreach (string field in s_fields)
            {
                row.TryGetProperty(field, out _).ShouldBeTrue($"results.json row {row} has no '{field}'");
            }

            row.GetProperty("seconds").GetDouble().ShouldBeGreaterThan(0);
            row.GetProperty("rows_per_s").GetDouble().ShouldBe(row.GetProperty("rows").GetInt64() / row.GetProperty("seconds").GetDouble(), 0.01);
        }

        return rows;
    }

    [Fact]
    public async Task Quick_matrix_on_sqlite_measures_every_op_key_thread_count_and_method_and_stores_every_row()
    {
        string outDir = Path.Combine(_dir, "out");
        var run = await ToolRun.InvokeAsync(TiersCommand.Create(), "--quick", "--work", Path.Combine(_dir, "work"), "--tier", $"fast={Path.Combine(_dir, "fast")}",
            "--archive-tier", $"slow={Path.Combine(_dir, "slow")}", "--out", outDir);

        run.Exit.ShouldBe(0, "every row stored, read back and archived" + run.Why);
        var rows = ReadResults(outDir);
        string[] keys = ["natural", "guid", "sequential-guid"];
        int[] threads = [1, 16, 32];
        rows.Count.ShouldBe(keys.Length * threads.Length * 4, "insert bulk, insert row-by-row, select and archive for every key and thread count");
        foreach (string key in keys)
        {
            foreach (int t in threads)
            {
                JsonElement One(string op, string method) => rows.Single(r => r.GetProperty("op").GetString() == op && r.GetProperty("method").GetString() == method
                    && r.GetProperty("key").GetString() == key && r.GetProperty("threads").GetInt32() == t);
                One("insert", "bulk").GetProperty("rows").GetInt64().ShouldBe(25_600);
                One("select", "reader").GetProperty("rows").GetInt64().ShouldBe(25_600);
                One("archive", "saito").GetProperty("rows").GetInt64().ShouldBe(25_600);
                One("insert", "row-by-row").GetProperty("rows").GetInt64().ShouldBe(2_560);
            }
        }

        rows.ShouldAllBe(r => r.GetProperty("command").GetString() == "tiers" && r.GetProperty("db").GetString() == "sqlite" && r.GetProperty("tier").GetString() == "fast");
        // The hot tier's files went where --tier said, the archive's where --archive-tier said (left empty afterwards).
        Directory.Exists(Path.Combine(_dir, "fast")).ShouldBeTrue();
        Directory.Exists(Path.Combine(_dir, "slow")).ShouldBeTrue();
        var csv = await File.ReadAllLinesAsync(Path.Combine(outDir, "results.csv"), TestContext.Current.CancellationToken);
        csv.Length.ShouldBe(rows.Count + 1);
        File.Exists(Path.Combine(outDir, "report.html")).ShouldBeTrue();
    }

    [Fact]
    public async Task Postgres_matrix_with_two_tablespace_tiers_stores_reads_and_archives_every_row()
    {
        var (hot, archive) = PostgresServer.Tablespaces;
        string outDir = Path.Combine(_dir, "out-pg");
        var run = await ToolRun.InvokeAsync(TiersCommand.Create(), "--db", "postgres", "--pg", postgres.ConnectionString, "--tier", $"fast=@{hot}", "--tier", $"slow=@{archive}",
            "--keys", "natural,sequential-guid", "--threads", "1,4", "--rows", "5120", "--row-by-row-rows", "512", "--work", Path.Combine(_dir, "work-pg"), "--out", outDir);

        run.Exit.ShouldBe(0, run.Why);
        var rows = ReadResults(outDir);
        rows.Count.ShouldBe(2 * 2 * 2 * 4, "2 tiers x 2 keys x 2 thread counts x (insert bulk, insert row-by-row, select, archive)");
        rows.Where(r => r.GetProperty("method").GetString() != "row-by-row").ShouldAllBe(r => r.GetProperty("rows").GetInt64() == 5120);
        rows.Where(r => r.GetProperty("method").GetString() == "row-by-row").ShouldAllBe(r => r.GetProperty("rows").GetInt64() == 512);
        rows.Select(r => r.GetProperty("tier").GetString()).Distinct().Order().ShouldBe(["fast", "slow"]);
        rows.ShouldAllBe(r => r.GetProperty("db").GetString() == "postgres");
        // Every database the run made was dropped.
        (await postgres.ScalarAsync("SELECT count(*) FROM pg_database WHERE datname LIKE 'saito_tiers_%'")).ShouldBe(0L);
    }

    [Fact]
    public async Task Archive_command_moves_every_row_both_ways_and_reports_the_inserts_it_delayed()
    {
        string outDir = Path.Combine(_dir, "out-archive");
        var run = await ToolRun.InvokeAsync(ArchiveCommand.Create(), "--rows", "20000", "--threads", "1,2", "--batch-rows", "3000", "--work", Path.Combine(_dir, "work-a"), "--out", outDir);

        run.Exit.ShouldBe(0, "every old row moved exactly once, the probe's rows left in hot" + run.Why);
        var rows = ReadResults(outDir);
        rows.Count.ShouldBe(4);
        rows.Select(r => (r.GetProperty("method").GetString(), r.GetProperty("threads").GetInt32())).Order()
            .ShouldBe([("saito", 1), ("saito", 2), ("set-based", 1), ("set-based", 2)]);
        foreach (var row in rows)
        {
            row.GetProperty("op").GetString().ShouldBe("archive");
            row.GetProperty("rows").GetInt64().ShouldBe(20_224, "20,000 rounded up to whole seconds of 256 series");
            row.GetProperty("max_ms").GetDouble().ShouldBeGreaterThan(0, "the insert probe ran and was timed");
            row.GetProperty("p99_ms").GetDouble().ShouldBeLessThanOrEqualTo(row.GetProperty("max_ms").GetDouble());
        }
    }

    [Fact]
    public async Task Archive_command_on_postgres_moves_every_row_with_saito_and_set_based()
    {
        var run = await ToolRun.InvokeAsync(ArchiveCommand.Create(), "--db", "postgres", "--pg", postgres.ConnectionString, "--keys", "guid", "--rows", "10000", "--threads", "2",
            "--batch-rows", "2500", "--work", Path.Combine(_dir, "work-apg"), "--out", Path.Combine(_dir, "out-apg"));

        run.Exit.ShouldBe(0, run.Why);
        var rows = ReadResults(Path.Combine(_dir, "out-apg"));
        rows.Select(r => r.GetProperty("method").GetString()).Order().ShouldBe(["saito", "set-based"]);
        rows.ShouldAllBe(r => r.GetProperty("rows").GetInt64() == 10_240 && r.GetProperty("key").GetString() == "guid");
    }

    [Theory]
    [InlineData("--tier", "nopath")]
    [InlineData("--keys", "natural,uuid7")]
    [InlineData("--ops", "insert,update")]
    [InlineData("--db", "postgres")]
    public async Task A_bad_option_stops_the_run_before_it_starts_with_exit_code_2(string option, string value)
    {
        string outDir = Path.Combine(_dir, "never");
        var previous = Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES");
        Environment.SetEnvironmentVariable("SAITO_BENCH_POSTGRES", null);
        try
        {
            var run = await ToolRun.InvokeAsync(TiersCommand.Create(), "--quick", "--work", Path.Combine(_dir, "work-bad"), option, value, "--out", outDir);
            run.Exit.ShouldBe(2);
            Directory.Exists(outDir).ShouldBeFalse("nothing was measured");
        }
        finally
        {
            Environment.SetEnvironmentVariable("SAITO_BENCH_POSTGRES", previous);
        }
    }
}

using System.Text.Json;
using Saito.LoadTest.Query;
using Saito.LoadTest.Tests.Classroom;

namespace Saito.LoadTest.Tests.Query;

/// <summary>
/// <c>query --quick</c> runs in-process against real SQLite files: a small class stored, each query timed; what it writes
/// to <c>--out</c> is read back and checked. In the classroom runs' collection: one live console display at a time.
/// </summary>
[Collection(ClassroomRuns.Name)]
public sealed class QueryCommandTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("saito-query-test-").FullName;

    public void Dispose()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dir, recursive: true);
    }

    [Fact]
    public async Task Quick_run_on_sqlite_times_every_query_and_each_answers_its_rows()
    {
        string outDir = Path.Combine(_dir, "out");

        var run = await ToolRun.InvokeAsync(QueryCommand.Create(), "--quick", "--work", Path.Combine(_dir, "work"), "--out", outDir);

        run.Exit.ShouldBe(0, "every query answered the rows expected" + run.Why);
        using var document = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(outDir, "results.json"), TestContext.Current.CancellationToken));
        var rows = document.RootElement.EnumerateArray().ToDictionary(r => r.GetProperty("op").GetString()!, r => r.Clone());
        // --quick: 2 students (40 sensors), 6 minutes stored; the range is one 4 Hz sensor over all 6 minutes.
        rows.Keys.ShouldBe(["range", "downsample-10s", "downsample-1min", "latest"], ignoreOrder: true);
        rows["range"].GetProperty("rows").GetInt64().ShouldBe(6 * 60 * 4);
        rows["downsample-10s"].GetProperty("rows").GetInt64().ShouldBe(36);
        rows["downsample-1min"].GetProperty("rows").GetInt64().ShouldBe(6);
        rows["latest"].GetProperty("rows").GetInt64().ShouldBe(40);
        foreach (var row in rows.Values)
        {
            row.GetProperty("command").GetString().ShouldBe("query");
            row.GetProperty("db").GetString().ShouldBe("sqlite");
            row.GetProperty("seconds").GetDouble().ShouldBeGreaterThan(0);
            row.GetProperty("p50_ms").GetDouble().ShouldBeGreaterThan(0);
            row.GetProperty("p99_ms").GetDouble().ShouldBeGreaterThanOrEqualTo(row.GetProperty("p50_ms").GetDouble());
            row.GetProperty("max_ms").GetDouble().ShouldBeGreaterThanOrEqualTo(row.GetProperty("p99_ms").GetDouble());
        }

        (await File.ReadAllLinesAsync(Path.Combine(outDir, "results.csv"), TestContext.Current.CancellationToken)).Length.ShouldBe(5);
    }
}

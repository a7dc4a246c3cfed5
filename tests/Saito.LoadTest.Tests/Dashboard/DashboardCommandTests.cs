using System.Text.Json;
using Saito.LoadTest.Dashboard;
using Saito.LoadTest.Tests.Classroom;

namespace Saito.LoadTest.Tests.Dashboard;

/// <summary>
/// <c>dashboard --quick</c> end to end on SQLite: Saito.Server started, the class set up through the API, a run with no
/// dashboard and a run with two chromium pages, every acknowledged reading stored and every page's tiles updated.
/// Figures are not asserted (speed is measured by running the tool, not here), only that they were measured.
/// </summary>
[Collection(ClassroomRuns.Name)]
public sealed class DashboardCommandTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("saito-dashboard-test-").FullName;

    public void Dispose()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dir, recursive: true);
    }

    [Fact]
    public async Task Quick_run_measures_the_rate_without_and_with_dashboards_and_the_tiles_latency()
    {
        string outDir = Path.Combine(_dir, "out");
        var run = await ToolRun.InvokeAsync(DashboardCommand.Create(), "--quick", "--work", Path.Combine(_dir, "db"), "--out", outDir);

        string json = Path.Combine(outDir, "dashboard.json");
        File.Exists(json).ShouldBeTrue($"the run wrote no dashboard.json{run.Why}");
        run.Exit.ShouldBe(0, run.Why);
        using var doc = JsonDocument.Parse(await File.ReadAllTextAsync(json, TestContext.Current.CancellationToken));
        var details = doc.RootElement;
        details.GetProperty("passed").GetBoolean().ShouldBeTrue();
        var runs = details.GetProperty("runs").EnumerateArray().ToList();
        runs.Select(r => r.GetProperty("dashboards").GetInt32()).ShouldBe([0, 2], "without, then with, back to back");
        foreach (var r in runs)
        {
            r.GetProperty("published_readings").GetInt64().ShouldBeGreaterThan(100);
            r.GetProperty("committed_readings").GetInt64().ShouldBe(r.GetProperty("acked_readings").GetInt64());
            r.GetProperty("dead_letters").GetInt64().ShouldBe(0);
        }

        var with = runs[1];
        with.GetProperty("tile_latency").GetProperty("count").GetInt32().ShouldBeGreaterThan(0);
        foreach (var page in with.GetProperty("pages").EnumerateArray())
        {
            page.GetProperty("updates").GetInt32().ShouldBeGreaterThan(0);
            page.GetProperty("tiles_updated").GetInt32().ShouldBe(4, "every student's tile showed the run's readings");
        }

        var targets = details.GetProperty("targets");
        targets.GetProperty("tile_p99_measured_ms").GetDouble().ShouldBeGreaterThan(0);
        targets.GetProperty("rate_ratio_measured").GetDouble().ShouldBeGreaterThan(0);
        File.Exists(Path.Combine(outDir, "dashboard.md")).ShouldBeTrue();
        Directory.Exists(Path.Combine(_dir, "db")).ShouldBeFalse("the SQLite files are deleted without --keep");
    }
}

using System.Text.Json;
using Saito.LoadTest.Classroom;

namespace Saito.LoadTest.Tests.Classroom;

/// <summary>
/// The classroom runs: one at a time (each starts servers and drives a class; Spectre.Console's live displays do
/// not share the console), with the PostgreSQL server of <c>SAITO_TEST_POSTGRES</c>.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class ClassroomRuns : ICollectionFixture<PostgresServer>
{
    public const string Name = "Classroom runs";
}

/// <summary>What one run of <c>classroom</c> left: its exit code, its results.json row and classroom.json.</summary>
internal sealed record ClassroomOutcome(int ExitCode, JsonElement Row, JsonElement Details)
{
    public static async Task<ClassroomOutcome> RunAsync(string outDir, params string[] args)
    {
        var run = await ToolRun.InvokeAsync(ClassroomCommand.Create(), [.. args, "--out", outDir]);
        string results = Path.Combine(outDir, "results.json");
        if (!File.Exists(results))
        {
            string log = Path.Combine(outDir, "server.log");
            string tail = File.Exists(log) ? string.Join('\n', File.ReadLines(log).TakeLast(40)) : "(no server.log)";
            Assert.Fail($"the run wrote no results.json{run.Why}\nThe last lines of the server's log:\n{tail}");
        }

        using var rows = JsonDocument.Parse(await File.ReadAllTextAsync(results, TestContext.Current.CancellationToken));
        rows.RootElement.GetArrayLength().ShouldBe(1);
        using var details = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(outDir, "classroom.json"), TestContext.Current.CancellationToken));
        return new ClassroomOutcome(run.Exit, rows.RootElement[0].Clone(), details.RootElement.Clone());
    }

    public long Published => Details.GetProperty("published_readings").GetInt64();

    /// <summary>Every published reading acknowledged, committed and counted; latency present and ordered, over time too.</summary>
    public void ShouldHaveStoredEverything(string db, string method, int threads, string latencySource)
    {
        ExitCode.ShouldBe(0);
        Row.GetProperty("command").GetString().ShouldBe("classroom");
        Row.GetProperty("op").GetString().ShouldBe("publish");
        Row.GetProperty("db").GetString().ShouldBe(db);
        Row.GetProperty("tier").GetString().ShouldBe("default");
        Row.GetProperty("key").GetString().ShouldBe("natural");
        Row.GetProperty("threads").GetInt32().ShouldBe(threads);
        Row.GetProperty("method").GetString().ShouldBe(method);
        Details.GetProperty("latency_source").GetString().ShouldBe(latencySource);

        Published.ShouldBeGreaterThan(100);
        Details.GetProperty("acked_readings").GetInt64().ShouldBe(Published);
        Details.GetProperty("committed_readings").GetInt64().ShouldBe(Published);
        Row.GetProperty("rows").GetInt64().ShouldBe(Published);
        Details.GetProperty("dead_letters").GetInt64().ShouldBe(0);
        Row.GetProperty("seconds").GetDouble().ShouldBeGreaterThan(0);

        double p50 = Row.GetProperty("p50_ms").GetDouble();
        double p99 = Row.GetProperty("p99_ms").GetDouble();
        double max = Row.GetProperty("max_ms").GetDouble();
        p50.ShouldBeGreaterThan(0);
        p50.ShouldBeLessThanOrEqualTo(p99);
        p99.ShouldBeLessThanOrEqualTo(max);
        Details.GetProperty("latency").GetProperty("readings").GetInt64().ShouldBe(Published, "a latency for every reading");

        var timeline = Row.GetProperty("timeline").EnumerateArray().ToList();
        timeline.ShouldNotBeEmpty();
        double lastT = 0;
        foreach (var point in timeline)
        {
            point.GetProperty("t_s").GetDouble().ShouldBeGreaterThan(lastT);
            lastT = point.GetProperty("t_s").GetDouble();
            point.GetProperty("p50_ms").GetDouble().ShouldBeLessThanOrEqualTo(point.GetProperty("p99_ms").GetDouble());
            point.GetProperty("p99_ms").GetDouble().ShouldBeLessThanOrEqualTo(point.GetProperty("max_ms").GetDouble());
            point.GetProperty("max_ms").GetDouble().ShouldBeLessThanOrEqualTo(max);
        }

        // The timeline has a point only for a second in which something committed; in a short run on a busy machine
        // every commit can fall in the last point, after the publishing ended, so the publish rate is checked for the run.
        timeline.Sum(p => p.GetProperty("committed_per_s").GetDouble()).ShouldBeGreaterThan(0);
        Details.GetProperty("published_readings_per_s").GetDouble().ShouldBeGreaterThan(0);
        Details.GetProperty("committed_readings_per_s").GetDouble().ShouldBeGreaterThan(0);
    }
}

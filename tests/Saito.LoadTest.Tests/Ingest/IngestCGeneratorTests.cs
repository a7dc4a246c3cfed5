using System.Text.Json;
using Saito.LoadTest.Ingest;
using Saito.LoadTest.Tests.Classroom;
using Spectre.Console;

namespace Saito.LoadTest.Tests.Ingest;

/// <summary>
/// <c>ingest --generator c</c>: the C generator on libmosquitto (benchmarks/loadgen-c, built by the tool with make) runs a
/// short load against real Mosquitto and a real Saito.Server on SQLite files, and the rows in the database are counted
/// against what it saw acknowledged. In the classroom runs' collection: one run at a time, and one console.
/// </summary>
[Collection(ClassroomRuns.Name)]
public sealed class IngestCGeneratorTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("saito-ingest-c-test-").FullName;

    public void Dispose()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dir, recursive: true);
    }

    /// <summary>Runs <c>ingest</c> with the console captured: what it printed, without colour.</summary>
    private static async Task<(ToolRun Run, string Console)> RunCapturingConsoleAsync(params string[] args)
    {
        var console = new StringWriter();
        var previous = AnsiConsole.Console;
        AnsiConsole.Console = AnsiConsole.Create(new AnsiConsoleSettings { Out = new AnsiConsoleOutput(console), Ansi = AnsiSupport.No });
        try
        {
            var run = await ToolRun.InvokeAsync(IngestCommand.Create(), args);
            return (run, console.ToString());
        }
        finally
        {
            AnsiConsole.Console = previous;
        }
    }

    /// <summary>A short run of six sensors, against Mosquitto and then Saito on SQLite files, with <paramref name="generator"/>.</summary>
    private Task<ToolRun> RunShortAgainstMosquittoAsync(string generator, string outDir) =>
        ToolRun.InvokeAsync(IngestCommand.Create(), "--preset", "sensors", "--generator", generator, "--against-mosquitto",
            "--connections", "6", "--inflight", "20", "--warmup", "1", "--duration", "3", "--sample-seconds", "1",
            "--work", Path.Combine(_dir, "db"), "--out", outDir);

    /// <summary>A short run against Mosquitto and Saito that ended well: every acknowledged reading stored. The acknowledged count.</summary>
    private static long ShouldHaveStoredEveryAcknowledgedReading(ToolRun run, JsonElement results, string generator)
    {
        run.Exit.ShouldBe(0, "every acknowledged reading stored (the ratio target is reported, not asserted)" + run.Why);
        results.GetProperty("generator").GetString().ShouldBe(generator);
        long acked = results.GetProperty("acked_readings").GetInt64();
        acked.ShouldBeGreaterThan(0);
        results.GetProperty("stored_rows").GetInt64().ShouldBe(acked, "rows in the database, the warm-up's taken off, equal the acknowledged readings");
        results.GetProperty("every_acked_reading_stored").GetBoolean().ShouldBeTrue();
        results.GetProperty("mosquitto_accepted_readings_per_s").GetDouble().ShouldBeGreaterThan(0);
        return acked;
    }

    private static JsonElement Read(string path)
    {
        File.Exists(path).ShouldBeTrue($"{Path.GetFileName(path)} was not written");
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        return document.RootElement.Clone();
    }

    [Fact]
    public async Task C_generator_against_mosquitto_then_saito_on_sqlite_stores_every_acknowledged_reading()
    {
        string outDir = Path.Combine(_dir, "out");
        var run = await RunShortAgainstMosquittoAsync("c", outDir);

        var results = Read(Path.Combine(outDir, "results.json"));
        var saito = Read(Path.Combine(outDir, "generator-saito.json"));
        var mosquitto = Read(Path.Combine(outDir, "generator-mosquitto.json"));
        long acked = ShouldHaveStoredEveryAcknowledgedReading(run, results, "c");
        results.GetProperty("sent_messages").GetInt64().ShouldBe(acked, "every publish acknowledged");
        results.GetProperty("dead_letters").GetInt64().ShouldBe(0);
        results.GetProperty("tool_cores").GetDouble().ShouldBeGreaterThan(0, "the generator's own CPU, from getrusage");
        results.GetProperty("mosquitto_tool_cores").GetDouble().ShouldBeGreaterThan(0);
        results.GetProperty("mosquitto_machine_cores").GetDouble().ShouldBeGreaterThan(0, "what the machine did while Mosquitto ran");

        // CPU per reading, derived from the cores and the rates above (benchmarks/results/HISTORY.md, "CPU per reading").
        double rate = results.GetProperty("committed_readings_per_s").GetDouble();
        double mosquittoRate = results.GetProperty("mosquitto_accepted_readings_per_s").GetDouble();
        var costs = results.GetProperty("cpu_us_per_reading");
        costs.GetProperty("saito").GetDouble().ShouldBe(results.GetProperty("saito_cores").GetDouble() / rate * 1e6, 1e-6);
        costs.GetProperty("tool").GetDouble().ShouldBe(results.GetProperty("tool_cores").GetDouble() / rate * 1e6, 1e-6);
        costs.GetProperty("postgres").GetDouble().ShouldBe(0, "SQLite: no PostgreSQL");
        costs.GetProperty("sum").GetDouble().ShouldBe(costs.GetProperty("saito").GetDouble() + costs.GetProperty("tool").GetDouble(), 1e-6);
        costs.GetProperty("saito").GetDouble().ShouldBeGreaterThan(0);
        var reference = results.GetProperty("mosquitto_cpu_us_per_reading");
        reference.GetProperty("broker").GetDouble().ShouldBe(results.GetProperty("mosquitto_cores").GetDouble() / mosquittoRate * 1e6, 1e-6);
        reference.GetProperty("tool").GetDouble().ShouldBeGreaterThan(0);
        results.GetProperty("cores_for_target").GetDouble().ShouldBe(0.8 * mosquittoRate * costs.GetProperty("sum").GetDouble() / 1e6, 1e-6);
        results.GetProperty("processor_count").GetInt32().ShouldBe(Environment.ProcessorCount);

        foreach (var generator in new[] { saito, mosquitto })
        {
            generator.GetProperty("errors").GetInt64().ShouldBe(0, generator.ToString());
            generator.GetProperty("connected").GetInt32().ShouldBe(6);
            generator.GetProperty("inflight").GetInt32().ShouldBe(20);
            generator.GetProperty("warmup").GetProperty("acked").GetInt64().ShouldBeGreaterThan(0, "the warm-up published too");
            generator.GetProperty("total_acked").GetInt64().ShouldBe(
                generator.GetProperty("warmup").GetProperty("acked").GetInt64() + generator.GetProperty("measured").GetProperty("acked").GetInt64());
        }

        saito.GetProperty("measured").GetProperty("acked").GetInt64().ShouldBe(acked);
        Directory.Exists(Path.Combine(_dir, "db")).ShouldBeFalse("the SQLite files are deleted without --keep");
    }

    [Fact]
    public async Task Raw_generator_against_mosquitto_then_saito_on_sqlite_stores_every_acknowledged_reading()
    {
        string outDir = Path.Combine(_dir, "out-raw");
        var run = await RunShortAgainstMosquittoAsync("raw", outDir);

        var results = Read(Path.Combine(outDir, "results.json"));
        ShouldHaveStoredEveryAcknowledgedReading(run, results, "raw");
        foreach (string arm in new[] { "generator-saito.json", "generator-mosquitto.json" })
        {
            var generator = Read(Path.Combine(outDir, arm));
            generator.GetProperty("transport").GetString().ShouldBe("raw", arm);
            generator.GetProperty("errors").GetInt64().ShouldBe(0, generator.ToString());
            generator.GetProperty("connected").GetInt32().ShouldBe(6);
            generator.GetProperty("warmup").GetProperty("acked").GetInt64().ShouldBeGreaterThan(0, "the warm-up published too");
            generator.GetProperty("measured").GetProperty("unacked").GetInt64().ShouldBe(0);
        }
    }

    [Theory]
    [InlineData("--qos", "2")]
    [InlineData("--mqtt", "5")]
    public async Task The_raw_generator_refuses_what_it_does_not_speak_with_exit_code_2(string option, string value)
    {
        string outDir = Path.Combine(_dir, "never");
        var (run, console) = await RunCapturingConsoleAsync("--generator", "raw", "--preset", "sensors", "--duration", "1", option, value,
            "--work", Path.Combine(_dir, "db"), "--out", outDir);

        run.Exit.ShouldBe(2);
        console.ShouldContain("--generator raw publishes at QoS 1 over MQTT 3.1.1 only");
        Directory.Exists(outDir).ShouldBeFalse("nothing was measured");
    }

    [Theory]
    [InlineData("--readings-per-message", "100")]
    [InlineData("--devices-per-connection", "20")]
    [InlineData("--rate", "4")]
    [InlineData("--messages", "1000")]
    public async Task A_load_the_C_generator_cannot_publish_stops_the_run_with_exit_code_2_and_says_why(string option, string value)
    {
        string outDir = Path.Combine(_dir, "never");
        var (run, console) = await RunCapturingConsoleAsync("--generator", "c", "--duration", "1", option, value, "--work", Path.Combine(_dir, "db"), "--out", outDir);

        run.Exit.ShouldBe(2);
        console.ShouldContain("--generator c publishes one reading per message");
        Directory.Exists(outDir).ShouldBeFalse("nothing was measured");
    }

    [Fact]
    public void Cpu_per_reading_is_cores_over_rate_and_a_rate_takes_rate_times_that()
    {
        CpuBudget.MicrosPerReading(1.1, 120_000).ShouldBe(9.1667, 1e-4);
        CpuBudget.MicrosPerReading(0.99, 270_600).ShouldBe(3.6585, 1e-4);
        CpuBudget.CoresNeeded(216_480, 11.7).ShouldBe(2.5328, 1e-4);
        CpuBudget.CoresNeeded(100_000, 0).ShouldBe(0);
        double.IsNaN(CpuBudget.MicrosPerReading(1, 0)).ShouldBeTrue("no readings: no cost per reading");
        double.IsNaN(CpuBudget.MicrosPerReading(double.NaN, 1000)).ShouldBeTrue("cores not measured");
    }

    [Fact]
    public async Task An_unknown_generator_is_refused_by_name()
    {
        var run = await ToolRun.InvokeAsync(IngestCommand.Create(), "--generator", "rust", "--out", Path.Combine(_dir, "never"));

        run.Exit.ShouldNotBe(0);
        run.Error.ShouldContain("rust");
        Directory.Exists(Path.Combine(_dir, "never")).ShouldBeFalse();
    }
}

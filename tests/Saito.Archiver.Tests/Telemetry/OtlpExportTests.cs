using System.Collections.Concurrent;
using System.Globalization;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Saito.Archiver.Tests.Infrastructure;
using Saito.Readings;
using Saito.Storage.Keys;

namespace Saito.Archiver.Tests.Telemetry;

/// <summary>saito-archiver pushes its meter over OTLP when Metrics:Otlp:Endpoint is set: checked with a real HTTP receiver.</summary>
public sealed class OtlpExportTests
{
    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_run_pushes_the_rows_it_moved_to_the_configured_collector()
    {
        var bodies = new ConcurrentQueue<byte[]>();
        int port = FreePort.Next();
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls($"http://127.0.0.1:{port}");
        await using var collector = builder.Build();
        collector.MapPost("/v1/metrics", async (HttpContext context) =>
        {
            using var body = new MemoryStream();
            await context.Request.Body.CopyToAsync(body, context.RequestAborted);
            bodies.Enqueue(body.ToArray());
            context.Response.ContentType = "application/x-protobuf";
        });
        await collector.StartAsync(Token);

        await using var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);
        await storage.WriteAsync(ReadingKinds.All.SelectMany(kind => TestReadings.Of(kind, 1000)));
        var run = await ArchiverProcess.RunAsync(
        [
            "run", "--before", TestReadings.Start.AddMilliseconds(600).ToString("O", CultureInfo.InvariantCulture), "--json",
            "--export-dir", storage.ExportDirectory, .. storage.Settings().Select(s => "--" + s),
            $"--Metrics:Otlp:Endpoint=http://127.0.0.1:{port}/v1/metrics", "--Metrics:Otlp:Protocol=http/protobuf",
        ]);

        run.ExitCode.ShouldBe(0, run.Stderr);
        // The exporter flushes when the run's provider is disposed, before the process exits: the request is in by now.
        bodies.ShouldNotBeEmpty("no OTLP request reached the collector");
        string all = string.Join('\n', bodies.Select(b => Encoding.UTF8.GetString(b)));
        all.ShouldContain("saito.archiver.rows.moved");
        all.ShouldContain("saito.archiver.batch.duration");
        all.ShouldContain("biosensor");
        await collector.StopAsync(Token);
    }

    [Fact]
    public async Task A_collector_address_that_is_not_a_url_is_refused_with_the_setting_named()
    {
        await using var storage = await SqliteArchiveTestStorage.CreateAsync(KeyStrategy.Natural);

        var (exitCode, _, stderr) = await ArchiverProcess.RunAsync(
            ["run", "--older-than", "7d", .. storage.Settings().Select(s => "--" + s), "--Metrics:Otlp:Endpoint=collector:4317"]);

        exitCode.ShouldBe(2, stderr);
        stderr.ShouldContain("Metrics:Otlp:Endpoint");
    }
}

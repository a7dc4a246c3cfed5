using System.Globalization;
using System.Net.Http.Headers;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Options;

namespace Saito.Server.Tests.Metrics;

/// <summary>
/// OpenTelemetry listens to every meter of a name in the process, so two Saitos started at once in one test process
/// would add to each other's figures: these tests run alone.
/// </summary>
[CollectionDefinition(DisableParallelization = true)]
public sealed class MetricsCollection;

/// <summary>
/// /metrics on a real Saito: readings sent over MQTT (one of them bad) move the counters and histograms a scrape shows,
/// and only admin, ops, the scrape token or an anonymous caller on this machine may read them.
/// </summary>
[Collection(nameof(MetricsCollection))]
public sealed partial class MetricsEndpointTests
{
    private const string Token = "test-scrape-token-0123456789abcdef";

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_scrape_counts_the_readings_stored_and_the_dead_letter_by_reason_and_kind()
    {
        // Saito as its own process, as Prometheus sees it: in this test process every other in-process Saito's meters
        // of the same names would be heard by this one's OpenTelemetry listener too.
        var folder = Directory.CreateTempSubdirectory("saito-metrics-");
        await using var cleanup = new FolderCleanup(folder);
        int httpPort = FreePort.Next();
        await using var server = await SaitoServerProcess.StartAsync(new SaitoServerStart
        {
            Arguments = [$"--urls=http://127.0.0.1:{httpPort}", $"--Storage:DataPath={folder.FullName}", $"--Metrics:ScrapeToken={Token}"],
        }, Ct);
        var endpoint = new BrokerEndpoint("saito", "127.0.0.1", server.Port, null, null, null);
        string ts = DateTime.UtcNow.AddMinutes(-1).ToString("yyyy-MM-dd'T'HH:mm:ss.fff'Z'", CultureInfo.InvariantCulture);
        // Five biosensor readings (one of them a string where hr is a number), and two pressure readings.
        string biosensor = "[" + string.Join(",", Enumerable.Range(0, 5).Select(i => i == 2
            ? $$"""{"ts":"{{ts}}","ch":{{i}},"hr":"fast"}"""
            : $$"""{"ts":"{{ts}}","ch":{{i}},"hr":{{70 + i}}}""")) + "]";
        string pressure = $$"""[{"ts":"{{ts}}","ch":0,"kpa":4.2},{"ts":"{{ts}}","ch":1,"kpa":0}]""";
        await ExternalClients.Mosquitto311.PublishAsync(endpoint,
            [OutgoingMessage.Text("saito/hub-m/wrist-m1/biosensor", biosensor), OutgoingMessage.Text("saito/hub-m/mat-m1/pressure", pressure)],
            new ClientOptions { QoS = 1 }, Ct);

        using var prometheus = new HttpClient { BaseAddress = new Uri($"http://127.0.0.1:{httpPort}") };
        prometheus.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", Token);
        string scrape = await ScrapeUntilAsync(prometheus, text =>
            Value(text, "saito_ingestion_readings_stored_total", "kind=\"biosensor\"") == 4
            && Value(text, "saito_ingestion_readings_stored_total", "kind=\"pressure\"") == 2
            && Value(text, "saito_mqtt_publish_ack_duration_seconds_count") == 2);

        Value(scrape, "saito_ingestion_readings_received_total", "kind=\"biosensor\"").ShouldBe(4);
        Value(scrape, "saito_ingestion_readings_received_total", "kind=\"pressure\"").ShouldBe(2);
        Value(scrape, "saito_ingestion_dead_letters_total", "reason=\"wrong-type\"", "kind=\"biosensor\"").ShouldBe(1);
        Value(scrape, "saito_ingestion_messages_total").ShouldBe(2);
        Value(scrape, "saito_ingestion_commit_duration_seconds_count").ShouldNotBeNull().ShouldBeGreaterThan(0);
        Value(scrape, "saito_ingestion_batch_size_count").ShouldNotBeNull().ShouldBeGreaterThan(0);
        Value(scrape, "saito_ingestion_batch_size_sum").ShouldBe(6, "readings in the committed batches");
        Value(scrape, "saito_mqtt_publish_ack_duration_seconds_count").ShouldBe(2, "two QoS 1 publishes acknowledged after their commit");
        Value(scrape, "saito_mqtt_messages_received_total").ShouldBe(2);
        Value(scrape, "saito_ingestion_queue_depth").ShouldBe(0);
        Value(scrape, "saito_ingestion_queue_capacity").ShouldNotBeNull().ShouldBeGreaterThan(0);
        Value(scrape, "saito_mqtt_connections").ShouldNotBeNull();
        scrape.ShouldContain("saito_archiver_lag_seconds{");
        // No student's data: no serial, hub or topic in any label.
        scrape.ShouldNotContain("wrist-m1");
        scrape.ShouldNotContain("hub-m");

        using var anonymous = new HttpClient { BaseAddress = prometheus.BaseAddress };
        using var local = await anonymous.GetAsync("/metrics", Ct);
        local.StatusCode.ShouldBe(HttpStatusCode.OK, "anonymous from loopback, Metrics:AllowLoopback defaulting to true");
    }

    [Fact]
    public async Task Only_admin_ops_and_the_scrape_token_may_read_metrics_when_loopback_is_not_trusted()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, [$"Metrics:ScrapeToken={Token}", "Metrics:AllowLoopback=false"]);
        var expected = new Dictionary<string, HttpStatusCode>
        {
            ["admin"] = HttpStatusCode.OK,
            ["ops"] = HttpStatusCode.OK,
            ["teacher"] = HttpStatusCode.Forbidden,
            ["aide"] = HttpStatusCode.Forbidden,
        };
        foreach (var (role, status) in expected)
        {
            using var client = await server.AsAsync(role);
            using var response = await client.GetAsync("/metrics", Ct);
            response.StatusCode.ShouldBe(status, role);
        }

        using var anonymous = server.Anonymous();
        using (var response = await anonymous.GetAsync("/metrics", Ct))
        {
            response.StatusCode.ShouldBe(HttpStatusCode.Unauthorized, "anonymous");
        }

        using var wrong = WithToken(server, Token + "x");
        using (var response = await wrong.GetAsync("/metrics", Ct))
        {
            response.StatusCode.ShouldBe(HttpStatusCode.Unauthorized, "a wrong scrape token");
        }

        using var right = WithToken(server, Token);
        using (var response = await right.GetAsync("/metrics", Ct))
        {
            response.StatusCode.ShouldBe(HttpStatusCode.OK, "the scrape token");
            response.Content.Headers.ContentType?.MediaType.ShouldBe("text/plain");
        }
    }

    [Fact]
    public async Task With_metrics_off_there_is_no_metrics_endpoint()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Metrics:Enabled=false"]);
        using var admin = await server.AsAsync("admin");
        using var response = await admin.GetAsync("/metrics", Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.NotFound);
    }

    [Fact]
    public async Task Bad_metrics_settings_stop_saito_at_start_naming_each()
    {
        var failure = await Should.ThrowAsync<OptionsValidationException>(() =>
            SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Metrics:ScrapeToken=short", "Metrics:Otlp:Endpoint=collector:4317", "Metrics:Otlp:Protocol=udp"]));
        string failures = string.Join("\n", failure.Failures);
        failures.ShouldContain("Metrics:ScrapeToken must be at least");
        failures.ShouldContain("Metrics:Otlp:Endpoint must be an absolute http or https URL");
        failures.ShouldContain("Metrics:Otlp:Protocol must be one of grpc, http/protobuf");
    }

    private static HttpClient WithToken(SaitoHost server, string token)
    {
        var client = server.Anonymous();
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Bearer", token);
        return client;
    }

    /// <summary>Scrapes until <paramref name="done"/> holds (the commit, the PUBACK and the scrape cache are not instant), or fails after a deadline.</summary>
    private static async Task<string> ScrapeUntilAsync(HttpClient client, Func<string, bool> done)
    {
        var deadline = DateTime.UtcNow.AddSeconds(60);
        string text;
        do
        {
            using var response = await client.GetAsync("/metrics", Ct);
            response.StatusCode.ShouldBe(HttpStatusCode.OK);
            text = await response.Content.ReadAsStringAsync(Ct);
            if (done(text))
            {
                return text;
            }

            await Task.Delay(200, Ct);
        }
        while (DateTime.UtcNow < deadline);

        throw new ShouldAssertException("The scrape never showed the expected figures within 60 s; last scrape:\n" + text);
    }

    /// <summary>The value of the series <paramref name="name"/> whose labels include each of <paramref name="labels"/>; null when absent.</summary>
    private static double? Value(string scrape, string name, params string[] labels)
    {
        foreach (Match line in Series().Matches(scrape))
        {
            if (line.Groups["name"].Value == name && labels.All(line.Groups["labels"].Value.Contains))
            {
                return double.Parse(line.Groups["value"].Value, CultureInfo.InvariantCulture);
            }
        }

        return null;
    }

    [GeneratedRegex(@"^(?<name>[a-z_]+)(\{(?<labels>[^}]*)\})? (?<value>\S+)", RegexOptions.Multiline)]
    private static partial Regex Series();

    /// <summary>Deletes the server's folder after the server (declared before it, so disposed after it).</summary>
    private sealed class FolderCleanup(DirectoryInfo folder) : IAsyncDisposable
    {
        public ValueTask DisposeAsync()
        {
            folder.Delete(recursive: true);
            return ValueTask.CompletedTask;
        }
    }
}

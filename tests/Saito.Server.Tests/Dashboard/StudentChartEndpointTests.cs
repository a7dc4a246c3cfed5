using Microsoft.Extensions.Options;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// <c>GET /api/students/{id}/chart</c> against <c>Dashboard:MaxChartPoints</c> through a real Saito: an hour of a band's
/// readings comes back downsampled to at most that many points per series, and the setting is checked at start.
/// </summary>
public sealed class StudentChartEndpointTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(100, 37, 97)] // ceil(3600 s / 99): an hour touches at most 100 buckets of 37 s aligned to the epoch
    [InlineData(null, 2, 600)] // the default, 2,000: ceil(3600 s / 1999); readings 6 s apart each get a point
    public async Task An_hour_of_readings_is_charted_in_at_most_Dashboard_MaxChartPoints_points_per_series(int? maxChartPoints, int bucketSeconds, int atLeast)
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null,
            maxChartPoints is { } max ? [$"Dashboard:MaxChartPoints={max}"] : []);
        using var admin = await server.AsAsync("admin");
        // 600 readings, 6 s apart, over an hour that starts half-way into an epoch-aligned 36 s bucket: with 36 s
        // buckets (the hour over 100) it would touch 101 of them, each with readings.
        long from = DateTimeOffset.UtcNow.ToUnixTimeSeconds() - 3_700;
        from -= (from - 18) % 36;
        var start = DateTimeOffset.FromUnixTimeSeconds(from);
        string payload = "[" + string.Join(",", Enumerable.Range(0, 600).Select(i =>
            $$"""{"ts":"{{Ts(start.AddSeconds(6 * i))}}","hr":{{60 + (i % 40)}},"temp":33.5}""")) + "]";
        await PublishAsync(server, "saito/hub-1/wrist-chart/biosensor", payload);
        int ana = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ana" });
        int band = (await admin.GetFromJsonAsync<JsonElement>("/api/devices?q=wrist-chart", Ct)).GetProperty("items")[0].GetProperty("id").GetInt32();
        await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = ana, from = start.AddMinutes(-5) });

        string range = $"from={Uri.EscapeDataString(start.ToString("O"))}&to={Uri.EscapeDataString(start.AddHours(1).ToString("O"))}";
        using var response = await admin.GetAsync($"/api/students/{ana}/chart?{range}", Ct);
        string body = await response.Content.ReadAsStringAsync(Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.OK, body);
        var chart = JsonDocument.Parse(body).RootElement;

        int points = maxChartPoints ?? 2_000;
        foreach (string series in new[] { "heartRate", "skinTemperature" })
        {
            var times = chart.GetProperty(series).EnumerateArray().Select(p => (long)p[0].GetDouble()).ToList();
            times.Count.ShouldBeLessThanOrEqualTo(points, $"{series} has more points than Dashboard:MaxChartPoints");
            times.Count.ShouldBeGreaterThanOrEqualTo(atLeast, series);
            times.ShouldAllBe(t => t % (bucketSeconds * 1_000L) == 0);
        }

        chart.GetProperty("bucketSeconds").GetInt32().ShouldBe(bucketSeconds);
        if (maxChartPoints is null)
        {
            // Not downsampled: each point is one reading.
            chart.GetProperty("heartRate").EnumerateArray().Select(p => p[1].GetDouble()).ShouldBe(Enumerable.Range(0, 600).Select(i => 60.0 + (i % 40)));
        }
    }

    [Fact]
    public async Task MaxChartPoints_beyond_what_one_downsample_may_span_stops_saito_at_start()
    {
        var failure = await Should.ThrowAsync<OptionsValidationException>(() =>
            SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Dashboard:MaxChartPoints=10001"]));
        string.Join("\n", failure.Failures).ShouldContain("Dashboard:MaxChartPoints must be from 100 to 10000");
    }
}

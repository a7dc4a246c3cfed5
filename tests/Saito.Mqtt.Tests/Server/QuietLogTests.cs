using System.Diagnostics;
using System.Globalization;
using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Saito.Mqtt.Tests.Server;

/// <summary>
/// Issue 33, quiet by default: clients coming and going make a summary at Information, not lines of their own
/// (2,786 connects once made 11,252 lines in 8 minutes).
/// A start with <c>--urls</c> binds them without Kestrel's "Overriding address(es)" warning, which said that code
/// overrode them on every start though code listens on exactly those addresses.
/// </summary>
public sealed class QuietLogTests
{
    private const int Summary = 1029;
    private const int ConnectRefused = 1004;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    private static ITestOutputHelper Output => TestContext.Current.TestOutputHelper!;

    [Fact]
    public async Task Fifty_clients_that_connect_and_go_make_only_summary_lines_at_information_and_the_counts_are_right()
    {
        var logs = new CapturedLog(LogLevel.Information);
        await using var saito = await SaitoHost.StartAsync(
            ["Logging:LogLevel:Default=Information", "Mqtt:ConnectionSummarySeconds=1"], builder => builder.Logging.AddProvider(logs));
        // The registry's migrations, start-up work, may say so after the broker serves: from its line on, only clients act.
        await Eventually.TrueAsync(() => logs.Since(DateTime.MinValue).Any(l => l.Category == typeof(Saito.Registry.Hosting.RegistryMigrator).FullName),
            "the registry's start-up line", TimeSpan.FromSeconds(30));
        var from = DateTime.UtcNow;
        var clock = Stopwatch.StartNew();

        // 50 real clients (mosquitto_pub), a few at a time: each connects, publishes once and disconnects. Three more
        // send a client id over Mqtt:MaxClientIdLength (128) and are refused, all at once.
        await Parallel.ForEachAsync(Enumerable.Range(0, 50), new ParallelOptions { MaxDegreeOfParallelism = 5, CancellationToken = Token }, async (i, ct) =>
        {
            var (exitCode, text) = await PublishAsync(saito.Port, $"quiet-{i}", ct);
            exitCode.ShouldBe(0, text);
        });
        var refused = await Task.WhenAll(Enumerable.Range(0, 3).Select(i => PublishAsync(saito.Port, new string('x', 200) + i, Token)));
        refused.ShouldAllBe(r => r.ExitCode != 0);

        await Eventually.TrueAsync(() => Totals(logs, from) == (50, 50, 3), "summaries counting 50 connected, 50 disconnected, 3 refused",
            TimeSpan.FromSeconds(30));
        var elapsed = clock.Elapsed;
        var lines = logs.Since(from);
        Output.WriteLine($"{lines.Count} lines at Information and above in {elapsed.TotalSeconds:F1} s:");
        foreach (var line in lines)
        {
            Output.WriteLine(line.ToString());
        }

        lines.Where(l => l.EventId != Summary && l.EventId != ConnectRefused).ShouldBeEmpty("nothing but the summaries and the refusal's warning");
        var summaries = lines.Where(l => l.EventId == Summary).ToList();
        summaries.Count.ShouldBeLessThanOrEqualTo((int)elapsed.TotalSeconds + 2, "at most one summary a second (Mqtt:ConnectionSummarySeconds=1)");
        summaries[^1].Count("Open").ShouldBe(0, "every client has gone");
        foreach (var refusing in summaries.Where(s => s.Count("Refused") > 0))
        {
            // The three may fall into two summaries; each names the reason with its own count.
            refusing.Values["RefusedByReason"].ShouldBe($"ClientIdentifierNotValid {refusing.Count("Refused")}");
        }

        summaries.Sum(s => s.Count("TakenOver")).ShouldBe(0);

        // The three refusals came within 10 s: the first is a warning, the other two are at Debug.
        var warned = lines.Where(l => l.EventId == ConnectRefused).ShouldHaveSingleItem();
        warned.Level.ShouldBe(LogLevel.Warning);
        warned.Text.ShouldContain("Mqtt:MaxClientIdLength");
    }

    [Fact]
    public async Task A_start_with_urls_listens_on_them_without_kestrels_overriding_warning()
    {
        var logs = new CapturedLog(LogLevel.Warning);
        await using var saito = await SaitoHost.StartAsync(configure: builder => builder.Logging.AddProvider(logs));
        await saito.Services.GetRequiredService<Saito.Ingestion.Pipeline.StorageStartup>().Ready.WaitAsync(TimeSpan.FromSeconds(60), Token);

        using var http = new HttpClient();
        using var health = await http.GetAsync(new Uri($"http://127.0.0.1:{saito.HttpPort}/health"), Token);
        health.StatusCode.ShouldBe(HttpStatusCode.OK, "the address given with --urls answers");

        var all = logs.Since(DateTime.MinValue);
        foreach (var line in all)
        {
            Output.WriteLine(line.ToString());
        }

        all.ShouldNotContain(l => l.Text.Contains("Overriding", StringComparison.OrdinalIgnoreCase));
    }

    /// <summary>
    /// Sums the summaries logged since <paramref name="from"/>: connected, disconnected, refused. Only the summaries: a
    /// test that counted the broker's own counters would pass with the lines wrong.
    /// </summary>
    private static (long Connected, long Disconnected, long Refused) Totals(CapturedLog logs, DateTime from)
    {
        var summaries = logs.Since(from).Where(l => l.EventId == Summary).ToList();
        return (summaries.Sum(s => s.Count("Connected")), summaries.Sum(s => s.Count("Disconnected")), summaries.Sum(s => s.Count("Refused")));
    }

    private static Task<(int ExitCode, string Output)> PublishAsync(int port, string clientId, CancellationToken cancellationToken) =>
        ExternalCommand.RunAsync(ExternalClientSettings.MosquittoPub,
            ["-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture), "-i", clientId, "-q", "1", "-t", "quiet/test", "-m", "here"],
            TimeSpan.FromSeconds(20), cancellationToken);
}

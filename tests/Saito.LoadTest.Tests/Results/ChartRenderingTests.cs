using System.Buffers.Binary;
using System.Diagnostics;
using System.Text.Json.Nodes;
using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>
/// Real chart PNGs from headless Chromium and chart.js (both installed by scripts/test.sh). Set SAITO_TEST_REPORT_OUT
/// to a folder to keep what the full run draws and look at it.
/// </summary>
public sealed class ChartRenderingTests : IDisposable
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    private readonly DirectoryInfo outDir = Directory.CreateTempSubdirectory("saito-chart-test-");

    public void Dispose() => outDir.Delete(recursive: true);

    [Fact]
    public async Task Every_chart_of_a_full_run_becomes_a_png_with_a_drawing_on_it()
    {
        var options = RequireInstalled.ChartLibraryAndChromium();
        string? keep = Environment.GetEnvironmentVariable("SAITO_TEST_REPORT_OUT");
        string dir = string.IsNullOrWhiteSpace(keep) ? outDir.FullName : keep;
        var rows = SampleRuns.Everything();
        var expected = ReportCharts.Build(rows).Select(c => c.FileName).ToList();

        var watch = Stopwatch.StartNew();
        var files = await ReportWriter.WriteAsync(dir, rows, SampleRuns.Context, options, Ct);
        watch.Stop();
        TestContext.Current.TestOutputHelper?.WriteLine($"{expected.Count} charts in {watch.Elapsed.TotalSeconds:0.0} s");

        files.Warnings.ShouldBeEmpty();
        files.Written.Select(Path.GetFileName).Where(f => f!.EndsWith(".png", StringComparison.Ordinal)).ShouldBe(expected);
        foreach (string name in expected)
        {
            string path = Path.Combine(dir, name);
            byte[] bytes = await File.ReadAllBytesAsync(path, Ct);

            // The header by hand: the signature, then IHDR with the size asked for.
            bytes.AsSpan(0, 8).ToArray().ShouldBe(new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A }, name);
            System.Text.Encoding.ASCII.GetString(bytes, 12, 4).ShouldBe("IHDR", name);
            BinaryPrimitives.ReadInt32BigEndian(bytes.AsSpan(16)).ShouldBe(options.ChartWidth, name);
            BinaryPrimitives.ReadInt32BigEndian(bytes.AsSpan(20)).ShouldBe(options.ChartHeight, name);
            bytes.Length.ShouldBeGreaterThan(15_000, $"{name} is too small to hold a chart");

            // And the pixels: a chart has lines, bars, text and anti-aliasing in many colours, and ink on a good share of the page.
            var image = PngImage.Decode(bytes);
            image.DistinctColours(limit: 200).ShouldBe(200, $"{name} has too few colours to be a drawn chart");
            image.InkFraction().ShouldBeInRange(0.02, 0.6, $"{name}: share of pixels that are not background");
        }
    }

    [Fact]
    public async Task A_chart_that_throws_in_the_browser_gives_its_error_and_no_png()
    {
        var config = new JsonObject
        {
            ["type"] = "no-such-chart-type",
            ["data"] = new JsonObject { ["labels"] = new JsonArray("a"), ["datasets"] = new JsonArray(new JsonObject { ["data"] = new JsonArray(1) }) },
            ["options"] = new JsonObject(),
        };

        string? problem = await ScreenshotAsync(new ChartSpec("chart-broken", "broken", config));

        problem.ShouldNotBeNull().ShouldContain("\"no-such-chart-type\" is not a registered controller");
        File.Exists(Path.Combine(outDir.FullName, "chart.png")).ShouldBeFalse();
    }

    [Fact]
    public async Task A_chart_that_draws_nothing_is_caught_as_blank_and_gives_no_png()
    {
        // Chart.js accepts a chart without data and draws nothing at all: only the pixels tell.
        var config = new JsonObject { ["type"] = "no-such-chart-type", ["options"] = new JsonObject() };

        string? problem = await ScreenshotAsync(new ChartSpec("chart-empty", "empty", config));

        problem.ShouldNotBeNull().ShouldContain("blank");
        File.Exists(Path.Combine(outDir.FullName, "chart.png")).ShouldBeFalse();
    }

    [Fact]
    public async Task A_chromium_that_hangs_is_killed_with_its_children_and_gives_no_png()
    {
        var options = RequireInstalled.ChartLibraryAndChromium();
        var (chromium, _) = ChromiumRenderer.Find(options.Chromium);
        string page = Path.Combine(outDir.FullName, "hang.html");
        await File.WriteAllTextAsync(page, "<!doctype html><html><body><script>for (;;) {}</script></body></html>", Ct);
        string profile = Path.Combine(outDir.FullName, "hang-profile");

        string? problem = await new ChromiumRenderer(chromium!, TimeSpan.FromSeconds(4))
            .ScreenshotAsync(page, Path.Combine(outDir.FullName, "hang.png"), 400, 300, profile, Ct);

        problem.ShouldNotBeNull().ShouldContain("did not finish within 4 s and was killed");
        File.Exists(Path.Combine(outDir.FullName, "hang.png")).ShouldBeFalse();
        // Killed with SIGKILL, the children die a moment later, not at once: look until a deadline, not once.
        var deadline = DateTime.UtcNow.AddSeconds(10);
        var left = ProcessesMentioning(profile);
        while (left.Count > 0 && DateTime.UtcNow < deadline)
        {
            await Task.Delay(100, Ct);
            left = ProcessesMentioning(profile);
        }

        left.ShouldBeEmpty("Chromium processes left behind");
    }

    /// <summary>Live processes whose command line names <paramref name="text"/> (Linux /proc).</summary>
    private static List<string> ProcessesMentioning(string text)
    {
        var found = new List<string>();
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(dir), out _))
            {
                continue;
            }

            try
            {
                string commandLine = File.ReadAllText(Path.Combine(dir, "cmdline")).Replace('\0', ' ');
                if (commandLine.Contains(text, StringComparison.Ordinal))
                {
                    found.Add(Path.GetFileName(dir) + ": " + commandLine);
                }
            }
            catch (IOException)
            {
                // The process ended while we looked.
            }
        }

        return found;
    }

    private async Task<string?> ScreenshotAsync(ChartSpec chart)
    {
        var options = RequireInstalled.ChartLibraryAndChromium();
        var (library, _) = ChartLibrary.Load(options.PackageDir);
        var (chromium, _) = ChromiumRenderer.Find(options.Chromium);
        string page = Path.Combine(outDir.FullName, "chart.html");
        await File.WriteAllTextAsync(page, ReportHtml.ChartPage(chart, library!, 400, 300), Ct);
        return await new ChromiumRenderer(chromium!, TimeSpan.FromSeconds(60))
            .ScreenshotAsync(page, Path.Combine(outDir.FullName, "chart.png"), 400, 300, Path.Combine(outDir.FullName, "profile"), Ct);
    }
}

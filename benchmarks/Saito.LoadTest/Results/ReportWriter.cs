using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Saito.LoadTest.Results;

/// <summary>What a report says about the run as a whole: which command, how it was called, on what machine.</summary>
internal sealed record RunContext(string Command, string CommandLine, string Machine, DateTimeOffset StartedAt);

/// <summary>The files a run wrote to <c>--out</c>, and anything that could not be written (said, never hidden).</summary>
internal sealed record ReportFiles(IReadOnlyList<string> Written, IReadOnlyList<string> Warnings);

/// <summary>
/// Writes a run's results to <c>--out</c>: results.json (an array of <see cref="ResultRow"/>, snake_case),
/// results.csv (the same rows, without timelines), report.html (context, charts and table in one offline page, with
/// Chart.js inlined) and each chart as a PNG drawn by headless Chromium. What cannot be drawn (no chart.js installed,
/// no Chromium) is said in <see cref="ReportFiles.Warnings"/> with the command that fixes it; no chart is faked.
/// </summary>
internal static class ReportWriter
{
    public static readonly JsonSerializerOptions Json = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.SnakeCaseLower,
    };

    public static readonly string[] CsvColumns =
        ["command", "op", "db", "tier", "key", "threads", "method", "rows", "seconds", "rows_per_s", "p50_ms", "p99_ms", "max_ms", "note"];

    /// <summary>Chromium processes at once: each is several processes and mostly waits on its own start-up.</summary>
    private static readonly int RenderParallelism = Math.Clamp(Environment.ProcessorCount, 1, 4);

    public static Task<ReportFiles> WriteAsync(string outDir, IReadOnlyList<ResultRow> rows, RunContext context, CancellationToken token) =>
        WriteAsync(outDir, rows, context, ReportOptions.FromEnvironment(), token);

    public static async Task<ReportFiles> WriteAsync(string outDir, IReadOnlyList<ResultRow> rows, RunContext context, ReportOptions options, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(options);
        Directory.CreateDirectory(outDir);
        var written = new List<string>();
        var warnings = new List<string>();

        string json = Path.Combine(outDir, "results.json");
        await File.WriteAllTextAsync(json, JsonSerializer.Serialize(rows, Json), token);
        written.Add(json);

        string csv = Path.Combine(outDir, "results.csv");
        await File.WriteAllTextAsync(csv, ToCsv(rows), token);
        written.Add(csv);

        // Charts of an earlier run in the same folder would pass for this run's: they go before anything is drawn.
        foreach (string old in Directory.EnumerateFiles(outDir, "chart-*.png"))
        {
            File.Delete(old);
        }

        var charts = ReportCharts.Build(rows);
        ChartLibrary? library = null;
        if (charts.Count > 0)
        {
            (library, string? problem) = ChartLibrary.Load(options.PackageDir);
            if (problem is not null)
            {
                warnings.Add($"report.html has no charts and no chart PNGs were drawn: {problem}");
            }
        }

        string html = Path.Combine(outDir, "report.html");
        await File.WriteAllTextAsync(html, ReportHtml.Render(rows, context, charts, library, warnings), token);
        written.Add(html);

        if (library is not null && options.RenderPngs)
        {
            await RenderPngsAsync(outDir, charts, library, options, written, warnings, token);
        }

        return new ReportFiles(written, warnings);
    }

    private static async Task RenderPngsAsync(
        string outDir, IReadOnlyList<ChartSpec> charts, ChartLibrary library, ReportOptions options, List<string> written, List<string> warnings, CancellationToken token)
    {
        var (chromium, problem) = ChromiumRenderer.Find(options.Chromium);
        if (chromium is null)
        {
            warnings.Add(problem!);
            return;
        }

        var renderer = new ChromiumRenderer(chromium, options.RenderTimeout);
        var work = Directory.CreateTempSubdirectory("saito-report-");
        var outcomes = new string?[charts.Count];
        try
        {
            await Parallel.ForEachAsync(
                Enumerable.Range(0, charts.Count),
                new ParallelOptions { MaxDegreeOfParallelism = RenderParallelism, CancellationToken = token },
                async (i, ct) =>
                {
                    var chart = charts[i];
                    string page = Path.Combine(work.FullName, chart.Name + ".html");
                    await File.WriteAllTextAsync(page, ReportHtml.ChartPage(chart, library, options.ChartWidth, options.ChartHeight), ct);
                    string png = Path.Combine(outDir, chart.FileName);
                    outcomes[i] = await renderer.ScreenshotAsync(
                        page, png, options.ChartWidth, options.ChartHeight, Path.Combine(work.FullName, "profile-" + chart.Name), ct);
                });
        }
        finally
        {
            try
            {
                work.Delete(recursive: true);
            }
            catch (IOException e)
            {
                warnings.Add($"could not remove the temporary chart pages in {work.FullName}: {e.Message}");
            }
        }

        for (int i = 0; i < charts.Count; i++)
        {
            if (outcomes[i] is null)
            {
                written.Add(Path.Combine(outDir, charts[i].FileName));
            }
            else
            {
                warnings.Add($"{charts[i].FileName} was not drawn: {outcomes[i]} ({chromium})");
            }
        }
    }

    public static string ToCsv(IReadOnlyList<ResultRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var text = new StringBuilder(string.Join(',', CsvColumns)).Append('\n');
        foreach (var r in rows)
        {
            string[] fields =
            [
                r.Command, r.Op, r.Db, r.Tier, r.Key, Number(r.Threads), r.Method, Number(r.Rows), Number(r.Seconds), Number(r.RowsPerS),
                Number(r.P50Ms), Number(r.P99Ms), Number(r.MaxMs), r.Note ?? string.Empty,
            ];
            text.AppendJoin(',', fields.Select(Quote)).Append('\n');
        }

        return text.ToString();
    }

    private static string Number(double? value) => value?.ToString("0.###", CultureInfo.InvariantCulture) ?? string.Empty;

    private static string Number(long value) => value.ToString(CultureInfo.InvariantCulture);

    private static string Quote(string field) =>
        field.AsSpan().IndexOfAny(",\"\n\r") >= 0 ? "\"" + field.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"" : field;
}

using System.Globalization;
using System.Text.Json;
using System.Text.RegularExpressions;
using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>results.json, results.csv and report.html as a reader gets them: the files are read back and parsed.</summary>
public sealed class ReportWriterTests : IDisposable
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    private readonly DirectoryInfo outDir = Directory.CreateTempSubdirectory("saito-report-test-");

    public void Dispose() => outDir.Delete(recursive: true);

    [Fact]
    public async Task Results_json_round_trips_every_field()
    {
        var rows = SampleRuns.Everything();

        await ReportWriter.WriteAsync(outDir.FullName, rows, SampleRuns.Context, NoPngs(), Ct);

        using var json = JsonDocument.Parse(await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "results.json"), Ct));
        var array = json.RootElement.EnumerateArray().ToList();
        array.Count.ShouldBe(rows.Count);
        for (int i = 0; i < rows.Count; i++)
        {
            var (row, o) = (rows[i], array[i]);
            o.GetProperty("command").GetString().ShouldBe(row.Command);
            o.GetProperty("op").GetString().ShouldBe(row.Op);
            o.GetProperty("db").GetString().ShouldBe(row.Db);
            o.GetProperty("tier").GetString().ShouldBe(row.Tier);
            o.GetProperty("key").GetString().ShouldBe(row.Key);
            o.GetProperty("threads").GetInt32().ShouldBe(row.Threads);
            o.GetProperty("method").GetString().ShouldBe(row.Method);
            o.GetProperty("rows").GetInt64().ShouldBe(row.Rows);
            o.GetProperty("seconds").GetDouble().ShouldBe(row.Seconds);
            o.GetProperty("rows_per_s").GetDouble().ShouldBe(row.Rows / row.Seconds, 1e-9);
            Nullable(o.GetProperty("p50_ms")).ShouldBe(row.P50Ms);
            Nullable(o.GetProperty("p99_ms")).ShouldBe(row.P99Ms);
            Nullable(o.GetProperty("max_ms")).ShouldBe(row.MaxMs);
            o.TryGetProperty("timeline", out _).ShouldBe(row.Timeline is not null);
            o.TryGetProperty("note", out _).ShouldBe(row.Note is not null);
        }

        var classroom = array.Single(o => o.GetProperty("command").GetString() == "classroom");
        classroom.GetProperty("note").GetString().ShouldBe(SampleRuns.Classroom().Note);
        var points = classroom.GetProperty("timeline").EnumerateArray().ToList();
        var expected = SampleRuns.Classroom().Timeline!;
        points.Count.ShouldBe(expected.Count);
        points[39].GetProperty("t_s").GetDouble().ShouldBe(expected[39].TSeconds);
        points[39].GetProperty("p50_ms").GetDouble().ShouldBe(expected[39].P50Ms);
        points[39].GetProperty("p99_ms").GetDouble().ShouldBe(expected[39].P99Ms);
        points[39].GetProperty("max_ms").GetDouble().ShouldBe(expected[39].MaxMs);
        points[39].GetProperty("published_per_s").GetDouble().ShouldBe(expected[39].PublishedPerS);
        points[39].GetProperty("committed_per_s").GetDouble().ShouldBe(expected[39].CommittedPerS);

        // And back into rows, as a later tool (or a comparison of two runs) would read them.
        var back = JsonSerializer.Deserialize<List<ResultRow>>(await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "results.json"), Ct), ReportWriter.Json)!;
        back.Select(r => r with { Timeline = null }).ShouldBe(rows.Select(r => r with { Timeline = null }));
        back.Single(r => r.Command == "classroom").Timeline.ShouldBe(expected);
    }

    [Fact]
    public async Task Csv_quotes_commas_quotes_and_line_breaks_and_keeps_every_column()
    {
        var row = SampleRuns.Row("tiers", "insert", "postgres", "fast, \"nvme\"", "guid", 16, "bulk", 1_234_567, 2.5) with
        {
            P99Ms = 12.25,
            Note = "study: 43,000 rows/s\nsecond line",
        };

        await ReportWriter.WriteAsync(outDir.FullName, [row], SampleRuns.Context, NoPngs(), Ct);

        string text = await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "results.csv"), Ct);
        text.ShouldContain("\"fast, \"\"nvme\"\"\"");
        var records = ParseCsv(text);
        records.Count.ShouldBe(2);
        records[0].ShouldBe(ReportWriter.CsvColumns);
        var fields = records[0].Zip(records[1]).ToDictionary(p => p.First, p => p.Second);
        fields["tier"].ShouldBe("fast, \"nvme\"");
        fields["threads"].ShouldBe("16");
        fields["rows"].ShouldBe("1234567");
        fields["seconds"].ShouldBe("2.5");
        fields["rows_per_s"].ShouldBe("493826.8");
        fields["p50_ms"].ShouldBe(string.Empty);
        fields["p99_ms"].ShouldBe("12.25");
        fields["note"].ShouldBe("study: 43,000 rows/s\nsecond line");
    }

    [Fact]
    public async Task Files_are_written_in_the_invariant_culture_whatever_the_current_one()
    {
        var culture = CultureInfo.CurrentCulture;
        CultureInfo.CurrentCulture = CultureInfo.GetCultureInfo("de-DE");
        try
        {
            var row = SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 1, "bulk", 1_500_000, 2.5) with { P50Ms = 1.5 };
            await ReportWriter.WriteAsync(outDir.FullName, [row], SampleRuns.Context, NoPngs(), Ct);

            (await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "results.csv"), Ct)).ShouldContain(",1500000,2.5,600000,1.5,");
            string html = await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "report.html"), Ct);
            html.ShouldContain("<td class=\"n\">1,500,000</td>");
            html.ShouldContain("<td class=\"n\">600,000</td>");
            html.ShouldContain("2025-11-23 14:05:00 +00:00");
        }
        finally
        {
            CultureInfo.CurrentCulture = culture;
        }
    }

    [Fact]
    public async Task Report_html_inlines_the_chart_library_and_carries_context_table_and_data()
    {
        var options = RequireInstalled.ChartLibrary() with { RenderPngs = false };
        var rows = SampleRuns.Everything();

        var files = await ReportWriter.WriteAsync(outDir.FullName, rows, SampleRuns.Context, options, Ct);

        files.Warnings.ShouldBeEmpty();
        string path = Path.Combine(outDir.FullName, "report.html");
        files.Written.ShouldContain(path);
        string html = await File.ReadAllTextAsync(path, Ct);

        // Works offline: Chart.js itself is in the page and no script or stylesheet is fetched.
        html.ShouldContain("Chart.js v4.");
        Regex.IsMatch(html, @"<script[^>]*\ssrc\s*=", RegexOptions.IgnoreCase).ShouldBeFalse("a <script src=...> would need the network or a second file");
        Regex.IsMatch(html, @"<link[^>]*href\s*=\s*[""']?https?:", RegexOptions.IgnoreCase).ShouldBeFalse();

        html.ShouldContain(System.Net.WebUtility.HtmlEncode(SampleRuns.Context.CommandLine));
        html.ShouldContain(SampleRuns.Context.Machine);
        html.ShouldContain("2025-11-23 14:05:00 +00:00");
        Regex.Count(html, "<tr><td").ShouldBe(rows.Count);
        foreach (var chart in ReportCharts.Build(rows))
        {
            html.ShouldContain($"<canvas id=\"{chart.Name}\"");
        }

        // The rows ride along as JSON a script (or a person) can read back.
        var island = Regex.Match(html, "<script id=\"saito-results\" type=\"application/json\">(.*?)</script>", RegexOptions.Singleline);
        island.Success.ShouldBeTrue();
        var embedded = JsonSerializer.Deserialize<List<ResultRow>>(island.Groups[1].Value, ReportWriter.Json)!;
        embedded.Select(r => r with { Timeline = null }).ShouldBe(rows.Select(r => r with { Timeline = null }));
    }

    [Fact]
    public async Task Without_chart_js_the_results_are_written_and_the_warning_says_what_to_run()
    {
        var empty = Directory.CreateDirectory(Path.Combine(outDir.FullName, "no-package"));
        var options = new ReportOptions { PackageDir = empty.FullName };

        var files = await ReportWriter.WriteAsync(Path.Combine(outDir.FullName, "out"), SampleRuns.Everything(), SampleRuns.Context, options, Ct);

        files.Written.Select(Path.GetFileName).ShouldBe(["results.json", "results.csv", "report.html"]);
        files.Warnings.ShouldHaveSingleItem().ShouldContain("npm ci --prefix benchmarks/Saito.LoadTest/report");
        Directory.EnumerateFiles(Path.Combine(outDir.FullName, "out"), "*.png").ShouldBeEmpty();
        string html = await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "out", "report.html"), Ct);
        html.ShouldNotContain("<canvas");
        html.ShouldContain("npm ci --prefix benchmarks/Saito.LoadTest/report");
    }

    [Fact]
    public async Task Without_chromium_report_html_has_its_charts_and_the_warning_says_what_to_install()
    {
        var options = RequireInstalled.ChartLibrary() with { Chromium = Path.Combine(outDir.FullName, "no-such-chromium") };
        string stale = Path.Combine(outDir.FullName, "chart-latency.png");
        await File.WriteAllBytesAsync(stale, [0x89, 0x50, 0x4E, 0x47], Ct);

        var files = await ReportWriter.WriteAsync(outDir.FullName, SampleRuns.Everything(), SampleRuns.Context, options, Ct);

        files.Warnings.ShouldHaveSingleItem().ShouldContain("apt-get install chromium");
        files.Written.Select(Path.GetFileName).ShouldBe(["results.json", "results.csv", "report.html"]);
        Directory.EnumerateFiles(outDir.FullName, "*.png").ShouldBeEmpty("a chart PNG of an earlier run would pass for this run's");
        (await File.ReadAllTextAsync(Path.Combine(outDir.FullName, "report.html"), Ct)).ShouldContain("<canvas");
    }

    [Fact]
    public async Task Rows_that_support_no_chart_need_neither_chart_js_nor_chromium()
    {
        var row = SampleRuns.Row("classroom", "publish", "sqlite", "default", "natural", 10, "qos0", 1_000, 1);
        var options = new ReportOptions { PackageDir = Path.Combine(outDir.FullName, "missing"), Chromium = Path.Combine(outDir.FullName, "missing") };

        var files = await ReportWriter.WriteAsync(outDir.FullName, [row], SampleRuns.Context, options, Ct);

        files.Warnings.ShouldBeEmpty();
        files.Written.Select(Path.GetFileName).ShouldBe(["results.json", "results.csv", "report.html"]);
    }

    private static ReportOptions NoPngs() => ReportOptions.FromEnvironment() with { RenderPngs = false };

    private static double? Nullable(JsonElement e) => e.ValueKind == JsonValueKind.Null ? null : e.GetDouble();

    /// <summary>RFC 4180: fields separated by commas, records by line breaks, quoted fields may hold both and "" for a quote.</summary>
    private static List<string[]> ParseCsv(string text)
    {
        var records = new List<string[]>();
        var fields = new List<string>();
        var field = new System.Text.StringBuilder();
        bool quoted = false;
        for (int i = 0; i < text.Length; i++)
        {
            char c = text[i];
            if (quoted)
            {
                if (c == '"' && i + 1 < text.Length && text[i + 1] == '"')
                {
                    field.Append('"');
                    i++;
                }
                else if (c == '"')
                {
                    quoted = false;
                }
                else
                {
                    field.Append(c);
                }
            }
            else if (c == '"')
            {
                quoted = true;
            }
            else if (c == ',')
            {
                fields.Add(field.ToString());
                field.Clear();
            }
            else if (c == '\n')
            {
                fields.Add(field.ToString());
                field.Clear();
                records.Add([.. fields]);
                fields.Clear();
            }
            else
            {
                field.Append(c);
            }
        }

        quoted.ShouldBeFalse("an unterminated quoted field");
        (fields.Count + field.Length).ShouldBe(0, "the file ends with a line break");
        return records;
    }
}

using System.Globalization;
using System.Net;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;

namespace Saito.LoadTest.Results;

/// <summary>
/// report.html (the run's context, its charts and a table of every row, one self-contained file that works offline)
/// and the one-chart pages Chromium screenshots into PNGs. Both carry Chart.js inline; nothing is fetched.
/// </summary>
internal static class ReportHtml
{
    /// <summary>What a chart page logs once every chart is drawn; the renderer waits for it in Chromium's log.</summary>
    public const string DrawnMarker = "SAITO_CHARTS_DRAWN";

    /// <summary>What a chart page logs when a chart throws.</summary>
    public const string FailedMarker = "SAITO_CHART_FAILED";

    // Draws every chart named in #saito-charts on the canvas with the same id, then says so on the console.
    private const string Bootstrap = """
        (function () {
          Chart.defaults.font.size = 14;
          Chart.defaults.color = '#222';
          // A logarithmic axis labels 1, 2 and 5 of each decade only; the other grid lines stay, unlabelled.
          function decades(value) {
            var step = Math.pow(10, Math.floor(Math.log10(value) + 1e-9));
            var m = value / step;
            var whole = Math.round(m);
            return Math.abs(m - whole) < 1e-6 && (whole === 1 || whole === 2 || whole === 5) ? value.toLocaleString('en-US') : '';
          }
          var charts = JSON.parse(document.getElementById('saito-charts').textContent);
          var drawn = 0;
          charts.forEach(function (c) {
            try {
              var options = c.config.options || {};
              var scales = options.scales || {};
              Object.keys(scales).forEach(function (k) {
                if (scales[k].type === 'logarithmic') {
                  scales[k].ticks = Object.assign({}, scales[k].ticks, { callback: decades, autoSkip: false });
                }
              });
              // A legend drawn as line samples shows each line's dash (Chart.js takes the point's style, which has none).
              var labels = options.plugins && options.plugins.legend && options.plugins.legend.labels;
              if (labels && labels.pointStyle === 'line') {
                labels.generateLabels = function (chart) {
                  return Chart.defaults.plugins.legend.labels.generateLabels(chart).map(function (item) {
                    item.lineDash = chart.data.datasets[item.datasetIndex].borderDash || [];
                    return item;
                  });
                };
              }
              new Chart(document.getElementById(c.name), c.config);
              drawn++;
            } catch (e) {
              console.error('SAITO_CHART_FAILED ' + c.name + ': ' + e);
            }
          });
          if (drawn === charts.length) {
            console.log('SAITO_CHARTS_DRAWN ' + drawn);
          }
        })();
        """;

    // A chart is as wide as its PNG (1000 pixels, what ReportCharts fits the labels under bars into); a narrower
    // window scrolls it sideways rather than squeezing its labels into each other.
    private const string Style = """
        body { font-family: 'Liberation Sans', Helvetica, Arial, sans-serif; color: #222; margin: 24px; }
        h1 { font-size: 24px; margin: 0 0 12px; }
        h2 { font-size: 19px; margin: 28px 0 10px; }
        dl.context { display: grid; grid-template-columns: max-content auto; gap: 4px 16px; margin: 0; }
        dl.context dt { font-weight: bold; }
        dl.context dd { margin: 0; }
        code { font-family: 'DejaVu Sans Mono', monospace; font-size: 13px; word-break: break-all; }
        .warning { background: #fff4e0; border-left: 4px solid #f28e2b; padding: 8px 12px; }
        figure { margin: 0 0 28px; overflow-x: auto; }
        figcaption { color: #666; font-size: 12px; }
        .chart { position: relative; width: 1000px; height: 600px; }
        table { border-collapse: collapse; font-size: 13px; }
        th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
        th { background: #f4f4f4; position: sticky; top: 0; }
        td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
        tbody tr:hover { background: #f7fbff; }
        footer { color: #666; font-size: 12px; margin-top: 24px; }
        """;

    /// <summary>The report page; without a library it still shows the context and table, and says why there are no charts.</summary>
    public static string Render(IReadOnlyList<ResultRow> rows, RunContext context, IReadOnlyList<ChartSpec> charts, ChartLibrary? library, IEnumerable<string> problems)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(charts);
        var html = new StringBuilder();
        html.Append("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.Append("<title>").Append(Encode($"Saito load test: {context.Command}, {Started(context)}")).Append("</title>\n");
        html.Append("<style>\n").Append(Style).Append("</style>\n</head>\n<body>\n");
        html.Append("<h1>").Append(Encode($"Saito load test: {context.Command}")).Append("</h1>\n");
        html.Append("<dl class=\"context\">\n");
        Term(html, "Command", Encode(context.Command));
        Term(html, "Command line", "<code>" + Encode(context.CommandLine) + "</code>");
        Term(html, "Machine", Encode(context.Machine));
        Term(html, "Started", Encode(Started(context)));
        Term(html, "Rows", Encode(rows.Count.ToString("N0", CultureInfo.InvariantCulture)));
        html.Append("</dl>\n");

        foreach (string problem in problems)
        {
            html.Append("<p class=\"warning\">").Append(Encode(problem)).Append("</p>\n");
        }

        bool drawCharts = library is not null && charts.Count > 0;
        if (drawCharts)
        {
            html.Append("<h2>Charts</h2>\n");
            foreach (var chart in charts)
            {
                html.Append("<figure>\n<div class=\"chart\"><canvas id=\"").Append(Encode(chart.Name)).Append("\" role=\"img\" aria-label=\"")
                    .Append(Encode(chart.Title)).Append("\"></canvas></div>\n<figcaption>").Append(Encode(chart.FileName)).Append("</figcaption>\n</figure>\n");
            }
        }

        html.Append("<h2>Results</h2>\n");
        Table(html, rows);
        html.Append("<footer>").Append(Encode(library is null ? "Charts not drawn: the chart library is missing." : $"Charts drawn by Chart.js {library.Version}, inlined."))
            .Append(" The same rows are in results.json and results.csv.</footer>\n");

        // The data itself, machine-readable, for anyone who saves only this page. The serializer's default encoder
        // escapes < > & so no value can close the script element.
        html.Append("<script id=\"saito-results\" type=\"application/json\">\n").Append(JsonSerializer.Serialize(rows, ReportWriter.Json)).Append("\n</script>\n");
        if (drawCharts)
        {
            AppendCharts(html, charts.Select(c => (c.Name, Configure(c.Config, responsive: true))), library!);
        }

        html.Append("</body>\n</html>\n");
        return html.ToString();
    }

    /// <summary>A page with one chart on a fixed-size canvas, for a screenshot of exactly <paramref name="width"/> by <paramref name="height"/>.</summary>
    public static string ChartPage(ChartSpec chart, ChartLibrary library, int width, int height)
    {
        ArgumentNullException.ThrowIfNull(chart);
        ArgumentNullException.ThrowIfNull(library);
        var html = new StringBuilder();
        html.Append("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>").Append(Encode(chart.Title)).Append("</title>\n");
        html.Append("<style>html, body { margin: 0; padding: 0; background: #fff; overflow: hidden; } canvas { display: block; }</style>\n</head>\n<body>\n");
        html.Append(CultureInfo.InvariantCulture, $"<canvas id=\"{Encode(chart.Name)}\" width=\"{width}\" height=\"{height}\"></canvas>\n");
        AppendCharts(html, [(chart.Name, Configure(chart.Config, responsive: false))], library);
        html.Append("</body>\n</html>\n");
        return html.ToString();
    }

    private static void AppendCharts(StringBuilder html, IEnumerable<(string Name, JsonObject Config)> charts, ChartLibrary library)
    {
        var list = new JsonArray(charts.Select(c => (JsonNode)new JsonObject { ["name"] = c.Name, ["config"] = c.Config }).ToArray());
        html.Append("<script id=\"saito-charts\" type=\"application/json\">\n").Append(list.ToJsonString()).Append("\n</script>\n");
        html.Append("<script>\n").Append(library.Script).Append("\n</script>\n");
        html.Append("<script>\n").Append(Bootstrap).Append("\n</script>\n");
    }

    /// <summary>A copy of the chart's configuration for a page: filling its box in the report, a fixed canvas in a chart page.</summary>
    private static JsonObject Configure(JsonObject config, bool responsive)
    {
        var copy = (JsonObject)config.DeepClone();
        var options = (JsonObject)copy["options"]!;
        options["responsive"] = responsive;
        options["maintainAspectRatio"] = false;
        if (!responsive)
        {
            options["devicePixelRatio"] = 1;
        }

        return copy;
    }

    private static void Table(StringBuilder html, IReadOnlyList<ResultRow> rows)
    {
        html.Append("<table>\n<thead><tr>");
        foreach (var (name, numeric) in Columns)
        {
            html.Append(numeric ? "<th class=\"n\">" : "<th>").Append(Encode(name)).Append("</th>");
        }

        html.Append("</tr></thead>\n<tbody>\n");
        foreach (var r in rows)
        {
            string[] cells =
            [
                r.Command, r.Op, r.Db, r.Tier, r.Key, Format(r.Threads, "N0"), r.Method, Format(r.Rows, "N0"), Format(r.Seconds, "N2"),
                Format(r.RowsPerS, "N0"), Format(r.P50Ms, "N1"), Format(r.P99Ms, "N1"), Format(r.MaxMs, "N1"),
                r.Timeline is { Count: > 0 } t ? Format(t.Count, "N0") : string.Empty, r.Note ?? string.Empty,
            ];
            html.Append("<tr>");
            for (int i = 0; i < cells.Length; i++)
            {
                html.Append(Columns[i].Numeric ? "<td class=\"n\">" : "<td>").Append(Encode(cells[i])).Append("</td>");
            }

            html.Append("</tr>\n");
        }

        html.Append("</tbody>\n</table>\n");
    }

    private static readonly (string Name, bool Numeric)[] Columns =
    [
        ("command", false), ("op", false), ("db", false), ("tier", false), ("key", false), ("threads", true), ("method", false),
        ("rows", true), ("seconds", true), ("rows/s", true), ("p50 ms", true), ("p99 ms", true), ("max ms", true),
        ("timeline points", true), ("note", false),
    ];

    private static void Term(StringBuilder html, string term, string encodedValue) =>
        html.Append("<dt>").Append(Encode(term)).Append("</dt><dd>").Append(encodedValue).Append("</dd>\n");

    private static string Started(RunContext context) => context.StartedAt.ToString("yyyy-MM-dd HH:mm:ss zzz", CultureInfo.InvariantCulture);

    private static string Format(double? value, string format) => value is { } v ? v.ToString(format, CultureInfo.InvariantCulture) : string.Empty;

    private static string Encode(string text) => WebUtility.HtmlEncode(text);
}

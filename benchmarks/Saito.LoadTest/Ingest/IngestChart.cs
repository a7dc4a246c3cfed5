using System.Globalization;
using System.Net;
using System.Text;

namespace Saito.LoadTest.Ingest;

/// <summary>An SVG a person can open in a browser: committed readings/s and Saito's RSS over the run, one panel each.</summary>
internal static class IngestChart
{
    private const int Width = 900;
    private const int PanelHeight = 220;
    private const int Left = 80;
    private const int Right = 20;
    private const int Top = 40;
    private const int Gap = 50;

    public static string Render(IReadOnlyList<IngestSample> samples, string title)
    {
        var rates = new List<(double X, double Y)>();
        var rss = new List<(double X, double Y)>();
        for (int i = 1; i < samples.Count; i++)
        {
            double dt = samples[i].Seconds - samples[i - 1].Seconds;
            if (dt > 0)
            {
                rates.Add((samples[i].Seconds, (samples[i].AckedReadings - samples[i - 1].AckedReadings) / dt));
            }
        }

        foreach (var s in samples.Where(s => s.ResidentBytes > 0))
        {
            rss.Add((s.Seconds, s.ResidentBytes / 1048576.0));
        }

        double maxX = Math.Max(1, samples.Count > 0 ? samples[^1].Seconds : 1);
        var svg = new StringBuilder();
        int height = Top + (2 * PanelHeight) + Gap + 40;
        svg.Append(CultureInfo.InvariantCulture, $"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n");
        svg.Append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left}\" y=\"20\" font-size=\"13\">{WebUtility.HtmlEncode(title)}</text>\n");
        Panel(svg, Top, "committed readings/s", rates, maxX, "#1f77b4");
        Panel(svg, Top + PanelHeight + Gap, "Saito RSS (MiB)", rss, maxX, "#d62728");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left + ((Width - Left - Right) / 2)}\" y=\"{height - 8}\" text-anchor=\"middle\">seconds</text>\n");
        svg.Append("</svg>\n");
        return svg.ToString();
    }

    private static void Panel(StringBuilder svg, int top, string label, List<(double X, double Y)> points, double maxX, string colour)
    {
        double maxY = points.Count == 0 ? 1 : Math.Max(1, points.Max(p => p.Y)) * 1.1;
        int plotWidth = Width - Left - Right;
        svg.Append(CultureInfo.InvariantCulture, $"<rect x=\"{Left}\" y=\"{top}\" width=\"{plotWidth}\" height=\"{PanelHeight}\" fill=\"none\" stroke=\"#999\"/>\n");
        svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left + 6}\" y=\"{top + 16}\" fill=\"{colour}\">{WebUtility.HtmlEncode(label)}</text>\n");
        for (int tick = 0; tick <= 4; tick++)
        {
            double value = maxY * tick / 4;
            double y = top + PanelHeight - (PanelHeight * tick / 4.0);
            svg.Append(CultureInfo.InvariantCulture, $"<line x1=\"{Left - 4}\" y1=\"{y:F1}\" x2=\"{Left + plotWidth}\" y2=\"{y:F1}\" stroke=\"#eee\"/>");
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{Left - 8}\" y=\"{y + 4:F1}\" text-anchor=\"end\">{value:N0}</text>\n");
            double seconds = maxX * tick / 4;
            double x = Left + (plotWidth * tick / 4.0);
            svg.Append(CultureInfo.InvariantCulture, $"<text x=\"{x:F1}\" y=\"{top + PanelHeight + 16}\" text-anchor=\"middle\">{seconds:N0}</text>\n");
        }

        if (points.Count > 0)
        {
            svg.Append(CultureInfo.InvariantCulture, $"<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\" points=\"");
            foreach (var (x, y) in points)
            {
                svg.Append(CultureInfo.InvariantCulture, $"{Left + (plotWidth * x / maxX):F1},{top + PanelHeight - (PanelHeight * y / maxY):F1} ");
            }

            svg.Append("\"/>\n");
        }
    }
}

using System.Globalization;
using System.Text;
using System.Text.Json.Nodes;

namespace Saito.LoadTest.Results;

/// <summary>One chart of a report: its file stem (chart-....png), a title, and the Chart.js configuration that draws it.</summary>
internal sealed record ChartSpec(string Name, string Title, JsonObject Config)
{
    public string FileName => Name + ".png";
}

/// <summary>
/// Decides which charts a run's rows support and builds their Chart.js configurations:
/// rows/s by threads per (command, op, method) for tiers and archive (per database too when several make too many
/// lines); bulk against row-by-row inserts (tiers) and saito against set-based (archive) per database, split per tier
/// or key when their labels would not fit under the bars; latency and rates over time for each classroom row with a
/// timeline. Rows that measured the same thing twice are averaged.
/// </summary>
internal static class ReportCharts
{
    /// <summary>The most lines a rows-by-threads chart holds when they come from several databases (else one chart per database).</summary>
    private const int MaxLines = 9;

    /// <summary>The most (a, b) pairs one comparison chart holds, however short their labels.</summary>
    private const int MaxPairs = 12;

    /// <summary>Pixels across a 1000-pixel chart that the labels under a comparison's pairs share (the y axis takes the rest).</summary>
    private const double LabelRoom = 900;

    /// <summary>A little more than the mean width of a character of a 13-pixel tick label (Liberation Sans, as Arial).</summary>
    private const double CharWidth = 6.5;

    /// <summary>The least room left between the labels of two pairs.</summary>
    private const double LabelGap = 8;

    /// <summary>Characters of a bold 20-pixel title that fit across a 1000-pixel chart, with a margin.</summary>
    private const int MaxTitleLine = 76;

    // Tableau 10: distinct, print-friendly, readable for the common kinds of colour blindness.
    private static readonly string[] Palette =
        ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

    private static readonly string[] PointStyles = ["circle", "triangle", "rect", "rectRot", "star", "crossRot"];

    private static readonly int[][] Dashes = [[], [10, 5], [3, 4], [12, 4, 3, 4]];

    public static IReadOnlyList<ChartSpec> Build(IReadOnlyList<ResultRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var charts = new List<ChartSpec>();
        charts.AddRange(RowsByThreads(rows));
        charts.AddRange(Comparisons(rows.Where(r => r.Command == "tiers" && r.Op == "insert").ToList(), "bulk", "row-by-row"));
        charts.AddRange(Comparisons(rows.Where(r => r.Command == "archive").ToList(), "saito", "set-based"));
        charts.AddRange(Timelines(rows.Where(r => r.Command == "classroom" && r.Timeline is { Count: > 0 }).ToList()));

        // Two groups whose names slug to the same file stem still get a file each.
        var seen = new HashSet<string>(StringComparer.Ordinal);
        for (int i = 0; i < charts.Count; i++)
        {
            string name = charts[i].Name;
            for (int n = 2; !seen.Add(name); n++)
            {
                name = charts[i].Name + "-" + n.ToString(CultureInfo.InvariantCulture);
            }

            charts[i] = charts[i] with { Name = name };
        }

        return charts;
    }

    /// <summary>For each (command, op, method) of tiers and archive: x = threads, y = rows/s, one line per (db, tier, key).</summary>
    private static IEnumerable<ChartSpec> RowsByThreads(IReadOnlyList<ResultRow> rows)
    {
        var measured = rows.Where(r => r.Command is "tiers" or "archive").ToList();
        foreach (var all in measured.GroupBy(r => (r.Command, r.Op, r.Method)))
        {
            // Results of several databases side by side, unless that makes more lines than a legend and an eye can take.
            var dbs = all.Select(r => (string?)r.Db).Distinct().ToList();
            bool perDb = dbs.Count > 1 && all.Select(r => (r.Db, r.Tier, r.Key)).Distinct().Count() > MaxLines;
            foreach (string? db in perDb ? dbs : [null])
            {
                yield return RowsByThreads(all.Key, db is null ? all.ToList() : all.Where(r => r.Db == db).ToList(), db);
            }
        }
    }

    /// <summary>x = threads, y = rows/s, one line per (db, tier, key) of <paramref name="group"/>; <paramref name="db"/> names the chart's database when split per database.</summary>
    private static ChartSpec RowsByThreads((string Command, string Op, string Method) what, List<ResultRow> group, string? db)
    {
        var threads = ThreadLabels(group);
        var series = group.GroupBy(r => (r.Db, r.Tier, r.Key)).ToList();
        var places = series.Select(s => (s.Key.Db, s.Key.Tier)).Distinct().ToList();
        var keys = series.Select(s => s.Key.Key).Distinct().ToList();
        var (varying, same) = Split(series.Select(s => new[] { ("database", s.Key.Db), ("tier", s.Key.Tier), ("key", s.Key.Key) }).ToList());
        var datasets = new JsonArray();
        foreach (var line in series)
        {
            // Colour tells the database and tier apart, the dash and marker the key; with one place, colour tells keys apart.
            int colour = places.Count > 1 ? places.IndexOf((line.Key.Db, line.Key.Tier)) : keys.IndexOf(line.Key.Key);
            int key = keys.IndexOf(line.Key.Key);
            var dataset = new JsonObject
            {
                ["label"] = varying.Count == 0 ? $"{line.Key.Db} · {line.Key.Tier} · {ShortKey(line.Key.Key)}"
                    : string.Join(" · ", varying.Select(v => v switch { "database" => line.Key.Db, "tier" => line.Key.Tier, _ => ShortKey(line.Key.Key) })),
                ["data"] = new JsonArray(threads.Select(t => Number(Mean(line.Where(r => r.Threads == t), r => r.RowsPerS))).ToArray()),
                ["borderColor"] = Colour(colour),
                ["backgroundColor"] = Colour(colour),
                ["borderWidth"] = 2.5,
                ["pointRadius"] = 5,
                ["pointHoverRadius"] = 7,
                ["pointStyle"] = PointStyles[key % PointStyles.Length],
                ["borderDash"] = places.Count > 1 ? Dash(key) : new JsonArray(),
                ["spanGaps"] = true,
            };
            datasets.Add(dataset);
        }

        // "archive archive": the archive command's only op is named after it.
        string op = what.Op == what.Command ? string.Empty : what.Op;
        string title = (op.Length == 0
            ? $"{Capital(what.Command)} rows/s by threads: {what.Method}"
            : $"{Capital(op)} rows/s by threads: {what.Command}, {what.Method}") + (db is null ? string.Empty : ", " + db);
        string subtitle = string.Join(" · ", same.Select(p => $"{p.Name} {p.Value}"));
        if (varying.Count > 0)
        {
            subtitle = $"one line per {string.Join(" · ", varying)}" + (subtitle.Length > 0 ? " · " + subtitle : string.Empty);
        }

        var x = XAxis("threads");
        x["offset"] = true;
        var config = Line(title, subtitle, new JsonArray(threads.Select(t => (JsonNode)Thousands(t)).ToArray()), datasets, x, YAxis("rows/s"));
        return new ChartSpec(Slug("chart", "rows-by-threads", what.Command, op, what.Method, db ?? string.Empty), title, config);
    }

    /// <summary>
    /// Grouped bars of method <paramref name="a"/> against <paramref name="b"/> per (op, db), one pair per (tier, key,
    /// threads) that measured both; the label under each pair says how many times faster <paramref name="a"/> was.
    /// When the labels of all pairs do not fit side by side under one chart's bars (more than <see cref="MaxPairs"/>, or
    /// too wide for <see cref="LabelRoom"/>), they are split: one chart per tier, then per key, then per run of thread
    /// counts. The charts of one database share their y axis, so that they compare with each other.
    /// </summary>
    private static IEnumerable<ChartSpec> Comparisons(List<ResultRow> rows, string a, string b)
    {
        foreach (var group in rows.Where(r => r.Method == a || r.Method == b).GroupBy(r => (r.Command, r.Op, r.Db)))
        {
            var measured = group
                .GroupBy(r => (r.Tier, r.Key, r.Threads))
                .Select(p => (p.Key, A: Mean(p.Where(r => r.Method == a), r => r.RowsPerS), B: Mean(p.Where(r => r.Method == b), r => r.RowsPerS)))
                .Where(p => p.A is not null && p.B is not null)
                .Select(p => new Pair(p.Key.Tier, p.Key.Key, p.Key.Threads, p.A!.Value, p.B!.Value))
                .ToList();
            if (measured.Count == 0)
            {
                continue;
            }

            var tiers = measured.Select(p => p.Tier).Distinct().ToList();
            var keys = measured.Select(p => p.Key).Distinct().ToList();
            var ordered = measured
                .OrderBy(p => tiers.IndexOf(p.Tier))
                .ThenBy(p => keys.IndexOf(p.Key))
                .ThenBy(p => p.Threads)
                .ToList();
            var y = ComparisonAxis(ordered);
            foreach (var part in SplitPairs(ordered))
            {
                yield return Comparison(group.Key.Op, group.Key.Db, part, tiers.Count > 1, keys.Count > 1, ordered, a, b, (JsonObject)y.DeepClone());
            }
        }
    }

    /// <summary>One pair of bars: a and b in rows/s for one (tier, key, threads).</summary>
    private sealed record Pair(string Tier, string Key, int Threads, double A, double B)
    {
        public double Ratio => B > 0 ? A / B : double.NaN;
    }

    /// <summary>
    /// The pairs in charts whose labels fit side by side (at most <see cref="MaxPairs"/>, and their widest line times
    /// their number within <see cref="LabelRoom"/>): whole, else per tier, then per key, then runs of thread counts.
    /// </summary>
    private static IEnumerable<List<Pair>> SplitPairs(List<Pair> pairs)
    {
        if (Fits(pairs))
        {
            return [pairs];
        }

        if (pairs.Select(p => p.Tier).Distinct().Count() > 1)
        {
            return pairs.GroupBy(p => p.Tier).SelectMany(t => SplitPairs(t.ToList()));
        }

        if (pairs.Select(p => p.Key).Distinct().Count() > 1)
        {
            return pairs.GroupBy(p => p.Key).SelectMany(k => SplitPairs(k.ToList()));
        }

        // One tier and key with more thread counts than fit: the fewest runs that fit, of nearly equal length, in order.
        for (int charts = 2; ; charts++)
        {
            int count = charts;
            var runs = Enumerable.Range(0, count)
                .Select(i => pairs.Skip(i * pairs.Count / count).Take(((i + 1) * pairs.Count / count) - (i * pairs.Count / count)).ToList())
                .ToList();
            if (runs.TrueForAll(Fits) || runs.Exists(r => r.Count == 1))
            {
                return runs;
            }
        }
    }

    private static bool Fits(List<Pair> pairs) =>
        pairs.Count <= MaxPairs && pairs.Count * ((pairs.Max(p => LabelLines(pairs, p).Max(l => l.Length)) * CharWidth) + LabelGap) <= LabelRoom;

    /// <summary>The lines under a pair: its tier or key only when the chart has several, then the threads and the ratio.</summary>
    private static List<string> LabelLines(List<Pair> chart, Pair pair)
    {
        var lines = new List<string>();
        if (chart.Exists(p => p.Tier != pair.Tier))
        {
            lines.Add(pair.Tier);
        }

        if (chart.Exists(p => p.Key != pair.Key))
        {
            lines.Add(ShortKey(pair.Key));
        }

        lines.Add(pair.Threads == 1 ? "1 thread" : $"{Thousands(pair.Threads)} threads");
        lines.Add(Ratio(pair.Ratio));
        return lines;
    }

    /// <summary>One chart of pairs: those of a database (<paramref name="all"/>) or, split, those of one tier, key or run of threads.</summary>
    private static ChartSpec Comparison(string op, string db, List<Pair> pairs, bool manyTiers, bool manyKeys, List<Pair> all, string a, string b, JsonObject y)
    {
        var tiers = pairs.Select(p => p.Tier).Distinct().ToList();
        var keys = pairs.Select(p => p.Key).Distinct().ToList();

        // What this chart was split on goes in its title and file name; what the whole database shares, in the subtitle.
        var split = new List<string>();
        var splitName = new List<string>();
        if (tiers.Count == 1 && manyTiers)
        {
            split.Add($"tier {tiers[0]}");
            splitName.Add(tiers[0]);
        }

        if (keys.Count == 1 && manyKeys)
        {
            split.Add($"key {keys[0]}");
            splitName.Add(keys[0]);
        }

        int allThreads = all.Count(p => p.Tier == pairs[0].Tier && p.Key == pairs[0].Key);
        if (tiers.Count == 1 && keys.Count == 1 && pairs.Count < allThreads)
        {
            string run = $"{Thousands(pairs[0].Threads)} to {Thousands(pairs[^1].Threads)} threads";
            split.Add(run);
            splitName.Add($"{pairs[0].Threads.ToString(CultureInfo.InvariantCulture)}-to-{pairs[^1].Threads.ToString(CultureInfo.InvariantCulture)}-threads");
        }

        // Each label an array, drawn one element per line (Chart.js does not wrap), centred under its pair.
        var labels = new JsonArray(pairs.Select(p => (JsonNode)new JsonArray(LabelLines(pairs, p).Select(l => (JsonNode)l).ToArray())).ToArray());

        var datasets = new JsonArray
        {
            Bars(a, pairs.Select(p => p.A), Palette[0]),
            Bars(b, pairs.Select(p => p.B), Palette[1]),
        };

        var finite = pairs.Select(p => p.Ratio).Where(double.IsFinite).ToList();
        string range = finite.Count == 0 ? string.Empty
            : Ratio(finite.Min()) == Ratio(finite.Max()) ? $"{a} ÷ {b} = {Ratio(finite.Min())}"
            : $"{a} ÷ {b} = {Ratio(finite.Min())} to {Ratio(finite.Max())}";
        string where = (tiers.Count == 1 && !manyTiers ? $"tier {tiers[0]} · " : string.Empty) + (keys.Count == 1 && !manyKeys ? $"key {keys[0]} · " : string.Empty);
        string title = $"{Capital(a)} against {b}: {op} rows/s, {db}" + string.Concat(split.Select(s => ", " + s));
        var config = new JsonObject
        {
            ["type"] = "bar",
            ["data"] = new JsonObject { ["labels"] = labels, ["datasets"] = datasets },
            ["options"] = Options(title, where + range + " (under each pair)", BarAxis(tiers.Count > 1, keys.Count > 1), y),
        };
        return new ChartSpec(Slug(["chart", a + "-vs-" + b, op, db, .. splitName]), title, config);
    }

    /// <summary>
    /// The y axis of a database's comparison charts, from all their pairs so that split charts compare with each other:
    /// logarithmic when the bars span more than 50 times, from a power of ten up to the next labelled (1, 2, 5) value.
    /// </summary>
    private static JsonObject ComparisonAxis(List<Pair> pairs)
    {
        var values = pairs.SelectMany(p => new[] { p.A, p.B }).Where(v => v > 0 && double.IsFinite(v)).ToList();
        bool log = values.Count > 0 && values.Max() / values.Min() > 50;
        var y = YAxis(log ? "rows/s (log scale)" : "rows/s");
        if (log)
        {
            y["type"] = "logarithmic";
            y["min"] = Math.Pow(10, Math.Floor(Math.Log10(values.Min())));
            y["max"] = Labelled(values.Max());
        }
        else if (values.Count > 0)
        {
            y["suggestedMax"] = Math.Round(values.Max(), 3);
        }

        return y;
    }

    /// <summary>The smallest 1, 2 or 5 times a power of ten at or above <paramref name="value"/> (a log axis labels those).</summary>
    private static double Labelled(double value)
    {
        double decade = Math.Pow(10, Math.Floor(Math.Log10(value)));
        foreach (double m in new[] { 1.0, 2, 5, 10 })
        {
            if (m * decade >= value * (1 - 1e-9))
            {
                return m * decade;
            }
        }

        return 10 * decade;
    }

    /// <summary>For each classroom row with a timeline: latency percentiles over time, and published against committed readings/s.</summary>
    private static IEnumerable<ChartSpec> Timelines(List<ResultRow> rows)
    {
        var names = Distinguishing(rows);
        for (int i = 0; i < rows.Count; i++)
        {
            var row = rows[i];
            var points = row.Timeline!;
            string about = $"{row.Db} · {row.Tier} · {row.Key} · {row.Method} · {Thousands(row.Threads)} threads · {Thousands(row.Rows)} readings";

            string latencyTitle = "Publish-to-commit latency over time (ms)" + (rows.Count > 1 ? ": " + names[i] : string.Empty);
            var latency = new JsonArray
            {
                Series("p50", points.Select(p => (p.TSeconds, p.P50Ms)), Palette[4]),
                Series("p99", points.Select(p => (p.TSeconds, p.P99Ms)), Palette[1]),
                Series("max", points.Select(p => (p.TSeconds, p.MaxMs)), Palette[2]),
            };
            yield return new ChartSpec(
                Slug("chart", "latency", names[i]),
                latencyTitle,
                Line(latencyTitle, about, null, latency, TimeAxis(), YAxis("latency (ms)")));

            string ratesTitle = "Readings/s published and committed over time" + (rows.Count > 1 ? ": " + names[i] : string.Empty);
            // Mostly the two lines coincide: committed is wide underneath, published dashed on top, so both stay visible.
            var published = Series("published/s", points.Select(p => (p.TSeconds, p.PublishedPerS)), Palette[0]);
            published["borderDash"] = new JsonArray(8, 5);
            published["order"] = 0;
            var committed = Series("committed/s", points.Select(p => (p.TSeconds, p.CommittedPerS)), Palette[4]);
            committed["borderWidth"] = 4;
            committed["order"] = 1;
            var rates = new JsonArray { published, committed };
            yield return new ChartSpec(
                Slug("chart", "rates", names[i]),
                ratesTitle,
                Line(ratesTitle, about, null, rates, TimeAxis(), YAxis("readings/s")));
        }
    }

    /// <summary>The parts (db, tier, key, method, threads) that tell the rows apart; empty when there is one row.</summary>
    private static List<string> Distinguishing(List<ResultRow> rows)
    {
        var parts = rows.Select(r => new[] { r.Db, r.Tier, r.Key, r.Method, r.Threads.ToString(CultureInfo.InvariantCulture) + " threads" }).ToList();
        var differing = Enumerable.Range(0, 5).Where(c => parts.Select(p => p[c]).Distinct().Count() > 1).ToList();
        return parts.Select(p => string.Join(" · ", differing.Select(c => p[c]))).ToList();
    }

    /// <summary>The (name, value) parts that differ between series, and those all series share.</summary>
    private static (List<string> Varying, List<(string Name, string Value)> Same) Split(List<(string Name, string Value)[]> series)
    {
        var varying = new List<string>();
        var same = new List<(string, string)>();
        for (int i = 0; series.Count > 0 && i < series[0].Length; i++)
        {
            string name = series[0][i].Name;
            if (series.Select(s => s[i].Value).Distinct().Count() > 1)
            {
                varying.Add(name);
            }
            else
            {
                same.Add((name, series[0][i].Value));
            }
        }

        return (varying, same);
    }

    private static JsonObject Line(string title, string subtitle, JsonArray? labels, JsonArray datasets, JsonObject x, JsonObject y)
    {
        var data = new JsonObject { ["datasets"] = datasets };
        if (labels is not null)
        {
            data["labels"] = labels;
        }

        var options = Options(title, subtitle, x, y);

        // Legend entries drawn as a stretch of the line itself, dash included, rather than a filled box.
        options["plugins"]!["legend"]!["labels"] = new JsonObject
        {
            ["usePointStyle"] = true,
            ["pointStyle"] = "line",
            ["pointStyleWidth"] = 44,
            ["padding"] = 14,
        };
        return new JsonObject { ["type"] = "line", ["data"] = data, ["options"] = options };
    }

    private static JsonObject Options(string title, string subtitle, JsonObject x, JsonObject y) => new()
    {
        // Nothing moves: a screenshot taken at load shows the finished chart.
        ["animation"] = false,
        // Thousands separators in ticks and tooltips, whatever the viewer's locale.
        ["locale"] = "en-US",
        ["interaction"] = new JsonObject { ["mode"] = "nearest", ["intersect"] = false },
        ["plugins"] = new JsonObject
        {
            ["title"] = new JsonObject
            {
                ["display"] = true,
                ["text"] = TitleLines(title),
                ["font"] = new JsonObject { ["size"] = 20, ["weight"] = "bold" },
                ["padding"] = new JsonObject { ["top"] = 4, ["bottom"] = 4 },
            },
            ["subtitle"] = new JsonObject
            {
                ["display"] = subtitle.Length > 0,
                ["text"] = subtitle,
                ["font"] = new JsonObject { ["size"] = 14 },
                ["padding"] = new JsonObject { ["bottom"] = 8 },
            },
            ["legend"] = new JsonObject { ["position"] = "bottom", ["labels"] = new JsonObject { ["boxWidth"] = 36, ["padding"] = 14 } },
        },
        ["scales"] = new JsonObject { ["x"] = x, ["y"] = y },
        // Room after the last bar or point and its label, which would otherwise touch the edge of the picture.
        ["layout"] = new JsonObject { ["padding"] = new JsonObject { ["right"] = 16 } },
    };

    /// <summary>
    /// The title as Chart.js draws it: one line, or two when it is too long for 1000 pixels at 20 bold (Chart.js does
    /// not wrap), broken after its first colon or else its last comma.
    /// </summary>
    private static JsonNode TitleLines(string title)
    {
        if (title.Length <= MaxTitleLine)
        {
            return title;
        }

        // The break nearest the middle, after a colon or comma, so that both lines are as short as can be.
        int best = -1;
        for (int i = 0; i + 1 < title.Length; i++)
        {
            if (title[i] is ':' or ',' && title[i + 1] == ' ' && (best < 0 || Math.Abs((2 * i) - title.Length) < Math.Abs((2 * best) - title.Length)))
            {
                best = i;
            }
        }

        return best < 0 ? title : new JsonArray(title[..(best + 1)], title[(best + 2)..]);
    }

    private static JsonObject XAxis(string title) => new()
    {
        ["title"] = new JsonObject { ["display"] = true, ["text"] = title, ["font"] = new JsonObject { ["size"] = 15 } },
        ["grid"] = new JsonObject { ["display"] = false },
    };

    private static JsonObject BarAxis(bool tiers, bool keys)
    {
        var axis = XAxis((tiers ? "tier · " : string.Empty) + (keys ? "key · " : string.Empty) + "threads");
        // Every label shown; Chart.js turns them only if they still do not fit (a narrow report page, long tier names).
        axis["ticks"] = new JsonObject { ["maxRotation"] = 90, ["autoSkip"] = false, ["font"] = new JsonObject { ["size"] = 13 } };
        return axis;
    }

    private static JsonObject TimeAxis()
    {
        var axis = XAxis("time since start (s)");
        axis["type"] = "linear";
        axis["grid"] = new JsonObject { ["display"] = true };
        return axis;
    }

    private static JsonObject YAxis(string title) => new()
    {
        ["beginAtZero"] = true,
        ["title"] = new JsonObject { ["display"] = true, ["text"] = title, ["font"] = new JsonObject { ["size"] = 15 } },
    };

    private static JsonObject Bars(string label, IEnumerable<double> values, string colour) => new()
    {
        ["label"] = label,
        ["data"] = new JsonArray(values.Select(Number).ToArray()),
        ["backgroundColor"] = colour,
        ["borderColor"] = colour,
        ["borderWidth"] = 1,
    };

    private static JsonObject Series(string label, IEnumerable<(double X, double Y)> points, string colour) => new()
    {
        ["label"] = label,
        ["data"] = new JsonArray(points
            .Where(p => double.IsFinite(p.X) && double.IsFinite(p.Y))
            .Select(p => (JsonNode)new JsonObject { ["x"] = Math.Round(p.X, 3), ["y"] = Math.Round(p.Y, 3) })
            .ToArray()),
        ["borderColor"] = colour,
        ["backgroundColor"] = colour,
        ["borderWidth"] = 2,
        ["pointRadius"] = 2,
        ["pointHoverRadius"] = 5,
    };

    private static List<int> ThreadLabels(IEnumerable<ResultRow> rows) => rows.Select(r => r.Threads).Distinct().Order().ToList();

    private static double? Mean(IEnumerable<ResultRow> rows, Func<ResultRow, double> value)
    {
        var values = rows.Select(value).Where(double.IsFinite).ToList();
        return values.Count == 0 ? null : values.Average();
    }

    private static JsonValue? Number(double? value) => value is { } v && double.IsFinite(v) ? JsonValue.Create(Math.Round(v, 3)) : null;

    private static JsonValue? Number(double value) => Number((double?)value);

    private static string Colour(int index) => Palette[index % Palette.Length];

    private static JsonArray Dash(int index) => new(Dashes[index % Dashes.Length].Select(d => (JsonNode)d).ToArray());

    private static string Thousands(long value) => value.ToString("N0", CultureInfo.InvariantCulture);

    /// <summary>×553, ×10, ×9.95, ×1.5: whole numbers from ten up (9.996 is ×10, not ×10.0).</summary>
    private static string Ratio(double ratio) => double.IsFinite(ratio) ? "×" + ratio.ToString(ratio >= 9.995 ? "N0" : "0.0#", CultureInfo.InvariantCulture) : "× n/a";

    /// <summary>seq-guid for sequential-guid: under a bar or in a legend every character counts.</summary>
    private static string ShortKey(string key) => key.Replace("sequential-", "seq-", StringComparison.Ordinal);

    private static string Capital(string text) => text.Length == 0 ? text : char.ToUpperInvariant(text[0]) + text[1..];

    /// <summary>chart-rows-by-threads-tiers-insert-bulk: lower case letters, digits and single dashes.</summary>
    internal static string Slug(params string[] parts)
    {
        var slug = new StringBuilder();
        foreach (char c in string.Join('-', parts.Where(p => p.Length > 0)).ToLowerInvariant())
        {
            if (char.IsAsciiLetterOrDigit(c))
            {
                slug.Append(c);
            }
            else if (slug.Length > 0 && slug[^1] != '-')
            {
                slug.Append('-');
            }
        }

        return slug.ToString().TrimEnd('-');
    }
}

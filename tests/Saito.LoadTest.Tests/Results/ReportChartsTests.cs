using System.Text.Json.Nodes;
using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>Which charts a run gets: only those its rows support, each with titles, units and the numbers it plots.</summary>
public sealed class ReportChartsTests
{
    [Fact]
    public void A_full_run_gets_every_kind_of_chart()
    {
        var names = ReportCharts.Build(SampleRuns.Everything()).Select(c => c.Name).ToList();

        names.ShouldBe(
        [
            "chart-rows-by-threads-tiers-insert-bulk",
            "chart-rows-by-threads-tiers-insert-row-by-row",
            "chart-rows-by-threads-tiers-select-bulk",
            "chart-rows-by-threads-archive-saito",
            "chart-rows-by-threads-archive-set-based",
            "chart-bulk-vs-row-by-row-insert-sqlite",
            "chart-bulk-vs-row-by-row-insert-postgres",
            "chart-saito-vs-set-based-archive-sqlite",
            "chart-saito-vs-set-based-archive-postgres",
            "chart-latency",
            "chart-rates",
        ]);
    }

    [Fact]
    public void A_classroom_only_run_gets_latency_and_rates_and_nothing_by_threads()
    {
        var charts = ReportCharts.Build([SampleRuns.Classroom()]);

        charts.Select(c => c.Name).ShouldBe(["chart-latency", "chart-rates"]);
        var latency = Datasets(charts[0]);
        latency.Select(d => (string)d["label"]!).ShouldBe(["p50", "p99", "max"]);
        latency[1]["data"]!.AsArray().Count.ShouldBe(60);
        latency[1]["data"]![38]!["y"]!.GetValue<double>().ShouldBe(SampleRuns.Classroom().Timeline![38].P99Ms, 0.001);
        Axis(charts[0], "y").ShouldContain("ms");
        Axis(charts[0], "x").ShouldContain("(s)");
        Datasets(charts[1]).Select(d => (string)d["label"]!).ShouldBe(["published/s", "committed/s"]);
    }

    [Fact]
    public void Several_classroom_runs_get_charts_named_after_what_tells_them_apart()
    {
        var rows = new[] { SampleRuns.Classroom() with { Method = "qos0" }, SampleRuns.Classroom() with { Method = "qos1" } };

        var charts = ReportCharts.Build(rows);

        charts.Select(c => c.Name).ShouldBe(["chart-latency-qos0", "chart-rates-qos0", "chart-latency-qos1", "chart-rates-qos1"]);
        charts[2].Title.ShouldEndWith(": qos1");
    }

    [Fact]
    public void Classroom_rows_without_a_timeline_and_tiers_with_one_method_get_no_comparison()
    {
        var rows = SampleRuns.Tiers().Where(r => r.Method == "bulk").Append(SampleRuns.Classroom() with { Timeline = null }).ToList();

        ReportCharts.Build(rows).Select(c => c.Name).ShouldBe(["chart-rows-by-threads-tiers-insert-bulk", "chart-rows-by-threads-tiers-select-bulk"]);
    }

    [Fact]
    public void Rows_by_threads_has_one_line_per_database_tier_and_key_over_sorted_thread_counts()
    {
        var rows = SampleRuns.Tiers().Reverse().ToList();

        var chart = ReportCharts.Build(rows).Single(c => c.Name == "chart-rows-by-threads-tiers-insert-bulk");

        chart.Config["data"]!["labels"]!.AsArray().Select(l => (string)l!).ShouldBe(["1", "16", "32"]);
        var lines = Datasets(chart);
        lines.Count.ShouldBe(8);
        var line = lines.Single(d => (string)d["label"]! == "postgres · disk · guid");
        double expected = rows.Single(r => r is { Method: "bulk", Op: "insert", Db: "postgres", Tier: "disk", Key: "guid", Threads: 16 }).RowsPerS;
        line["data"]![1]!.GetValue<double>().ShouldBe(expected, 0.001);
        Axis(chart, "y").ShouldBe("rows/s");
        Axis(chart, "x").ShouldBe("threads");
        chart.Title.ShouldContain("rows/s");
    }

    [Fact]
    public void A_single_thread_count_still_gets_its_points()
    {
        var rows = SampleRuns.Tiers().Where(r => r.Threads == 16).ToList();

        var chart = ReportCharts.Build(rows).Single(c => c.Name == "chart-rows-by-threads-tiers-insert-bulk");

        chart.Config["data"]!["labels"]!.AsArray().Select(l => (string)l!).ShouldBe(["16"]);
        Datasets(chart).ShouldAllBe(d => d["data"]!.AsArray().Count == 1 && d["data"]![0] != null);
    }

    [Fact]
    public void Bulk_against_row_by_row_labels_each_pair_with_the_ratio()
    {
        var rows = new[]
        {
            SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 1, "bulk", 100_000, 1),
            SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 1, "row-by-row", 10_000, 2),
            SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 16, "bulk", 150_000, 1),
            SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 16, "row-by-row", 6_000, 1),
            // Only one method at 32 threads: no pair, no bar.
            SampleRuns.Row("tiers", "insert", "sqlite", "fast", "natural", 32, "bulk", 160_000, 1),
        };

        var chart = ReportCharts.Build(rows).Single(c => c.Name == "chart-bulk-vs-row-by-row-insert-sqlite");

        var labels = chart.Config["data"]!["labels"]!.AsArray().Select(l => l!.AsArray().Select(s => (string)s!).ToList()).ToList();
        labels.ShouldBe([["1 thread", "×20"], ["16 threads", "×25"]]);
        Datasets(chart).Select(d => (string)d["label"]!).ShouldBe(["bulk", "row-by-row"]);
        Datasets(chart)[1]["data"]!.AsArray().Select(v => v!.GetValue<double>()).ShouldBe([5_000, 6_000]);
        ((string)chart.Config["options"]!["plugins"]!["subtitle"]!["text"]!).ShouldContain("bulk ÷ row-by-row = ×20 to ×25");
    }

    [Fact]
    public void Two_tiers_of_three_keys_and_three_thread_counts_get_one_comparison_per_tier_of_at_most_nine_pairs()
    {
        var rows = SampleRuns.TiersMatrix("postgres", ["fast", "disk"], ["natural", "guid", "sequential-guid"], [1, 16, 32]);

        var charts = ReportCharts.Build(rows).Where(c => c.Name.StartsWith("chart-bulk-vs-row-by-row", StringComparison.Ordinal)).ToList();

        charts.Select(c => c.FileName).ShouldBe(["chart-bulk-vs-row-by-row-insert-postgres-fast.png", "chart-bulk-vs-row-by-row-insert-postgres-disk.png"]);
        charts.ShouldAllBe(c => Labels(c).Count <= 9);
        charts.Sum(c => Labels(c).Count).ShouldBe(18);
        charts[0].Title.ShouldEndWith("postgres, tier fast");
        charts[1].Title.ShouldEndWith("postgres, tier disk");

        // The tier is in the title, so each label is the key (short), the threads and the ratio, one line each.
        var labels = Labels(charts[0]);
        labels[0].ShouldBe(["natural", "1 thread", "×50"]);
        labels[8].Take(2).ShouldBe(["seq-guid", "32 threads"]);
        labels.ShouldAllBe(l => l.Count == 3 && l[2].StartsWith('×'));
        Axis(charts[0], "x").ShouldBe("key · threads");
        Datasets(charts[0])[0]["data"]!.AsArray().Count.ShouldBe(9);

        // Both tiers on the same y axis, a log one whose top is a labelled value above the highest bar.
        var y = charts.Select(c => c.Config["options"]!["scales"]!["y"]!).ToList();
        ((string)y[0]["type"]!).ShouldBe("logarithmic");
        y[1]["min"]!.GetValue<double>().ShouldBe(y[0]["min"]!.GetValue<double>());
        y[1]["max"]!.GetValue<double>().ShouldBe(y[0]["max"]!.GetValue<double>());
        double highest = rows.Where(r => r.Op == "insert").Max(r => r.RowsPerS);
        double lowest = rows.Where(r => r.Op == "insert").Min(r => r.RowsPerS);
        y[0]["max"]!.GetValue<double>().ShouldBeInRange(highest, highest * 2.5);
        y[0]["min"]!.GetValue<double>().ShouldBeInRange(lowest / 10, lowest);
    }

    [Fact]
    public void One_tier_of_three_keys_and_three_thread_counts_stays_one_comparison()
    {
        var rows = SampleRuns.TiersMatrix("sqlite", ["default"], ["natural", "guid", "sequential-guid"], [1, 16, 32]);

        var chart = ReportCharts.Build(rows).Single(c => c.Name.StartsWith("chart-bulk-vs-row-by-row", StringComparison.Ordinal));

        chart.Name.ShouldBe("chart-bulk-vs-row-by-row-insert-sqlite");
        Labels(chart).Count.ShouldBe(9);
        ((string)chart.Config["options"]!["plugins"]!["subtitle"]!["text"]!).ShouldStartWith("tier default · bulk ÷ row-by-row = ×");
    }

    [Fact]
    public void A_matrix_too_wide_for_a_tier_a_chart_is_split_per_key_and_run_of_threads_and_keeps_every_pair_once()
    {
        int[] threads = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
        var rows = SampleRuns.TiersMatrix("sqlite", ["nvme-raid0-scratch", "spinning-archive-disk"], ["natural", "guid", "sequential-guid"], threads);

        var charts = ReportCharts.Build(rows).Where(c => c.Name.StartsWith("chart-bulk-vs-row-by-row", StringComparison.Ordinal)).ToList();

        charts.Count.ShouldBe(12);
        charts.Select(c => c.Name).ShouldBeUnique();
        charts.ShouldAllBe(c => Labels(c).Count <= 9);
        charts.Sum(c => Labels(c).Count).ShouldBe(2 * 3 * threads.Length);
        charts[1].Name.ShouldBe("chart-bulk-vs-row-by-row-insert-sqlite-nvme-raid0-scratch-natural-32-to-1024-threads");
        Labels(charts[1]).Select(l => l[0]).ShouldBe(["32 threads", "64 threads", "128 threads", "256 threads", "512 threads", "1,024 threads"]);

        // Too long for one line at 20 pixels bold: two, broken after a comma.
        charts[1].Title.ShouldBe("Bulk against row-by-row: insert rows/s, sqlite, tier nvme-raid0-scratch, key natural, 32 to 1,024 threads");
        var title = charts[1].Config["options"]!["plugins"]!["title"]!["text"]!.AsArray().Select(l => (string)l!).ToList();
        title.Count.ShouldBe(2);
        string.Join(' ', title).ShouldBe(charts[1].Title);
        title.ShouldAllBe(l => l.Length <= 76);
    }

    [Fact]
    public void Rows_by_threads_of_several_databases_with_too_many_lines_get_a_chart_per_database()
    {
        string[] keys = ["natural", "guid", "sequential-guid"];
        var rows = SampleRuns.TiersMatrix("sqlite", ["fast", "disk"], keys, [1, 16]).Concat(SampleRuns.TiersMatrix("postgres", ["fast", "disk"], keys, [1, 16])).ToList();

        var charts = ReportCharts.Build(rows).Where(c => c.Name.StartsWith("chart-rows-by-threads-tiers-insert-bulk", StringComparison.Ordinal)).ToList();

        charts.Select(c => c.Name).ShouldBe(["chart-rows-by-threads-tiers-insert-bulk-sqlite", "chart-rows-by-threads-tiers-insert-bulk-postgres"]);
        charts[1].Title.ShouldEndWith(", postgres");
        Datasets(charts[1]).Select(d => (string)d["label"]!).ShouldBe(["fast · natural", "fast · guid", "fast · seq-guid", "disk · natural", "disk · guid", "disk · seq-guid"]);
    }

    [Fact]
    public void Chart_names_are_file_safe()
    {
        ReportCharts.Slug("chart", "rows-by-threads", "Tiers", "insert", "row by/row").ShouldBe("chart-rows-by-threads-tiers-insert-row-by-row");
    }

    private static List<List<string>> Labels(ChartSpec chart) =>
        chart.Config["data"]!["labels"]!.AsArray().Select(l => l!.AsArray().Select(s => (string)s!).ToList()).ToList();

    private static List<JsonNode> Datasets(ChartSpec chart) => chart.Config["data"]!["datasets"]!.AsArray().Select(d => d!).ToList();

    private static string Axis(ChartSpec chart, string axis) => (string)chart.Config["options"]!["scales"]![axis]!["title"]!["text"]!;
}

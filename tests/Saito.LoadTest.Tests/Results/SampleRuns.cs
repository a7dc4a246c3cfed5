using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>Rows shaped like real runs: a tiers matrix, an archive comparison and a classroom run with a minute of timeline.</summary>
internal static class SampleRuns
{
    public static readonly RunContext Context = new(
        "tiers",
        "saito-loadtest tiers --db sqlite,postgres --tier fast=/mnt/fast --tier disk=/mnt/disk --threads 1,16,32 --out results",
        "bench-01 (2 cores, Linux 6.1, .NET 10.0)",
        new DateTimeOffset(2025, 11, 23, 14, 5, 0, TimeSpan.Zero));

    public static IReadOnlyList<ResultRow> Tiers()
    {
        var rows = new List<ResultRow>();
        foreach (var (db, scales) in new[] { ("sqlite", false), ("postgres", true) })
        {
            foreach (var (tier, tierFactor) in new[] { ("fast", 1.0), ("disk", 0.72) })
            {
                foreach (var (key, keyFactor) in new[] { ("natural", 1.0), ("guid", 0.81) })
                {
                    foreach (int threads in new[] { 1, 16, 32 })
                    {
                        double scale = scales ? Math.Min(threads, 6) * (threads == 32 ? 1.1 : 1.0) : 1 + (Math.Log2(threads) * 0.05);
                        double bulk = (db == "sqlite" ? 142_000 : 118_000) * tierFactor * keyFactor * scale;
                        double single = (db == "sqlite" ? 7_400 : 2_900) * tierFactor * keyFactor * (scales ? Math.Min(threads, 9) : 1);
                        rows.Add(Row("tiers", "insert", db, tier, key, threads, "bulk", 200_000, 200_000 / bulk));
                        rows.Add(Row("tiers", "insert", db, tier, key, threads, "row-by-row", 20_000, 20_000 / single));
                        rows.Add(Row("tiers", "select", db, tier, key, threads, "bulk", 200_000, 200_000 / (bulk * 2.4)));
                    }
                }
            }
        }

        return rows;
    }

    /// <summary>A tiers run of one database over every (tier, key, threads): bulk and row-by-row inserts and bulk selects.</summary>
    public static IReadOnlyList<ResultRow> TiersMatrix(string db, string[] tiers, string[] keys, int[] threads)
    {
        var rows = new List<ResultRow>();
        for (int t = 0; t < tiers.Length; t++)
        {
            for (int k = 0; k < keys.Length; k++)
            {
                foreach (int n in threads)
                {
                    double bulk = 150_000 * (1 + (0.1 * Math.Log2(n))) * (1 - (0.1 * t)) * (1 - (0.05 * k));
                    double single = 3_000 * Math.Pow(n, 0.3) * (1 - (0.1 * t));
                    rows.Add(Row("tiers", "insert", db, tiers[t], keys[k], n, "bulk", 100_000, 100_000 / bulk));
                    rows.Add(Row("tiers", "insert", db, tiers[t], keys[k], n, "row-by-row", 10_000, 10_000 / single));
                    rows.Add(Row("tiers", "select", db, tiers[t], keys[k], n, "bulk", 100_000, 100_000 / (bulk * 3)));
                }
            }
        }

        return rows;
    }

    public static IReadOnlyList<ResultRow> Archive()
    {
        var rows = new List<ResultRow>();
        foreach (var (db, speed) in new[] { ("sqlite", 210_000.0), ("postgres", 390_000.0) })
        {
            foreach (int threads in new[] { 1, 4, 8 })
            {
                double saito = speed * (1 + (0.35 * Math.Log2(threads)));
                rows.Add(Row("archive", "archive", db, "default", "natural", threads, "saito", 1_000_000, 1_000_000 / saito) with { MaxMs = 12.5 + threads });
                rows.Add(Row("archive", "archive", db, "default", "natural", threads, "set-based", 1_000_000, 1_000_000 / (speed * 1.6)) with { MaxMs = 180 + (9 * threads) });
            }
        }

        return rows;
    }

    public static ResultRow Classroom()
    {
        var timeline = new List<LatencyPoint>();
        for (int t = 1; t <= 60; t++)
        {
            double wave = Math.Sin(t / 6.0);
            double spike = t is >= 38 and <= 41 ? 140 : 0;
            double published = 10_000 + (t < 5 ? -(5 - t) * 1_800 : 0) + (wave * 150);
            double committed = published - (spike > 0 ? 3_500 : 0) + (t is >= 42 and <= 44 ? 3_000 : 0);
            timeline.Add(new LatencyPoint(t, 4.2 + wave, 18 + (3 * wave) + (spike / 2), 35 + (5 * wave) + spike, published, committed));
        }

        return Row("classroom", "publish", "postgres", "default", "natural", 200, "qos1", 598_200, 60) with
        {
            P50Ms = 4.3,
            P99Ms = 21.7,
            MaxMs = 176.4,
            Timeline = timeline,
            Note = "200 devices, 1 reading per device per 20 ms",
        };
    }

    public static IReadOnlyList<ResultRow> Everything() => [.. Tiers(), .. Archive(), Classroom()];

    public static ResultRow Row(string command, string op, string db, string tier, string key, int threads, string method, long rows, double seconds) => new()
    {
        Command = command,
        Op = op,
        Db = db,
        Tier = tier,
        Key = key,
        Threads = threads,
        Method = method,
        Rows = rows,
        Seconds = Math.Round(seconds, 4),
    };
}

using System.Diagnostics.Metrics;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>
/// The archiver's instruments (meter <c>Saito.Archiver</c>), the same whether the job runs inside the server
/// (<c>Archiver:Schedule</c>) or as <c>saito-archiver</c>. <see cref="Archiver"/> is made with <c>new</c> by both, not
/// from a container, so the meter is static: one per process, which an OpenTelemetry listener picks up by name.
/// <para>
/// <c>saito.archiver.lag</c>, the age of the oldest reading in a hot table, is not read from the database on a scrape:
/// whoever samples it (the server, once a minute) calls <see cref="ReportOldest"/>, and the gauge reports the age of
/// what was found then.
/// </para>
/// </summary>
public static class ArchiverMetrics
{
    public const string MeterName = "Saito.Archiver";

    private static readonly Meter s_meter = new(MeterName);

    private static readonly KeyValuePair<string, object?>[][] s_kindTags =
        [.. ReadingKinds.All.Select(k => new[] { new KeyValuePair<string, object?>("kind", ReadingKinds.Name(k)) })];

    private static readonly string[] s_stages = ["export", "archive", "delete"];

    private static readonly KeyValuePair<string, object?>[][][] s_stageTags =
        [.. ReadingKinds.All.Select(k => s_stages.Select(stage => new[]
        {
            new KeyValuePair<string, object?>("kind", ReadingKinds.Name(k)),
            new KeyValuePair<string, object?>("stage", stage),
        }).ToArray())];

    private static readonly Counter<long> s_rowsMoved = s_meter.CreateCounter<long>("saito.archiver.rows.moved", "{row}",
        "Readings moved from a hot table to its archive table (exported, inserted and deleted from hot), by kind");

    private static readonly Counter<long> s_batches = s_meter.CreateCounter<long>("saito.archiver.batches", "{batch}", "Batches finished, by kind");

    private static readonly Counter<long> s_failures = s_meter.CreateCounter<long>("saito.archiver.batch.failures", "{batch}",
        "Batches that failed at a stage (the journal keeps them for the next run)");

    private static readonly Histogram<double> s_stageSeconds = s_meter.CreateHistogram("saito.archiver.batch.duration", "s",
        "Time one stage of one batch took: export (select and write the file), archive (insert), delete (from hot), by kind and stage",
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300] });

    /// <summary>The oldest hot reading's time per kind, as last sampled (ticks, UTC); 0 when the table was empty; -1 before any sample.</summary>
    private static readonly long[] s_oldestTicks = [-1, -1, -1];

    static ArchiverMetrics()
    {
        s_meter.CreateObservableGauge("saito.archiver.lag", ObserveLag, "s",
            "Age of the oldest reading in a hot table (sampled periodically, not on each scrape), by kind; 0 when the table is empty");
    }

    internal static void Moved(ReadingKind kind, long rows)
    {
        s_rowsMoved.Add(rows, s_kindTags[(int)kind]);
        s_batches.Add(1, s_kindTags[(int)kind]);
    }

    internal static void Failed(ReadingKind kind) => s_failures.Add(1, s_kindTags[(int)kind]);

    /// <summary>A stage (0 export, 1 archive, 2 delete) of a batch of <paramref name="kind"/> took <paramref name="elapsed"/>.</summary>
    internal static void Stage(ReadingKind kind, int stage, TimeSpan elapsed) => s_stageSeconds.Record(elapsed.TotalSeconds, s_stageTags[(int)kind][stage]);

    internal const int ExportStage = 0;
    internal const int ArchiveStage = 1;
    internal const int DeleteStage = 2;

    /// <summary>What a sample of a hot table found: its oldest reading's time (UTC), or null when it is empty.</summary>
    public static void ReportOldest(ReadingKind kind, DateTime? oldestUtc) =>
        Interlocked.Exchange(ref s_oldestTicks[(int)kind], oldestUtc?.Ticks ?? 0);

    private static IEnumerable<Measurement<double>> ObserveLag()
    {
        long now = DateTime.UtcNow.Ticks;
        foreach (var kind in ReadingKinds.All)
        {
            long oldest = Interlocked.Read(ref s_oldestTicks[(int)kind]);
            if (oldest >= 0)
            {
                double age = oldest == 0 ? 0 : Math.Max(0, TimeSpan.FromTicks(now - oldest).TotalSeconds);
                yield return new Measurement<double>(age, s_kindTags[(int)kind]);
            }
        }
    }
}

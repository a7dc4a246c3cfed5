using System.Text.Json.Serialization;

namespace Saito.LoadTest.Results;

/// <summary>
/// One measured run, as <c>tiers</c>, <c>classroom</c> and <c>archive</c> report it: a row of the printed table, an
/// object in results.json (snake_case names) and a line of results.csv.
/// </summary>
internal sealed record ResultRow
{
    /// <summary>The tool command that measured it: tiers, classroom or archive.</summary>
    public required string Command { get; init; }

    /// <summary>insert, select or archive (tiers, archive); publish (classroom).</summary>
    public required string Op { get; init; }

    /// <summary>sqlite, postgres or sqlserver.</summary>
    public required string Db { get; init; }

    /// <summary>The storage tier's name as given with <c>--tier name=path</c> (or "default").</summary>
    public required string Tier { get; init; }

    /// <summary>natural, guid or sequential-guid.</summary>
    public required string Key { get; init; }

    public required int Threads { get; init; }

    /// <summary>tiers: bulk or row-by-row (insert), reader (select), saito (archive); archive: saito or set-based; classroom: QoS and shape, e.g. qos1-hub.</summary>
    public required string Method { get; init; }

    /// <summary>Rows inserted, read or moved (classroom: readings committed).</summary>
    public required long Rows { get; init; }

    public required double Seconds { get; init; }

    [JsonPropertyName("rows_per_s")]
    public double RowsPerS => Seconds > 0 ? Rows / Seconds : 0;

    /// <summary>Classroom: publish-to-commit latency percentiles; archive: the longest insert wait while it ran (max_ms).</summary>
    [JsonPropertyName("p50_ms")]
    public double? P50Ms { get; init; }

    [JsonPropertyName("p99_ms")]
    public double? P99Ms { get; init; }

    [JsonPropertyName("max_ms")]
    public double? MaxMs { get; init; }

    /// <summary>Classroom: latency and rates over time, one point per sampling interval (not in the CSV).</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<LatencyPoint>? Timeline { get; init; }

    /// <summary>Anything a reader of the table needs to know about this row (e.g. "study: 43,000 rows/s").</summary>
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Note { get; init; }
}

/// <summary>One sampling interval of a classroom run: seconds since the start, latency percentiles of the readings committed in it, rates.</summary>
internal sealed record LatencyPoint(
    [property: JsonPropertyName("t_s")] double TSeconds,
    [property: JsonPropertyName("p50_ms")] double P50Ms,
    [property: JsonPropertyName("p99_ms")] double P99Ms,
    [property: JsonPropertyName("max_ms")] double MaxMs,
    [property: JsonPropertyName("published_per_s")] double PublishedPerS,
    [property: JsonPropertyName("committed_per_s")] double CommittedPerS);

using System.Data.Common;
using System.Globalization;
using Saito.Readings;
using Saito.Storage.Data;
using Saito.Storage.Queries;

namespace Saito.Storage;

/// <summary>
/// The readings queries (<see cref="IReadingQueries"/>), written once: the same statements on every database, with the
/// dialect as a few members below (how both tiers are reached from one connection, how a time is passed, how a time
/// becomes microseconds since 1970 for bucketing). Every table has an index on the natural key (device_id, channel, ts):
/// the primary key under the natural key strategy, a secondary index under the GUID ones, so a device's time range,
/// its newest reading per channel and the cross-tier de-duplication are index seeks on every strategy.
/// </summary>
public abstract partial class ReadingDatabase : IReadingQueries
{
    /// <summary>A connection that sees both tiers' tables through <see cref="TierTable"/> (SQLite attaches the archive file).</summary>
    private protected virtual async ValueTask<DbConnection> OpenBothTiersAsync(CancellationToken cancellationToken) =>
        await OpenAsync(StorageTier.Hot, cancellationToken);

    /// <summary>Gives back a connection from <see cref="OpenBothTiersAsync"/>.</summary>
    private protected virtual ValueTask CloseBothTiersAsync(DbConnection connection) => connection.DisposeAsync();

    /// <summary>A reading table as a statement on <see cref="OpenBothTiersAsync"/>'s connection names it.</summary>
    private protected virtual string TierTable(ReadingKind kind, StorageTier tier) => Table(ReadingTables.TableName(kind, KeyStrategy, tier));

    /// <summary>A time parameter, compared with the ts column (SQLite: microseconds since 1970).</summary>
    private protected virtual void AddTime(DbCommand command, string name, DateTime utc) => command.Add(name, utc);

    /// <summary>A timestamp column as whole microseconds since 1970, a 64-bit integer, for bucketing.</summary>
    private protected abstract string EpochMicroseconds(string column);

    /// <summary>A time expression (a column or a scalar subquery) minus <paramref name="span"/>, comparable with the ts column.</summary>
    private protected abstract string TimeBefore(string time, TimeSpan span);

    /// <summary>A count of non-null values as a 64-bit integer (SQL Server: <c>COUNT_BIG</c>).</summary>
    private protected virtual string CountOf(string expression) => $"count({expression})";

    public async Task<IReadOnlyList<Reading>> ReadRangeAsync(
        ReadingKind kind, IReadOnlyList<DeviceInterval> intervals, int limit, IReadOnlyList<ValueField>? fields, CancellationToken cancellationToken)
    {
        ReadingQueryArguments.Kind(kind);
        ReadingQueryArguments.Limit(limit);
        var carrying = fields is null ? null : ReadingQueryArguments.Fields(kind, fields);
        var wanted = ReadingQueryArguments.Intervals(intervals);
        if (wanted.Count == 0)
        {
            return [];
        }

        return await OnBothTiersAsync(RangeSql(kind, wanted.Count, carrying), wanted, command => command.Add(Parameter("limit"), limit),
            reader => ReadReadingsAsync(reader, kind, cancellationToken), cancellationToken);
    }

    /// <summary>The range statement: parameters <c>limit</c> and the intervals' (<see cref="AddIntervals"/>).</summary>
    private string RangeSql(ReadingKind kind, int intervals, ValueField[]? carrying)
    {
        string columns = string.Join(", ", ReadingColumns(kind).Select(Column));
        return
            $"SELECT {Top(Parameter("limit"))}{columns} FROM (\n{BothTiers(kind, intervals)}\n) AS r{WhereCarriesAny("r", kind, carrying)} " +
            $"ORDER BY {Column("ts")}, {Column("device_id")}, {Column("channel")}{Limit(Parameter("limit"))}{End}";
    }

    /// <summary>
    /// Every shape of statement the readings queries run for <paramref name="kind"/> (one and several intervals or
    /// devices, every field and some), so a database that cannot run here can have its statements parsed (SQL Server:
    /// ScriptDom, in Saito.Storage.Tests).
    /// </summary>
    internal IEnumerable<string> QueryStatements(ReadingKind kind)
    {
        var all = ReadingFields.FieldsOf(kind).ToArray();
        ValueField[] some = [all[^1]];
        foreach (int many in new[] { 1, 3 })
        {
            yield return RangeSql(kind, many, null);
            yield return RangeSql(kind, many, some);
            yield return LatestSql(kind, many, null);
            yield return LatestSql(kind, many, all);
            yield return DownsampleSql(kind, many, all, null);
            yield return DownsampleSql(kind, many, some, some);
        }
    }

    /// <summary>Runs <paramref name="sql"/> with the intervals' parameters (and <paramref name="addParameters"/>') on a connection that sees both tiers.</summary>
    private async Task<T> OnBothTiersAsync<T>(
        string sql, List<DeviceInterval> intervals, Action<DbCommand> addParameters, Func<DbDataReader, Task<T>> read, CancellationToken cancellationToken)
    {
        var connection = await OpenBothTiersAsync(cancellationToken);
        try
        {
            await using var command = Command(connection, sql);
            AddIntervals(command, intervals);
            addParameters(command);
            await using var reader = await command.ExecuteReaderAsync(cancellationToken);
            return await read(reader);
        }
        finally
        {
            await CloseBothTiersAsync(connection);
        }
    }

    public async Task<IReadOnlyList<Reading>> LatestAsync(ReadingKind kind, IReadOnlyList<int> deviceIds, IReadOnlyList<ValueField>? fields, CancellationToken cancellationToken)
    {
        ReadingQueryArguments.Kind(kind);
        var carrying = fields is null ? null : ReadingQueryArguments.Fields(kind, fields);
        var ids = ReadingQueryArguments.DeviceIds(deviceIds);
        if (ids.Length == 0)
        {
            return [];
        }

        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        await using var command = Command(connection, LatestSql(kind, ids.Length, carrying));
        for (int i = 0; i < ids.Length; i++)
        {
            command.Add(Parameter("d" + i), ids[i]);
        }

        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await ReadReadingsAsync(reader, kind, cancellationToken);
    }

    /// <summary>
    /// The newest reading per device and channel of the hot tier, parameters <c>d0</c>.. the device ids. The channels
    /// of each device are found by a loose index scan (a recursive query that seeks the next channel above the last),
    /// and each channel's newest reading by a seek on (device_id, channel, ts) from the top: a few index probes per
    /// channel, however many readings the device has. With <paramref name="carrying"/>, the newest reading that carries
    /// one of those fields (the seek then walks back past those that carry none, at most
    /// <see cref="ReadingQueryLimits.LatestLookback"/> before the channel's newest).
    /// </summary>
    private protected virtual string LatestSql(ReadingKind kind, int devices, ValueField[]? carrying)
    {
        string table = TierTable(kind, StorageTier.Hot);
        string deviceId = Column("device_id");
        string channel = Column("channel");
        string ts = Column("ts");
        string values = string.Join(", ", Enumerable.Range(0, devices).Select(i => $"({Parameter("d" + i)})"));
        return
            $"""
             WITH RECURSIVE d ({deviceId}) AS (VALUES {values}),
             k ({deviceId}, {channel}) AS (
                 SELECT d.{deviceId}, (SELECT min(t.{channel}) FROM {table} AS t WHERE t.{deviceId} = d.{deviceId}) FROM d
                 UNION ALL
                 SELECT k.{deviceId}, (SELECT min(t.{channel}) FROM {table} AS t WHERE t.{deviceId} = k.{deviceId} AND t.{channel} > k.{channel})
                 FROM k WHERE k.{channel} IS NOT NULL
             )
             SELECT {Aliased("r", ReadingColumns(kind))}
             FROM k JOIN {table} AS r ON r.{deviceId} = k.{deviceId} AND r.{channel} = k.{channel}
                 AND r.{ts} = (SELECT max(m.{ts}) FROM {table} AS m WHERE m.{deviceId} = k.{deviceId} AND m.{channel} = k.{channel}{AndCarriesAny("m", kind, carrying)}{Lookback("m", table, $"k.{deviceId}", $"k.{channel}", carrying)})
             ORDER BY r.{deviceId}, r.{channel}{End}
             """;
    }

    public async Task<IReadOnlyList<DownsampleBucket>> DownsampleAsync(
        ReadingKind kind, IReadOnlyList<DeviceInterval> intervals, DateTime from, DateTime to, TimeSpan bucket, IReadOnlyList<ValueField>? fields,
        CancellationToken cancellationToken)
    {
        ReadingQueryArguments.Kind(kind);
        from = ReadingQueryArguments.Utc(from, nameof(from));
        to = ReadingQueryArguments.Utc(to, nameof(to));
        long width = ReadingQueryArguments.BucketMicroseconds(from, to, bucket);
        var asked = ReadingQueryArguments.Fields(kind, fields);
        var wanted = ReadingQueryArguments.Intervals(intervals, from, to);
        if (wanted.Count == 0)
        {
            return [];
        }

        return await OnBothTiersAsync(DownsampleSql(kind, wanted.Count, asked, fields is null ? null : asked), wanted, command => command.Add(Parameter("bucket"), width), async reader =>
        {
            var buckets = new List<DownsampleBucket>();
            while (await reader.ReadAsync(cancellationToken))
            {
                var statistics = new FieldStatistics[asked.Length];
                for (int i = 0; i < asked.Length; i++)
                {
                    int at = 4 + (4 * i);
                    statistics[i] = new FieldStatistics(
                        asked[i],
                        Int64(reader, at),
                        await NullableDoubleAsync(reader, at + 1, cancellationToken),
                        await NullableDoubleAsync(reader, at + 2, cancellationToken),
                        await NullableDoubleAsync(reader, at + 3, cancellationToken));
                }

                buckets.Add(new DownsampleBucket(
                    reader.GetInt32(0),
                    reader.GetInt32(1),
                    ReadingTime.FromUnixMicroseconds(Int64(reader, 2) * width),
                    Int64(reader, 3),
                    statistics));
            }

            return buckets;
        }, cancellationToken);
    }

    /// <summary>
    /// The downsampling statement: parameters <c>bucket</c> (its width in microseconds) and the intervals'. With
    /// <paramref name="carrying"/>, the readings that carry none of those fields are left out before counting.
    /// </summary>
    private string DownsampleSql(ReadingKind kind, int intervals, ValueField[] asked, ValueField[]? carrying)
    {
        var valueColumns = ReadingTables.ValueColumns(kind);
        var askedColumns = asked.Select(field => Column(valueColumns[ReadingFields.SlotOf(field)])).ToArray();
        string aggregates = string.Concat(askedColumns.Select(c => $", {CountOf(c)}, min({c}), avg({c}), max({c})"));
        string deviceId = Column("device_id");
        string channel = Column("channel");
        string bucketColumn = Column("bucket");
        return
            $"SELECT {deviceId}, {channel}, {bucketColumn}, {CountAll}{aggregates} FROM (\n" +
            $"SELECT {deviceId}, {channel}, {EpochMicroseconds(Column("ts"))} / {Parameter("bucket")} AS {bucketColumn}, {string.Join(", ", askedColumns)} FROM (\n" +
            $"{BothTiers(kind, intervals)}\n) AS u{WhereCarriesAny("u", kind, carrying)}\n) AS r " +
            $"GROUP BY {deviceId}, {channel}, {bucketColumn} ORDER BY {deviceId}, {channel}, {bucketColumn}{End}";
    }

    /// <summary>A count or bucket number, whichever integer type the database answers with.</summary>
    private static long Int64(DbDataReader reader, int ordinal) => Convert.ToInt64(reader.GetValue(ordinal), CultureInfo.InvariantCulture);

    private static async Task<double?> NullableDoubleAsync(DbDataReader reader, int ordinal, CancellationToken cancellationToken) =>
        await reader.IsDBNullAsync(ordinal, cancellationToken) ? null : Convert.ToDouble(reader.GetValue(ordinal), CultureInfo.InvariantCulture);

    private static readonly string[] NaturalKey = ["device_id", "channel", "ts"];

    /// <summary>A condition: the row under <paramref name="alias"/> has a value for at least one of <paramref name="fields"/>.</summary>
    private protected string CarriesAny(string alias, ReadingKind kind, ValueField[] fields)
    {
        var valueColumns = ReadingTables.ValueColumns(kind);
        return "(" + string.Join(" OR ", fields.Select(f => $"{alias}.{Column(valueColumns[ReadingFields.SlotOf(f)])} IS NOT NULL")) + ")";
    }

    /// <summary>
    /// With <paramref name="fields"/>, the condition that the row under <paramref name="alias"/> is at most
    /// <see cref="ReadingQueryLimits.LatestLookback"/> older than the newest reading of the device and channel that
    /// <paramref name="device"/> and <paramref name="channel"/> name, with a leading AND; nothing when
    /// <paramref name="fields"/> is null.
    /// </summary>
    private protected string Lookback(string alias, string table, string device, string channel, ValueField[]? fields)
    {
        if (fields is null)
        {
            return string.Empty;
        }

        string ts = Column("ts");
        string newest = $"(SELECT max(n.{ts}) FROM {table} AS n WHERE n.{Column("device_id")} = {device} AND n.{Column("channel")} = {channel})";
        return $" AND {alias}.{ts} >= {TimeBefore(newest, ReadingQueryLimits.LatestLookback)}";
    }

    /// <summary><see cref="CarriesAny"/> with a leading AND, or nothing when <paramref name="fields"/> is null.</summary>
    private protected string AndCarriesAny(string alias, ReadingKind kind, ValueField[]? fields) =>
        fields is null ? string.Empty : " AND " + CarriesAny(alias, kind, fields);

    /// <summary><see cref="CarriesAny"/> as a WHERE clause, or nothing when <paramref name="fields"/> is null.</summary>
    private string WhereCarriesAny(string alias, ReadingKind kind, ValueField[]? fields) =>
        fields is null ? string.Empty : " WHERE " + CarriesAny(alias, kind, fields);

    private static IReadOnlyList<string> ReadingColumns(ReadingKind kind) => ["device_id", "channel", "ts", .. ReadingTables.ValueColumns(kind), "received_at"];

    private string Aliased(string alias, IEnumerable<string> columns) => string.Join(", ", columns.Select(c => alias + "." + Column(c)));

    /// <summary>
    /// The readings of the intervals from both tiers, each once: the hot tier's, and the archive's whose natural key is
    /// not also in the hot tier (a batch the archiver had inserted into the archive but not yet deleted from the hot
    /// tier when it stopped). Parameters <c>d0</c>, <c>f0</c>, <c>t0</c>.. per interval.
    /// </summary>
    private string BothTiers(ReadingKind kind, int intervals)
    {
        var columns = ReadingColumns(kind);
        string hot = TierTable(kind, StorageTier.Hot);
        string naturalKey = string.Join(" AND ", NaturalKey.Select(c => $"x.{Column(c)} = a.{Column(c)}"));
        return
            $"SELECT {Aliased("h", columns)} FROM {hot} AS h WHERE {InIntervals("h", intervals)}\n" +
            "UNION ALL\n" +
            $"SELECT {Aliased("a", columns)} FROM {TierTable(kind, StorageTier.Archive)} AS a WHERE {InIntervals("a", intervals)}\n" +
            $"    AND NOT EXISTS (SELECT 1 FROM {hot} AS x WHERE {naturalKey})";
    }

    private string InIntervals(string alias, int intervals)
    {
        string deviceId = alias + "." + Column("device_id");
        string ts = alias + "." + Column("ts");
        return "(" + string.Join(" OR ", Enumerable.Range(0, intervals).Select(i =>
            $"({deviceId} = {Parameter("d" + i)} AND {ts} >= {Parameter("f" + i)} AND {ts} < {Parameter("t" + i)})")) + ")";
    }

    private void AddIntervals(DbCommand command, List<DeviceInterval> intervals)
    {
        for (int i = 0; i < intervals.Count; i++)
        {
            command.Add(Parameter("d" + i), intervals[i].DeviceId);
            AddTime(command, Parameter("f" + i), intervals[i].From);
            AddTime(command, Parameter("t" + i), intervals[i].To);
        }
    }
}

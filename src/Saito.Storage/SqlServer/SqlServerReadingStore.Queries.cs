using System.Data;
using System.Data.Common;
using Microsoft.Data.SqlClient;
using Saito.Readings;

namespace Saito.Storage.SqlServer;

/// <summary>SQL Server's part of the readings queries: datetime2 parameters, 64-bit counts, and its own newest-reading statement.</summary>
public sealed partial class SqlServerReadingStore
{
    /// <summary>datetime2(6), as the ts column is (SqlClient would send a DateTime as datetime, to 1/300 s).</summary>
    private protected override void AddTime(DbCommand command, string name, DateTime utc) =>
        command.Parameters.Add(new SqlParameter(name, SqlDbType.DateTime2) { Scale = 6, Value = utc });

    private protected override string EpochMicroseconds(string column) => $"DATEDIFF_BIG(microsecond, CAST('1970-01-01' AS datetime2(6)), {column})";

    private protected override string CountOf(string expression) => $"COUNT_BIG({expression})";

    private protected override string TimeBefore(string time, TimeSpan span) =>
        FormattableString.Invariant($"DATEADD(second, -{(long)span.TotalSeconds}, {time})");

    /// <summary>
    /// T-SQL allows no subquery in a recursive CTE's recursive member, so the channels of each device come from a
    /// DISTINCT over the device's rows (a range scan of the natural-key index), then each channel's newest reading from
    /// a TOP (1) seek. Not measured: the benchmark runs on SQLite and PostgreSQL.
    /// </summary>
    private protected override string LatestSql(ReadingKind kind, int devices, ValueField[]? carrying)
    {
        string table = TierTable(kind, StorageTier.Hot);
        string values = string.Join(", ", Enumerable.Range(0, devices).Select(i => $"({Parameter("d" + i)})"));
        string[] names = ["device_id", "channel", "ts", .. ReadingTables.ValueColumns(kind), "received_at"];
        string columns = string.Join(", ", names.Select(c => "x." + Column(c)));
        string outer = string.Join(", ", names.Select(c => "r." + Column(c)));
        return
            $"""
             SELECT {outer}
             FROM (VALUES {values}) AS d ([device_id])
             CROSS APPLY (SELECT DISTINCT t.[channel] FROM {table} AS t WHERE t.[device_id] = d.[device_id]) AS c
             CROSS APPLY (SELECT TOP (1) {columns} FROM {table} AS x WHERE x.[device_id] = d.[device_id] AND x.[channel] = c.[channel]{AndCarriesAny("x", kind, carrying)}{Lookback("x", table, "d.[device_id]", "c.[channel]", carrying)} ORDER BY x.[ts] DESC) AS r
             ORDER BY r.[device_id], r.[channel];
             """;
    }
}

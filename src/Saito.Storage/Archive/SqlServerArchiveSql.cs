using System.Buffers.Binary;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Archive;

/// <summary>
/// The archiver's T-SQL, as text (tested without a server). Names are Saito's own table names, bracket-quoted;
/// every value is a parameter. T-SQL has no row-value comparison, so "after key (d, c, t)" is spelled out.
/// </summary>
public static class SqlServerArchiveSql
{
    public const string Journal = "archive_journal";

    public static string Columns(ReadingKind kind, KeyStrategy keys, string? alias = null) =>
        string.Join(", ", ReadingTables.Columns(kind, keys).Select(c => (alias is null ? string.Empty : alias + ".") + SqlServerSql.Quote(c)));

    public static string JournalDdl(string? filegroup) =>
        $"""
         IF OBJECT_ID(N'{SqlServerSql.Schema}.{Journal}', N'U') IS NULL
         CREATE TABLE {SqlServerSql.Table(Journal)} (
             [batch_id]     nvarchar(200)  NOT NULL PRIMARY KEY,
             [run_id]       nvarchar(100)  NOT NULL,
             [kind]         nvarchar(20)   NOT NULL,
             [key_strategy] nvarchar(20)   NOT NULL,
             [slice]        int            NOT NULL,
             [slice_low]    bigint         NULL,
             [slice_high]   bigint         NULL,
             [cursor]       nvarchar(100)  NULL,
             [cutoff]       bigint         NOT NULL,
             [batch_rows]   int            NOT NULL,
             [state]        nvarchar(20)   NOT NULL,
             [file]         nvarchar(1000) NOT NULL,
             [rows]         bigint         NOT NULL DEFAULT 0,
             [first_key]    nvarchar(100)  NULL,
             [last_key]     nvarchar(100)  NULL,
             [sha256]       nvarchar(64)   NULL,
             [updated_at]   datetime2(6)   NOT NULL DEFAULT SYSUTCDATETIME()
         ) ON {SqlServerSql.Quote(filegroup ?? SqlServerSql.DefaultFilegroup)}
         """;

    /// <summary>Session-owned application lock, not waited for: 0 or 1 when granted, negative when another run holds it.</summary>
    public const string RunLock =
        "DECLARE @result int; EXEC @result = sp_getapplock @Resource = N'saito-archiver', @LockMode = N'Exclusive', @LockOwner = N'Session', @LockTimeout = 0; SELECT @result;";

    /// <summary>
    /// The batch select: <c>@cutoff</c>, optional <c>@low</c>/<c>@high</c> (device ids, or boundary GUIDs from
    /// <see cref="IdBoundary"/>), optional cursor <c>@d, @c, @t</c> or <c>@after</c>; <c>TOP (@n)</c> in key order.
    /// </summary>
    public static string Select(ReadingKind kind, KeyStrategy keys, bool low, bool high, bool cursor)
    {
        var where = new List<string> { "[ts] < @cutoff" };
        if (keys == KeyStrategy.Natural)
        {
            if (low && !cursor)
            {
                where.Add("[device_id] >= @low");
            }

            if (high)
            {
                where.Add("[device_id] <= @high");
            }

            if (cursor)
            {
                where.Add(After("@d", "@c", "@t"));
            }
        }
        else
        {
            if (low)
            {
                where.Add("[id] >= @low");
            }

            if (high)
            {
                where.Add("[id] < @high");
            }

            if (cursor)
            {
                where.Add("[id] > @after");
            }
        }

        return $"SELECT TOP (@n) {Columns(kind, keys)} FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} " +
               $"WHERE {string.Join(" AND ", where)} ORDER BY {KeyOrder(keys)}";
    }

    public static string KeyOrder(KeyStrategy keys) => keys == KeyStrategy.Natural ? "[device_id], [channel], [ts]" : "[id]";

    /// <summary>(device_id, channel, ts) &gt; (d, c, t), spelled out.</summary>
    public static string After(string d, string c, string t) =>
        $"([device_id] > {d} OR ([device_id] = {d} AND ([channel] > {c} OR ([channel] = {c} AND [ts] > {t}))))";

    /// <summary>(device_id, channel, ts) &gt;= (d, c, t).</summary>
    public static string AtOrAfter(string d, string c, string t) =>
        $"([device_id] > {d} OR ([device_id] = {d} AND ([channel] > {c} OR ([channel] = {c} AND [ts] >= {t}))))";

    /// <summary>(device_id, channel, ts) &lt;= (d, c, t).</summary>
    public static string AtOrBefore(string d, string c, string t) =>
        $"([device_id] < {d} OR ([device_id] = {d} AND ([channel] < {c} OR ([channel] = {c} AND [ts] <= {t}))))";

    /// <summary>The hot delete of the key range [first, last] older than the cutoff (kept only when its count is the batch's).</summary>
    public static string RangeDelete(ReadingKind kind, KeyStrategy keys)
    {
        string table = SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot));
        string range = keys == KeyStrategy.Natural
            ? $"{AtOrAfter("@d1", "@c1", "@t1")} AND {AtOrBefore("@d2", "@c2", "@t2")}"
            : "[id] >= @first AND [id] <= @last";
        return $"DELETE FROM {table} WHERE {range} AND [ts] < @cutoff; SELECT @@ROWCOUNT;";
    }

    public static string KeyJoin(KeyStrategy keys, string left, string right) => keys == KeyStrategy.Natural
        ? $"{left}.[device_id] = {right}.[device_id] AND {left}.[channel] = {right}.[channel] AND {left}.[ts] = {right}.[ts]"
        : $"{left}.[id] = {right}.[id]";

    /// <summary>An empty #temp table with the columns of <paramref name="like"/> (no keys, no IGNORE_DUP_KEY).</summary>
    public static string Stage(string stage, string like, ReadingKind kind, KeyStrategy keys) =>
        $"SELECT TOP (0) {Columns(kind, keys)} INTO {stage} FROM {SqlServerSql.Table(like)};";

    /// <summary>Inserts the staged rows whose key the table lacks; the rows inserted.</summary>
    public static string InsertMissing(string stage, string table, ReadingKind kind, KeyStrategy keys) =>
        $"INSERT INTO {SqlServerSql.Table(table)} ({Columns(kind, keys)}) SELECT {Columns(kind, keys, "s")} FROM {stage} AS s " +
        $"WHERE NOT EXISTS (SELECT 1 FROM {SqlServerSql.Table(table)} AS t WITH (UPDLOCK, HOLDLOCK) WHERE {KeyJoin(keys, "t", "s")}); SELECT @@ROWCOUNT;";

    /// <summary>Deletes the staged keys from the hot table; the rows deleted.</summary>
    public static string DeleteStaged(string stage, ReadingKind kind, KeyStrategy keys) =>
        $"DELETE h FROM {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Hot))} AS h JOIN {stage} AS k ON {KeyJoin(keys, "h", "k")}; SELECT @@ROWCOUNT;";

    /// <summary>Staged rows found in the archive table with every column equal (NULL equal to NULL).</summary>
    public static string CountExactInArchive(string stage, ReadingKind kind, KeyStrategy keys)
    {
        string same = string.Join(" AND ", ReadingTables.Columns(kind, keys).Select(c =>
        {
            string q = SqlServerSql.Quote(c);
            return $"(a.{q} = s.{q} OR (a.{q} IS NULL AND s.{q} IS NULL))";
        }));
        return $"SELECT COUNT_BIG(*) FROM {stage} AS s JOIN {SqlServerSql.Table(ReadingTables.TableName(kind, keys, StorageTier.Archive))} AS a ON {KeyJoin(keys, "a", "s")} WHERE {same};";
    }

    /// <summary>
    /// The smallest uniqueidentifier, in SQL Server's order, whose most significant bytes are <paramref name="prefix"/>:
    /// SQL Server compares bytes 10 to 15 of the .NET byte order first (then 8-9, 6-7, 4-5, 0-3), so slices of a GUID
    /// table are ranges of bytes 10..13, not of the first four bytes as on PostgreSQL and SQLite.
    /// </summary>
    public static Guid IdBoundary(long prefix)
    {
        var bytes = new byte[16];
        BinaryPrimitives.WriteUInt32BigEndian(bytes.AsSpan(10), checked((uint)prefix));
        return new Guid(bytes);
    }
}

using System.Data.SqlTypes;
using Microsoft.Data.SqlClient;
using Microsoft.Data.Sqlite;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Archiver.Tests.SqlServer;

/// <summary>The archiver's T-SQL without a server: the text, the spelled-out key comparisons, the GUID slice boundaries.</summary>
public sealed class SqlServerArchiveSqlTests
{
    [Fact]
    public async Task The_pool_is_sized_for_each_run_to_its_workers_plus_three_keeping_the_rest_of_the_connection_string()
    {
        var options = new StorageOptions
        {
            Provider = StorageProvider.SqlServer,
            ConnectionString = "Server=tcp:127.0.0.1,1;Database=saito;User ID=archiver;Password=x;Max Pool Size=500;Min Pool Size=50;Connect Timeout=7",
        };
        await using var engine = new SqlServerArchiveEngine(options, IArchivePauses.None);

        var before = new SqlConnectionStringBuilder(engine.ConnectionString);
        before.MaxPoolSize.ShouldBe(4, "before a run: one worker plus three");
        before.MinPoolSize.ShouldBe(0);

        await engine.UseWorkersAsync(6);
        var sized = new SqlConnectionStringBuilder(engine.ConnectionString);
        sized.MaxPoolSize.ShouldBe(9);
        sized.MinPoolSize.ShouldBe(0);
        sized.DataSource.ShouldBe("tcp:127.0.0.1,1");
        sized.InitialCatalog.ShouldBe("saito");
        sized.UserID.ShouldBe("archiver");
        sized.ConnectTimeout.ShouldBe(7);
        sized.ApplicationName.ShouldBe("saito-archiver");

        await engine.UseWorkersAsync(0);
        new SqlConnectionStringBuilder(engine.ConnectionString).MaxPoolSize.ShouldBe(4, "no workers asked for counts as one");
    }

    [Fact]
    public void Guid_slices_follow_sql_server_uniqueidentifier_order_without_gaps_or_overlaps()
    {
        var slices = ArchiveSlice.Split(ReadingKind.Biosensor, 0, uint.MaxValue, 4);
        var random = new Random(5);
        var ids = Enumerable.Range(0, 2000).Select(_ =>
        {
            var bytes = new byte[16];
            random.NextBytes(bytes);
            return new Guid(bytes);
        }).Append(Guid.Empty).Append(new Guid(Enumerable.Repeat((byte)0xFF, 16).ToArray()));

        foreach (var id in ids)
        {
            int containing = slices.Count(slice =>
                (slice.Low is not { } low || new SqlGuid(id).CompareTo(new SqlGuid(SqlServerArchiveSql.IdBoundary(low))) >= 0) &&
                (slice.High is not { } high || new SqlGuid(id).CompareTo(new SqlGuid(SqlServerArchiveSql.IdBoundary(high + 1))) < 0));
            containing.ShouldBe(1, id.ToString());
        }
    }

    [Fact]
    public void The_batch_select_takes_the_top_rows_after_the_cursor_in_key_order()
    {
        string sql = SqlServerArchiveSql.Select(ReadingKind.Location, KeyStrategy.Natural, low: true, high: true, cursor: true);

        sql.ShouldStartWith("SELECT TOP (@n) [device_id], [channel], [ts], [x], [y], [z], [received_at] FROM [dbo].[reading_location] WHERE [ts] < @cutoff");
        sql.ShouldNotContain("@low");
        sql.ShouldContain("[device_id] <= @high");
        sql.ShouldContain(SqlServerArchiveSql.After("@d", "@c", "@t"));
        sql.ShouldEndWith("ORDER BY [device_id], [channel], [ts]");
        SqlServerArchiveSql.Select(ReadingKind.Pressure, KeyStrategy.Guid, low: true, high: false, cursor: true)
            .ShouldContain("[id] >= @low AND [id] > @after ORDER BY [id]");
    }

    [Fact]
    public void The_spelled_out_key_comparisons_agree_with_row_value_order()
    {
        // SQLite reads the same text: [name] quoting, @parameters, AND/OR. Its row values give the expected answer.
        using var connection = new SqliteConnection("Data Source=:memory:");
        connection.Open();
        using (var create = connection.CreateCommand())
        {
            create.CommandText =
                "CREATE TABLE k (device_id INTEGER, channel INTEGER, ts INTEGER); " +
                "WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < 26) INSERT INTO k SELECT x / 9, (x / 3) % 3, x % 3 FROM n;";
            create.ExecuteNonQuery();
        }

        foreach (var (d, c, t) in new[] { (0, 0, 0), (1, 1, 1), (2, 2, 2), (1, 0, 2), (1, 2, 0) })
        {
            foreach (var (spelled, rowValue) in new[]
                     {
                         (SqlServerArchiveSql.After("@d", "@c", "@t"), "(device_id, channel, ts) > (@d, @c, @t)"),
                         (SqlServerArchiveSql.AtOrAfter("@d", "@c", "@t"), "(device_id, channel, ts) >= (@d, @c, @t)"),
                         (SqlServerArchiveSql.AtOrBefore("@d", "@c", "@t"), "(device_id, channel, ts) <= (@d, @c, @t)"),
                     })
            {
                Count(connection, spelled, d, c, t).ShouldBe(Count(connection, rowValue, d, c, t), spelled);
            }
        }
    }

    private static long Count(SqliteConnection connection, string predicate, int d, int c, int t)
    {
        using var command = connection.CreateCommand();
        command.CommandText = $"SELECT count(*) FROM k WHERE {predicate}";
        command.Parameters.AddWithValue("@d", d);
        command.Parameters.AddWithValue("@c", c);
        command.Parameters.AddWithValue("@t", t);
        return (long)command.ExecuteScalar()!;
    }

    [Fact]
    public void The_range_delete_is_bounded_by_both_keys_and_the_cutoff_and_returns_its_count()
    {
        string natural = SqlServerArchiveSql.RangeDelete(ReadingKind.Biosensor, KeyStrategy.Natural);
        string guid = SqlServerArchiveSql.RangeDelete(ReadingKind.Biosensor, KeyStrategy.SequentialGuid);

        natural.ShouldStartWith("DELETE FROM [dbo].[reading_biosensor] WHERE ");
        natural.ShouldContain(SqlServerArchiveSql.AtOrAfter("@d1", "@c1", "@t1") + " AND " + SqlServerArchiveSql.AtOrBefore("@d2", "@c2", "@t2"));
        natural.ShouldEndWith("AND [ts] < @cutoff; SELECT @@ROWCOUNT;");
        guid.ShouldBe("DELETE FROM [dbo].[reading_biosensor_seqguid] WHERE [id] >= @first AND [id] <= @last AND [ts] < @cutoff; SELECT @@ROWCOUNT;");
    }

    [Fact]
    public void The_archive_insert_skips_keys_already_archived_and_counts_what_it_inserted()
    {
        string sql = SqlServerArchiveSql.InsertMissing("#saito_stage", "archive_pressure", ReadingKind.Pressure, KeyStrategy.Natural);

        sql.ShouldBe(
            "INSERT INTO [dbo].[archive_pressure] ([device_id], [channel], [ts], [kpa], [received_at]) " +
            "SELECT s.[device_id], s.[channel], s.[ts], s.[kpa], s.[received_at] FROM #saito_stage AS s " +
            "WHERE NOT EXISTS (SELECT 1 FROM [dbo].[archive_pressure] AS t WITH (UPDLOCK, HOLDLOCK) " +
            "WHERE t.[device_id] = s.[device_id] AND t.[channel] = s.[channel] AND t.[ts] = s.[ts]); SELECT @@ROWCOUNT;");
    }

    [Fact]
    public void The_journal_goes_on_the_archive_filegroup_with_reserved_words_quoted()
    {
        string ddl = SqlServerArchiveSql.JournalDdl("SAITO_SLOW");

        ddl.ShouldStartWith("IF OBJECT_ID(N'dbo.archive_journal', N'U') IS NULL");
        ddl.ShouldContain("[cursor]");
        ddl.ShouldContain("[file]");
        ddl.ShouldEndWith(") ON [SAITO_SLOW]");
        SqlServerArchiveSql.JournalDdl(null).ShouldEndWith(") ON [PRIMARY]");
    }
}

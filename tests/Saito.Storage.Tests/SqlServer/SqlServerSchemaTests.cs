using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>The T-SQL the store runs (and the script holds), checked as text: no SQL Server parser is available here.</summary>
public sealed class SqlServerSchemaTests
{
    private static readonly SqlServerSchema Default = new(new SqlServerStorageOptions());

    [Theory]
    [MemberData(nameof(SqlServerRowSourceTests.EveryTable), MemberType = typeof(SqlServerRowSourceTests))]
    public void Reading_tables_drop_duplicates_on_a_clustered_primary_key(ReadingKind kind, KeyStrategy keys)
    {
        foreach (var tier in new[] { StorageTier.Hot, StorageTier.Archive })
        {
            string table = ReadingTables.TableName(kind, keys, tier);
            string ddl = Default.CreateReadingTable(kind, keys, tier);

            ddl.ShouldStartWith($"CREATE TABLE [dbo].[{table}] (");
            string key = keys == KeyStrategy.Natural ? "[device_id], [channel], [ts]" : "[id]";
            ddl.ShouldContain($"CONSTRAINT [pk_{table}] PRIMARY KEY CLUSTERED ({key})\n        WITH (IGNORE_DUP_KEY = ON)");
            ddl.ShouldEndWith(") ON [PRIMARY];");
        }
    }

    [Theory]
    [MemberData(nameof(SqlServerRowSourceTests.EveryTable), MemberType = typeof(SqlServerRowSourceTests))]
    public void Reading_tables_have_the_columns_of_ReadingTables_in_order_with_their_types(ReadingKind kind, KeyStrategy keys)
    {
        string ddl = Default.CreateReadingTable(kind, keys, StorageTier.Hot);
        var lines = ddl.Split('\n').Skip(1).TakeWhile(line => !line.TrimStart().StartsWith("CONSTRAINT", StringComparison.Ordinal)).ToList();

        lines.Select(line => line.Trim().TrimEnd(',')).ShouldBe(ReadingTables.Columns(kind, keys).Select(column => column switch
        {
            "id" => "[id] uniqueidentifier NOT NULL",
            "device_id" or "channel" => $"[{column}] int NOT NULL",
            "ts" or "received_at" => $"[{column}] datetime2(6) NOT NULL",
            _ => kind == ReadingKind.Biosensor ? $"[{column}] float NULL" : $"[{column}] float NOT NULL",
        }));
    }

    [Fact]
    public void Tiers_go_on_their_configured_filegroups()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = "fast_fg", ArchiveFilegroup = "slow_fg" });

        schema.CreateReadingTable(ReadingKind.Biosensor, KeyStrategy.Natural, StorageTier.Hot).ShouldEndWith(") ON [fast_fg];");
        schema.CreateReadingTable(ReadingKind.Biosensor, KeyStrategy.Guid, StorageTier.Archive).ShouldEndWith(") ON [slow_fg];");
        schema.CreateDeviceTable().ShouldEndWith(") ON [fast_fg];");
        schema.CreateDeadLetterTable().ShouldEndWith(") ON [fast_fg];");
        schema.ConfiguredFilegroups().ShouldBe(["fast_fg", "slow_fg"]);
        schema.FilegroupSteps("saito").ShouldBeEmpty("no folder is configured, so Saito adds nothing");
    }

    [Fact]
    public void Only_the_archive_filegroup_may_be_set()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { ArchiveFilegroup = "slow_fg" });

        schema.Filegroup(StorageTier.Hot).ShouldBe("PRIMARY");
        schema.Filegroup(StorageTier.Archive).ShouldBe("slow_fg");
    }

    [Fact]
    public void A_folder_makes_Saito_add_the_filegroup_and_its_file()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = "fast_fg", HotFilePath = "/var/opt/mssql/fast/" });

        var steps = schema.FilegroupSteps("saito");

        steps.Count.ShouldBe(2);
        steps[0].Object.ShouldBe(SqlServerSchemaObject.Filegroup);
        steps[0].Sql.ShouldBe("""
            IF NOT EXISTS (SELECT 1 FROM sys.filegroups WHERE [name] = N'fast_fg')
                ALTER DATABASE CURRENT ADD FILEGROUP [fast_fg];
            """);
        steps[1].Object.ShouldBe(SqlServerSchemaObject.File);
        steps[1].Name.ShouldBe("file /var/opt/mssql/fast/saito_fast_fg.ndf");
        steps[1].Sql.ShouldContain("WHERE g.[name] = N'fast_fg')");
        steps[1].Sql.ShouldContain(
            "ALTER DATABASE CURRENT ADD FILE (NAME = N'saito_fast_fg', FILENAME = N'/var/opt/mssql/fast/saito_fast_fg.ndf') TO FILEGROUP [fast_fg];");
    }

    [Fact]
    public void A_Windows_folder_keeps_backslashes()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { ArchiveFilegroup = "archive", ArchiveFilePath = @"E:\SQL\Archive\" });

        schema.FilegroupSteps("Sensors")[^1].Sql.ShouldContain(@"FILENAME = N'E:\SQL\Archive\Sensors_archive.ndf'");
    }

    [Fact]
    public void Quotes_in_the_folder_or_database_name_are_doubled_not_trusted()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = "hot", HotFilePath = "/data/o'brien'); DROP TABLE x; --" });

        string sql = schema.FilegroupSteps("it's")[^1].Sql;

        sql.ShouldContain("NAME = N'it''s_hot'");
        sql.ShouldContain("FILENAME = N'/data/o''brien''); DROP TABLE x; --/it''s_hot.ndf'");
        // Every quote is doubled: outside the two literals and the filegroup lookup there is no quote at all.
        string unquoted = sql.Replace("''", string.Empty, StringComparison.Ordinal);
        unquoted.Count(c => c == '\'').ShouldBe(6);
    }

    [Fact]
    public void Hot_and_archive_sharing_a_filegroup_add_it_once()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions
        {
            HotFilegroup = "data_fg", HotFilePath = "/d", ArchiveFilegroup = "DATA_FG", ArchiveFilePath = "/d",
        });

        schema.FilegroupSteps("db").Count.ShouldBe(2);
        schema.ConfiguredFilegroups().Count.ShouldBe(1);
    }

    [Theory]
    [InlineData("hot]; DROP TABLE reading_biosensor; --")]
    [InlineData("1hot")]
    [InlineData("hot fg")]
    [InlineData("hot-fg")]
    [InlineData("[hot]")]
    [InlineData("h\u00f6t")]
    public void Filegroup_names_that_are_not_plain_identifiers_are_refused(string name)
    {
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = name })).Message.ShouldContain("HotFilegroup");
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions { ArchiveFilegroup = name })).Message.ShouldContain("ArchiveFilegroup");
    }

    [Fact]
    public void A_folder_without_a_filegroup_is_refused()
    {
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions { HotFilePath = "/data" }))
            .Message.ShouldContain("HotFilegroup");
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions { ArchiveFilePath = "/data" }))
            .Message.ShouldContain("ArchiveFilegroup");
    }

    [Fact]
    public void A_folder_with_control_characters_is_refused()
    {
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = "hot", HotFilePath = "/data\n/x" }));
    }

    [Fact]
    public void One_filegroup_with_two_folders_is_refused()
    {
        Should.Throw<ArgumentException>(() => new SqlServerSchema(new SqlServerStorageOptions
        {
            HotFilegroup = "fg", HotFilePath = "/a", ArchiveFilegroup = "fg", ArchiveFilePath = "/b",
        }));
    }

    [Fact]
    public void Every_table_of_every_key_strategy_is_made_each_guarded_and_named_by_its_table()
    {
        var steps = Default.TableSteps();

        var expected = new List<string> { "device", "dead_letter" };
        foreach (string prefix in new[] { "reading_", "archive_" })
        {
            foreach (string suffix in new[] { "", "_guid", "_seqguid" })
            {
                expected.AddRange(new[] { "biosensor", "location", "pressure" }.Select(kind => prefix + kind + suffix));
            }
        }

        steps.Select(step => step.Target).ShouldBe(expected);
        SqlServerSchema.ReadingTableNames().ShouldBe(expected.Skip(2));
        foreach (var step in steps)
        {
            step.Object.ShouldBe(SqlServerSchemaObject.Table);
            step.Name.ShouldBe(step.Target);
            step.Sql.ShouldStartWith($"IF OBJECT_ID(N'[dbo].[{step.Target}]', N'U') IS NULL\nBEGIN\n    CREATE TABLE [dbo].[{step.Target}] (");
            step.Sql.ShouldEndWith(step.Target switch
            {
                "dead_letter" => "\nEND;\n" + SqlServerSchema.AddDeadLetterPayloadBytes,
                "device" => "\nEND;\n" + SqlServerSchema.AddDeviceRegistryColumns,
                _ when step.Target.EndsWith("guid", StringComparison.Ordinal) =>
                    "\nEND;\n" + Default.NaturalKeyIndex(step.Target, step.Target.StartsWith("archive_", StringComparison.Ordinal) ? StorageTier.Archive : StorageTier.Hot),
                _ => "\nEND;",
            });
        }
    }

    [Fact]
    public void A_guid_keyed_table_gets_an_index_on_the_natural_key_on_its_tier_when_it_has_none()
    {
        var schema = new SqlServerSchema(new SqlServerStorageOptions { HotFilegroup = "fast", ArchiveFilegroup = "slow" });

        schema.NaturalKeyIndex("archive_pressure_seqguid", StorageTier.Archive).ShouldBe(
            "IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_pressure_seqguid]') AND [name] = N'ix_archive_pressure_seqguid_natural')\n" +
            "    CREATE NONCLUSTERED INDEX [ix_archive_pressure_seqguid_natural] ON [dbo].[archive_pressure_seqguid] ([device_id], [channel], [ts]) ON [slow];");
    }

    [Fact]
    public void A_dead_letter_table_made_before_payload_bytes_gets_the_column_added_once()
    {
        SqlServerSchema.AddDeadLetterPayloadBytes.ShouldBe(
            "IF COL_LENGTH(N'[dbo].[dead_letter]', N'payload_bytes') IS NULL\n    ALTER TABLE [dbo].[dead_letter] ADD [payload_bytes] varbinary(max) NULL;");
        Default.CreateDeadLetterTable().ShouldContain("[payload_bytes] varbinary(max) NULL");
    }

    [Fact]
    public void Views_show_the_hot_readings_of_every_key_strategy_with_the_serial()
    {
        var steps = SqlServerSchema.ViewSteps();

        steps.Select(step => step.Target).ShouldBe(["v_biosensor", "v_location", "v_pressure"]);
        steps[2].Object.ShouldBe(SqlServerSchemaObject.View);
        steps[2].Sql.ShouldBe("""
            CREATE OR ALTER VIEW [dbo].[v_pressure] AS
            SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'natural' AS [key_strategy]
              FROM [dbo].[reading_pressure] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
            UNION ALL
            SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'guid' AS [key_strategy]
              FROM [dbo].[reading_pressure_guid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
            UNION ALL
            SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'sequential-guid' AS [key_strategy]
              FROM [dbo].[reading_pressure_seqguid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id];
            """);
        steps[0].Sql.ShouldContain("r.[heart_rate], r.[systolic], r.[diastolic], r.[skin_temp], r.[received_at]");
    }

    [Fact]
    public void The_counting_path_stages_into_a_heap_and_counts_what_the_insert_stored()
    {
        var columns = ReadingTables.Columns(ReadingKind.Location, KeyStrategy.Guid);

        SqlServerSchema.CreateStage("reading_location_guid", columns).ShouldBe(
            "DROP TABLE IF EXISTS #saito_stage;\n" +
            "SELECT TOP (0) [id], [device_id], [channel], [ts], [x], [y], [z], [received_at] INTO #saito_stage FROM [dbo].[reading_location_guid];");
        SqlServerSchema.InsertFromStage("reading_location_guid", columns).ShouldBe("""
            DECLARE @inserted int;
            INSERT INTO [dbo].[reading_location_guid] ([id], [device_id], [channel], [ts], [x], [y], [z], [received_at])
                SELECT [id], [device_id], [channel], [ts], [x], [y], [z], [received_at] FROM #saito_stage;
            SET @inserted = @@ROWCOUNT;
            SELECT @inserted;
            """);
    }

    [Fact]
    public void A_key_stored_already_reads_the_stored_row_through_the_stage_and_updates_its_values_by_natural_key()
    {
        var values = ReadingTables.ValueColumns(ReadingKind.Biosensor);

        SqlServerSchema.StoredRowsOfStage("reading_biosensor", values).ShouldBe("""
            SELECT t.[device_id], t.[channel], t.[ts], t.[heart_rate], t.[systolic], t.[diastolic], t.[skin_temp]
            FROM [dbo].[reading_biosensor] AS t
            WHERE EXISTS (SELECT 1 FROM #saito_stage AS s WHERE s.[device_id] = t.[device_id] AND s.[channel] = t.[channel] AND s.[ts] = t.[ts]);
            """);
        SqlServerSchema.UpdateValues("reading_biosensor", values).ShouldBe(
            "UPDATE [dbo].[reading_biosensor] SET [heart_rate] = @v0, [systolic] = @v1, [diastolic] = @v2, [skin_temp] = @v3 " +
            "WHERE [device_id] = @d AND [channel] = @c AND [ts] = @ts;");
    }

    [Fact]
    public void Device_serials_are_unique_byte_for_byte()
    {
        string ddl = Default.CreateDeviceTable();

        ddl.ShouldContain("[id] int IDENTITY(1, 1) NOT NULL");
        ddl.ShouldContain("[serial] nvarchar(128) COLLATE Latin1_General_100_BIN2 NOT NULL");
        ddl.ShouldContain("CONSTRAINT [uq_device_serial] UNIQUE ([serial])");
        ddl.ShouldContain("CONSTRAINT [pk_device] PRIMARY KEY CLUSTERED ([id])");
        foreach (string column in new[] { "[kind]", "[channels]", "[firmware]", "[hub]", "[first_seen]", "[last_hello]" })
        {
            ddl.ShouldContain(column);
        }
    }

    [Fact]
    public void Dead_letters_hold_every_field_at_its_full_length()
    {
        string ddl = Default.CreateDeadLetterTable();

        ddl.ShouldContain("[id] bigint IDENTITY(1, 1) NOT NULL");
        ddl.ShouldContain("[received_at] datetime2(6) NOT NULL");
        ddl.ShouldContain($"[topic] nvarchar({DeadLetter.MaxTopicChars}) NOT NULL");
        ddl.ShouldContain("[client_id] nvarchar(256) NULL");
        ddl.ShouldContain("[reason] nvarchar(64) NOT NULL");
        ddl.ShouldContain($"[detail] nvarchar({DeadLetter.MaxReasonChars}) NOT NULL");
        ddl.ShouldContain("[payload] nvarchar(max) NOT NULL");
        foreach (string column in SqlServerSchema.DeadLetterColumns)
        {
            ddl.ShouldContain($"[{column}] ");
        }
    }

    [Fact]
    public void Identifiers_are_bracket_quoted_and_literals_escaped()
    {
        SqlServerSql.Quote("reading_biosensor").ShouldBe("[reading_biosensor]");
        SqlServerSql.Quote("a]b").ShouldBe("[a]]b]");
        SqlServerSql.Table("device").ShouldBe("[dbo].[device]");
        SqlServerSql.Literal("it's").ShouldBe("N'it''s'");
        SqlServerSql.Literal("''").ShouldBe("N''''''");
        SqlServerSql.JoinPath("/", "x.ndf").ShouldBe("/x.ndf");
        SqlServerSql.JoinPath(@"D:\data\\", "x.ndf").ShouldBe(@"D:\data\x.ndf");
    }

    [Fact]
    public void The_store_refuses_bad_identifiers_from_options_too()
    {
        var options = new StorageOptions
        {
            Provider = StorageProvider.SqlServer,
            ConnectionString = "Server=localhost;Database=saito",
        };
        options.SqlServer.ArchiveFilegroup = "x]; DROP DATABASE saito; --";

        Should.Throw<ArgumentException>(() => new SqlServerReadingStore(options, Microsoft.Extensions.Logging.Abstractions.NullLogger<SqlServerReadingStore>.Instance));
    }
}

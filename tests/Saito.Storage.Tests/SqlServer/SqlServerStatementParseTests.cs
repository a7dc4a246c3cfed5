using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.SqlServer.TransactSql.ScriptDom;
using Saito.Readings;
using Saito.Storage.Archive;
using Saito.Storage.Keys;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// No SQL Server runs on this machine, so its integration tests skip here; these parse, with Microsoft's own T-SQL parser
/// (ScriptDom, SQL Server 2022's grammar), every shape of statement Saito's SQL Server code writes: the schema script,
/// the readings queries, the device registration, and the archiver's statements. A statement that would not even parse fails here, not on a
/// customer's server.
/// </summary>
public sealed class SqlServerStatementParseTests
{
    public static TheoryData<ReadingKind, KeyStrategy> KindsAndKeys()
    {
        var data = new TheoryData<ReadingKind, KeyStrategy>();
        foreach (var kind in ReadingKinds.All)
        {
            foreach (var keys in Enum.GetValues<KeyStrategy>())
            {
                data.Add(kind, keys);
            }
        }

        return data;
    }

    [Fact]
    public void The_schema_script_parses()
    {
        ParseErrors(SqlServerSchema.Script()).ShouldBeEmpty();
    }

    [Fact]
    public void The_device_registration_statement_parses()
    {
        ParseErrors(SqlServerReadingStore.RegisterSql).ShouldBeEmpty();
    }

    [Theory]
    [MemberData(nameof(KindsAndKeys))]
    public void Every_readings_query_parses(ReadingKind kind, KeyStrategy keys)
    {
        var store = new SqlServerReadingStore(
            new StorageOptions { Provider = StorageProvider.SqlServer, ConnectionString = "Server=127.0.0.1,1;Database=saito_parse_only", KeyStrategy = keys },
            NullLogger<SqlServerReadingStore>.Instance);
        var statements = store.QueryStatements(kind).ToList();

        statements.Count.ShouldBe(12);
        foreach (string sql in statements)
        {
            ParseErrors(sql).ShouldBeEmpty(sql);
        }
    }

    [Theory]
    [MemberData(nameof(KindsAndKeys))]
    public void Every_archiver_statement_parses(ReadingKind kind, KeyStrategy keys)
    {
        const string Stage = "#saito_stage";
        string archive = ReadingTables.TableName(kind, keys, StorageTier.Archive);
        var statements = new List<string>
        {
            SqlServerArchiveSql.JournalDdl(null),
            SqlServerArchiveSql.JournalDdl("SAITO_ARCHIVE"),
            SqlServerArchiveSql.RunLock,
            SqlServerArchiveSql.RangeDelete(kind, keys),
            SqlServerArchiveSql.Stage(Stage, archive, kind, keys),
            SqlServerArchiveSql.InsertMissing(Stage, archive, kind, keys),
            SqlServerArchiveSql.DeleteStaged(Stage, kind, keys),
            SqlServerArchiveSql.CountExactInArchive(Stage, kind, keys),
        };
        foreach (bool low in new[] { false, true })
        {
            foreach (bool high in new[] { false, true })
            {
                foreach (bool cursor in new[] { false, true })
                {
                    statements.Add(SqlServerArchiveSql.Select(kind, keys, low, high, cursor));
                }
            }
        }

        foreach (string sql in statements)
        {
            ParseErrors(sql).ShouldBeEmpty(sql);
        }
    }

    [Theory]
    [MemberData(nameof(KindsAndKeys))]
    public void Every_write_path_statement_parses(ReadingKind kind, KeyStrategy keys)
    {
        string hot = ReadingTables.TableName(kind, keys, StorageTier.Hot);
        var columns = ReadingTables.Columns(kind, keys);
        var values = ReadingTables.ValueColumns(kind);
        foreach (string sql in new[]
                 {
                     SqlServerSchema.CreateStage(hot, columns), SqlServerSchema.InsertFromStage(hot, columns),
                     SqlServerSchema.StoredRowsOfStage(hot, values), SqlServerSchema.UpdateValues(hot, values),
                 })
        {
            ParseErrors(sql).ShouldBeEmpty(sql);
        }
    }

    [Fact]
    public void The_parser_finds_a_broken_statement()
    {
        // The check itself can fail: a statement with a missing parenthesis is reported.
        ParseErrors("SELECT TOP (@n [id] FROM [dbo].[x]").ShouldNotBeEmpty();
    }

    private static List<string> ParseErrors(string sql)
    {
        var parser = new TSql160Parser(initialQuotedIdentifiers: true);
        using var reader = new StringReader(sql);
        parser.Parse(reader, out var errors);
        return [.. errors.Select(e => $"line {e.Line}, column {e.Column}: {e.Message}")];
    }
}

using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Npgsql;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;
using Saito.Storage.Sqlite;
using Saito.Storage.Tests.Sqlite;

namespace Saito.Storage.Tests.Schema;

/// <summary>
/// The scripts in <c>sql/</c> are the DDL the stores run: written out by the same code, compared here, and
/// applied here to empty databases, after which a store finds nothing left to create.
/// <c>SAITO_REGENERATE_SQL=1</c> writes them afresh instead of failing.
/// </summary>
public sealed class SqlScriptTests(PostgresServer server) : IClassFixture<PostgresServer>
{
    private const string RegenerateCommand =
        "SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests";

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    public static TheoryData<string> Scripts => new(
        SqliteSchema.ScriptFiles.Select(file => file.Path).Append(PostgresSchema.ScriptFile).ToArray());

    private static string Generated(string path) =>
        path == PostgresSchema.ScriptFile
            ? PostgresSchema.Script()
            : SqliteSchema.Script(SqliteSchema.ScriptFiles.Single(file => file.Path == path).Tier);

    [Theory]
    [MemberData(nameof(Scripts))]
    public void The_committed_script_is_the_ddl_the_store_runs(string path)
    {
        string generated = Generated(path);
        string file = Path.Combine(RepositoryRoot.Path, path);
        if (Environment.GetEnvironmentVariable("SAITO_REGENERATE_SQL") == "1")
        {
            Directory.CreateDirectory(Path.GetDirectoryName(file)!);
            File.WriteAllText(file, generated);
        }

        string hint = $"{path} is not the DDL the code runs. Regenerate it with\n  {RegenerateCommand}\nthen review and commit the diff.";
        File.Exists(file).ShouldBeTrue(hint);
        string committed = File.ReadAllText(file);
        if (committed != generated)
        {
            Assert.Fail($"{hint}\n{FirstDifference(committed, generated)}");
        }
    }

    [Fact]
    public async Task Applying_the_sqlite_scripts_leaves_the_store_nothing_to_create()
    {
        await using var storage = new SqliteTestStorage();
        foreach (var (path, tier) in SqliteSchema.ScriptFiles)
        {
            string database = storage.File(tier);
            Directory.CreateDirectory(Path.GetDirectoryName(database)!);
            await using var connection = new SqliteConnection($"Data Source={database};Pooling=False");
            await connection.OpenAsync(Ct);
            for (int run = 0; run < 2; run++) // a script may be applied again
            {
                await using var command = connection.CreateCommand();
                command.CommandText = await File.ReadAllTextAsync(Path.Combine(RepositoryRoot.Path, path), Ct);
                await command.ExecuteNonQueryAsync(Ct);
            }
        }

        await using var store = storage.CreateStore(KeyStrategy.Natural);
        var report = await store.EnsureSchemaAsync(Ct);

        report.Created.ShouldBeEmpty();
        (await store.WriteAsync(TestReadings.Batch(TestReadings.Of(Readings.ReadingKind.Biosensor, 10)), Ct)).Inserted.ShouldBe(10);
    }

    [Fact]
    public async Task Applying_the_postgres_script_leaves_the_store_nothing_to_create()
    {
        var (name, connectionString) = await server.CreateDatabaseAsync();
        try
        {
            await using (var connection = new NpgsqlConnection(connectionString + ";Pooling=false"))
            {
                await connection.OpenAsync(Ct);
                for (int run = 0; run < 2; run++) // a script may be applied again
                {
                    await using var command = new NpgsqlCommand(await File.ReadAllTextAsync(Path.Combine(RepositoryRoot.Path, PostgresSchema.ScriptFile), Ct), connection);
                    await command.ExecuteNonQueryAsync(Ct);
                }
            }

            await using var store = new PostgresReadingStore(
                new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = connectionString },
                NullLogger<PostgresReadingStore>.Instance);
            var report = await store.EnsureSchemaAsync(Ct);

            report.Created.ShouldBeEmpty();
            (await store.WriteAsync(TestReadings.Batch(TestReadings.Of(Readings.ReadingKind.Location, 10)), Ct)).Inserted.ShouldBe(10);
        }
        finally
        {
            await server.DropDatabaseAsync(name);
        }
    }

    [Fact]
    public void The_postgres_ddl_puts_tables_and_their_keys_on_the_configured_tablespaces()
    {
        var objects = PostgresSchema.Objects(new PostgresStorageOptions { HotTablespace = "fast", ArchiveTablespace = "slow" });

        foreach (var table in objects.Where(o => o.Kind == Storage.Schema.SchemaObjectKind.Table))
        {
            string tablespace = table.Tier == StorageTier.Hot ? "fast" : "slow";
            table.CreateSql.ShouldEndWith($") TABLESPACE {tablespace}");
            table.CreateSql.ShouldContain($"PRIMARY KEY ", Case.Sensitive);
            table.CreateSql.ShouldContain($"USING INDEX TABLESPACE {tablespace}");
        }

        PostgresSchema.Script().ShouldNotContain("TABLESPACE fast");
    }

    private static string FirstDifference(string committed, string generated)
    {
        string[] a = committed.Split('\n');
        string[] b = generated.Split('\n');
        for (int i = 0; i < Math.Max(a.Length, b.Length); i++)
        {
            string left = i < a.Length ? a[i] : "<end of file>";
            string right = i < b.Length ? b[i] : "<end of file>";
            if (left != right)
            {
                return $"First difference at line {i + 1}:\n  committed: {left}\n  generated: {right}";
            }
        }

        return "The files differ in line ends.";
    }
}

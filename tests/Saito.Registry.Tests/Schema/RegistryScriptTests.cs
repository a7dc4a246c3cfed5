using Microsoft.Data.Sqlite;
using Microsoft.SqlServer.TransactSql.ScriptDom;
using Npgsql;
using Saito.Registry.Data;
using Saito.Registry.Hosting;
using Saito.Registry.Tests.Infrastructure;
using Saito.Server.Registry;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Schema;

/// <summary>
/// The registry's SQL for DBAs, in sql/&lt;engine&gt;/: written from the migrations (as <c>saito registry script</c>
/// prints it), kept equal to what the code generates, applied to real databases, and SQL Server's parsed by ScriptDom.
/// Regenerate after adding a migration: <c>SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Registry.Tests --filter FullyQualifiedName~RegistryScriptTests</c>.
/// </summary>
public sealed class RegistryScriptTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    public static TheoryData<StorageProvider, string> Scripts => new()
    {
        { StorageProvider.Sqlite, "sql/sqlite/003_registry.sql" },
        { StorageProvider.Postgres, "sql/postgres/002_registry.sql" },
        { StorageProvider.SqlServer, "sql/sqlserver/002_registry.sql" },
    };

    [Theory]
    [MemberData(nameof(Scripts))]
    public void The_committed_script_is_what_the_migrations_generate(StorageProvider provider, string file)
    {
        string generated = Generate(provider);
        string path = Path.Combine(RepositoryRoot.Path, file);
        if (Environment.GetEnvironmentVariable("SAITO_REGENERATE_SQL") == "1")
        {
            File.WriteAllText(path, generated);
        }

        File.Exists(path).ShouldBeTrue($"{file} is missing: regenerate it (see this class's summary)");
        File.ReadAllText(path).ShouldBe(generated, $"{file} differs from the migrations: regenerate it (see this class's summary)");
    }

    [Fact]
    public void The_SQL_Server_script_parses_without_errors()
    {
        var parser = new TSql160Parser(initialQuotedIdentifiers: true);
        using var reader = new StringReader(Generate(StorageProvider.SqlServer));
        var fragment = (TSqlScript)parser.Parse(reader, out var errors);

        errors.Select(e => $"line {e.Line}: {e.Message}").ShouldBeEmpty();
        var statements = fragment.Batches.SelectMany(b => b.Statements).ToList();
        statements.OfType<IfStatement>().Count().ShouldBeGreaterThan(10); // idempotent: each step guarded by the history table
        string text = Generate(StorageProvider.SqlServer);
        foreach (string table in new[] { "owner", "contact", "assignment", "check_in", "notice", "staff_user" })
        {
            text.ShouldContain($"CREATE TABLE [{table}]");
        }
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Applying_the_script_after_the_storage_schema_leaves_Saito_nothing_to_migrate(StorageProvider provider)
    {
        await using var database = await TestRegistryDatabase.CreateEmptyAsync(provider, postgres);
        await database.CreateStorageSchemaAsync();
        string script = Generate(provider);
        if (provider == StorageProvider.Sqlite)
        {
            await using var connection = new SqliteConnection(RegistryDatabase.SqliteConnectionString(database.Storage));
            await connection.OpenAsync(Ct);
            await using var command = connection.CreateCommand();
            command.CommandText = script;
            await command.ExecuteNonQueryAsync(Ct);
        }
        else
        {
            await using var connection = new NpgsqlConnection(database.Storage.ConnectionString);
            await connection.OpenAsync(Ct);
            await using var command = new NpgsqlCommand(script, connection);
            await command.ExecuteNonQueryAsync(Ct);
        }

        (await RegistryMigrator.MigrateAsync(database.Contexts, Ct)).ShouldBeEmpty();
    }

    private static string Generate(StorageProvider provider)
    {
        var storage = new StorageOptions
        {
            Provider = provider,
            HotPath = Path.GetTempPath(),
            ConnectionString = provider == StorageProvider.SqlServer ? "Server=localhost;Encrypt=false" : "Host=localhost",
        };
        using RegistryDbContext db = new RegistryContextFactory(Microsoft.Extensions.Options.Options.Create(storage)).Create();
        return RegistryScripts.Generate(db);
    }
}

using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// <c>sql/sqlserver/001_schema.sql</c> is generated from <see cref="SqlServerSchema"/>, the code that
/// EnsureSchemaAsync runs, so the DBA's script and Saito cannot drift apart. With <c>SAITO_REGENERATE_SQL=1</c>
/// the test writes the file instead of comparing. The class name holds <c>SqlScriptTests</c>, so the command that
/// regenerates every engine's script (sql/README.md) regenerates this one too.
/// </summary>
public sealed class SqlServerSqlScriptTests
{
    private const string RelativePath = "sql/sqlserver/001_schema.sql";

    private const string Regenerate =
        "SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests";

    [Fact]
    public void Committed_script_is_what_the_store_runs()
    {
        string path = Path.Combine(RepositoryRoot.Path, RelativePath);
        string generated = SqlServerSchema.Script();
        if (Environment.GetEnvironmentVariable("SAITO_REGENERATE_SQL") == "1")
        {
            Directory.CreateDirectory(Path.GetDirectoryName(path)!);
            File.WriteAllText(path, generated);
        }

        File.Exists(path).ShouldBeTrue($"{RelativePath} is missing; generate it with: {Regenerate}");
        string committed = File.ReadAllText(path).ReplaceLineEndings("\n");
        committed.ShouldBe(generated, $"{RelativePath} differs from SqlServerSchema.Script(); after changing the schema C#, regenerate it with: {Regenerate}");
    }

    [Fact]
    public void Script_holds_every_table_of_every_key_strategy_once()
    {
        string script = SqlServerSchema.Script();
        var schema = new SqlServerSchema(new SqlServerStorageOptions());

        foreach (var step in schema.TableSteps())
        {
            script.ShouldContain(step.Sql + "\nGO\n");
            Occurrences(script, $"CREATE TABLE [dbo].[{step.Target}] (").ShouldBe(1, step.Target);
        }

        foreach (var step in SqlServerSchema.ViewSteps())
        {
            script.ShouldContain(step.Sql + "\nGO\n");
        }

        var statements = string.Join('\n', script.Split('\n').Where(line => !line.StartsWith("--", StringComparison.Ordinal)));
        Occurrences(statements, "CREATE TABLE ").ShouldBe(18 + 2);
        Occurrences(statements, "WITH (IGNORE_DUP_KEY = ON)").ShouldBe(18);
    }

    [Fact]
    public void Filegroup_statements_in_the_script_are_a_commented_example()
    {
        var lines = SqlServerSchema.Script().Split('\n');

        var alters = lines.Where(line => line.Contains("ALTER DATABASE", StringComparison.Ordinal)).ToList();
        alters.Count.ShouldBe(4, "ADD FILEGROUP and ADD FILE for the hot and the archive example");
        alters.ShouldAllBe(line => line.StartsWith("-- ", StringComparison.Ordinal));
        lines.ShouldContain(line => line.Contains("FILENAME = N'/var/opt/mssql/data/fast/saito_saito_hot.ndf'", StringComparison.Ordinal));
        lines.ShouldNotContain(line => !line.StartsWith("--", StringComparison.Ordinal) && line.Contains("saito_hot", StringComparison.Ordinal));
    }

    private static int Occurrences(string text, string value)
    {
        int count = 0;
        for (int at = text.IndexOf(value, StringComparison.Ordinal); at >= 0; at = text.IndexOf(value, at + value.Length, StringComparison.Ordinal))
        {
            count++;
        }

        return count;
    }
}

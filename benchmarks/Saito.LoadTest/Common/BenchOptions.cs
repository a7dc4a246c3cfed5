using System.CommandLine;
using System.Globalization;
using Saito.LoadTest.Results;
using Saito.Storage;
using Saito.Storage.Keys;
using Spectre.Console;
using Saito.Readings.Configuration;

namespace Saito.LoadTest.Common;

/// <summary>
/// The options <c>tiers</c> and <c>archive</c> share: which database, its tiers, its keys, where to put files and
/// results; and the printing both do.
/// </summary>
internal sealed class BenchOptions
{
    private readonly Option<string> _db = new("--db") { Description = "sqlite, postgres or sqlserver", DefaultValueFactory = _ => "sqlite" };
    private readonly Option<string?> _pg = new("--pg") { Description = "PostgreSQL connection string of a server where the tool may create and drop databases (default: env SAITO_BENCH_POSTGRES)" };
    private readonly Option<string?> _sqlServer = new("--sqlserver") { Description = "SQL Server connection string of a login with CREATE DATABASE (default: env SAITO_BENCH_SQLSERVER)" };
    private readonly Option<string[]> _tiers = new("--tier") { Description = "A storage tier, name=path (repeatable): a folder for SQLite, a tablespace at that path for PostgreSQL (name=@existing_tablespace uses one), a filegroup with its file there for SQL Server" };
    private readonly Option<string?> _archiveTier = new("--archive-tier") { Description = "Where archive tables go: name=path (default: the last --tier)" };
    private readonly Option<string> _keys;
    private readonly Option<string> _synchronous = new("--synchronous") { Description = "SQLite synchronous: full or normal", DefaultValueFactory = _ => "full" };
    private readonly Option<string?> _work = new("--work") { Description = "Folder for export files and SQLite's default tier (default: a folder under the temp directory, deleted after)" };
    private readonly Option<string?> _out = new("--out") { Description = "Folder for results.json, results.csv, report.html and the charts as PNG" };

    public BenchOptions(string defaultKeys = "natural")
    {
        _db.AcceptOnlyFromAmong("sqlite", "postgres", "sqlserver");
        _synchronous.AcceptOnlyFromAmong("full", "normal");
        _keys = new Option<string>("--keys") { Description = "Key strategies, comma-separated: natural, guid, sequential-guid", DefaultValueFactory = _ => defaultKeys };
    }

    public void AddTo(Command command)
    {
        ArgumentNullException.ThrowIfNull(command);
        foreach (Option option in new Option[] { _db, _pg, _sqlServer, _tiers, _archiveTier, _keys, _synchronous, _work, _out })
        {
            command.Options.Add(option);
        }
    }

    public string? OutDir(ParseResult parse) => parse.GetValue(_out);

    /// <summary>The tiers to measure, in the order given (the work folder as "default" when none).</summary>
    public IReadOnlyList<BenchTier> Tiers(ParseResult parse, string workDirectory) =>
        parse.GetValue(_tiers) is { Length: > 0 } given ? given.Select(BenchTier.Parse).ToArray() : [BenchTier.Default(workDirectory)];

    public IReadOnlyList<KeyStrategy> Keys(ParseResult parse) => List(parse.GetValue(_keys)!).Select(ParseKey).ToArray();

    /// <summary>The database, the first tier (hot) and the archive tier, the first key strategy; null with a message when the options do not add up.</summary>
    public BenchTarget? Target(ParseResult parse, out string? error)
    {
        error = null;
        try
        {
            var database = parse.GetValue(_db) switch
            {
                "postgres" => StorageProvider.Postgres,
                "sqlserver" => StorageProvider.SqlServer,
                _ => StorageProvider.Sqlite,
            };
            string? server = database switch
            {
                StorageProvider.Postgres => parse.GetValue(_pg) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_POSTGRES"),
                StorageProvider.SqlServer => parse.GetValue(_sqlServer) ?? Environment.GetEnvironmentVariable("SAITO_BENCH_SQLSERVER"),
                _ => null,
            };
            if (database != StorageProvider.Sqlite && string.IsNullOrWhiteSpace(server))
            {
                error = database == StorageProvider.Postgres
                    ? "--db postgres needs --pg <connection string> (or SAITO_BENCH_POSTGRES)."
                    : "--db sqlserver needs --sqlserver <connection string> (or SAITO_BENCH_SQLSERVER).";
                return null;
            }

            string work = Path.GetFullPath(parse.GetValue(_work) ?? Path.Combine(Path.GetTempPath(), $"saito-bench-{Environment.ProcessId}"));
            Directory.CreateDirectory(work);
            var tiers = Tiers(parse, work);
            var archive = parse.GetValue(_archiveTier) is { } a ? BenchTier.Parse(a) : tiers[^1];
            foreach (var tier in tiers.Append(archive).Where(t => database == StorageProvider.Sqlite && !t.IsExistingTablespace))
            {
                Directory.CreateDirectory(tier.Location);
            }

            if (database == StorageProvider.Sqlite && tiers.Append(archive).Any(t => t.IsExistingTablespace))
            {
                error = "--tier name=@tablespace is for PostgreSQL; for SQLite give a folder.";
                return null;
            }

            var keys = Keys(parse);
            return new BenchTarget(database, server, tiers[0], archive, keys[0],
                parse.GetValue(_synchronous) == "normal" ? SqliteSynchronous.Normal : SqliteSynchronous.Full, work);
        }
        catch (FormatException ex)
        {
            error = ex.Message;
            return null;
        }
    }

    /// <summary>Deletes the work folder when the tool chose it.</summary>
    public void CleanUp(ParseResult parse, BenchTarget target)
    {
        ArgumentNullException.ThrowIfNull(target);
        if (parse.GetValue(_work) is null && Directory.Exists(target.WorkDirectory))
        {
            Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
            Directory.Delete(target.WorkDirectory, recursive: true);
        }
    }

    public static string[] List(string text) =>
        text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).Select(s => s.ToLowerInvariant()).Distinct().ToArray();

    public static int[] Numbers(string text) =>
        List(text).Select(s => int.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0
            ? n
            : throw new FormatException($"'{s}' is not a positive whole number.")).ToArray();

    private static KeyStrategy ParseKey(string text) =>
        KebabCaseEnum.Parse<KeyStrategy>(text) is var key && Enum.IsDefined(key)
            ? key
            : throw new FormatException($"--keys: unknown key strategy '{text}' (natural, guid, sequential-guid).");

    /// <summary>A command's line for its report (<c>command --opt value ...</c>), with any PostgreSQL password in <c>--pg</c> hidden.</summary>
    public static string CommandLine(System.CommandLine.ParseResult parse, string command)
    {
        ArgumentNullException.ThrowIfNull(parse);
        var tokens = parse.Tokens.Select(t => t.Value).ToList();
        if (tokens.Count > 0 && tokens[0] == command)
        {
            tokens.RemoveAt(0);
        }

        for (int i = 0; i < tokens.Count - 1; i++)
        {
            if (tokens[i] == "--pg")
            {
                try
                {
                    var builder = new Npgsql.NpgsqlConnectionStringBuilder(tokens[i + 1]);
                    if (builder.Password is not null)
                    {
                        builder.Password = "***";
                    }

                    tokens[i + 1] = builder.ConnectionString;
                }
                catch (ArgumentException)
                {
                    tokens[i + 1] = "***";
                }
            }
        }

        return command + " " + string.Join(' ', tokens.Select(t => t.Contains(' ', StringComparison.Ordinal) || t.Contains(';', StringComparison.Ordinal) ? $"\"{t}\"" : t));
    }

    public static string CommandLine() => string.Join(' ', Environment.GetCommandLineArgs().Skip(1).Select(a => a.Contains(' ', StringComparison.Ordinal) ? $"\"{a}\"" : a));

    public static async Task<string> DescribeMachineAsync(BenchTarget target, CancellationToken token)
    {
        ArgumentNullException.ThrowIfNull(target);
        string cpu = (await File.ReadAllLinesAsync("/proc/cpuinfo", token)).FirstOrDefault(l => l.StartsWith("model name", StringComparison.Ordinal))?.Split(':', 2)[1].Trim() ?? "?";
        long memory = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
        string text = string.Create(CultureInfo.InvariantCulture, $"{Environment.ProcessorCount} cores ({cpu}), {memory / (1024.0 * 1024 * 1024):F0} GiB, .NET {Environment.Version}");
        switch (target.Database)
        {
            case StorageProvider.Postgres:
                text += ", PostgreSQL " + await PostgresTools.DescribeAsync(target.Server!, token);
                break;
            case StorageProvider.SqlServer:
                text += ", SQL Server " + await SqlServerDatabases.DescribeAsync(target.Server!, token);
                break;
            default:
                using (var memoryDb = new Microsoft.Data.Sqlite.SqliteConnection("Data Source=:memory:"))
                {
                    await memoryDb.OpenAsync(token);
                    text += $", SQLite {memoryDb.ServerVersion}, synchronous={target.Synchronous.ToString().ToLowerInvariant()}";
                }

                break;
        }

        return text;
    }

    public static void PrintFiles(ReportFiles files)
    {
        ArgumentNullException.ThrowIfNull(files);
        foreach (string warning in files.Warnings)
        {
            AnsiConsole.MarkupLine($"[yellow]{Markup.Escape(warning)}[/]");
        }

        AnsiConsole.MarkupLine("Wrote " + Markup.Escape(string.Join(", ", files.Written)));
    }
}

/// <summary>A progress bar for one measured step whose label and total may change as it goes (seeding, then the timed part).</summary>
internal static class BenchProgress
{
    public static async Task<T> RunAsync<T>(Func<Action<string, long, long>, Task<T>> run)
    {
        ArgumentNullException.ThrowIfNull(run);
        if (Console.IsOutputRedirected)
        {
            // A log file or CI: plain lines with the rate and the time left, no bar.
            var lines = new ProgressLines(Console.Out, "rows");
            long last = 0;
            var plain = await run((description, done, total) =>
            {
                lines.Report(description, done, total);
                last = done;
            });
            lines.Finish(last);
            return plain;
        }

        T result = default!;
        await AnsiConsole.Progress()
            .AutoClear(true)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new RowsPerSecondColumn(), new ElapsedTimeColumn(), new RemainingTimeColumn(), new SpinnerColumn())
            .StartAsync(async context =>
            {
                var bar = context.AddTask("starting", maxValue: 1);
                string label = "starting";
                result = await run((description, done, total) =>
                {
                    if (description != label)
                    {
                        bar.StopTask();
                        bar = context.AddTask(description, maxValue: Math.Max(1, total));
                        label = description;
                    }

                    bar.Value = done;
                });
                bar.Value = bar.MaxValue;
            });
        return result;
    }
}

/// <summary>Rows per second of a progress task (Spectre's own speed column counts bytes).</summary>
internal sealed class RowsPerSecondColumn : ProgressColumn
{
    public override Spectre.Console.Rendering.IRenderable Render(Spectre.Console.Rendering.RenderOptions options, ProgressTask task, TimeSpan deltaTime)
    {
        ArgumentNullException.ThrowIfNull(task);
        return new Text(task.Speed is { } speed ? $"{speed:N0} rows/s" : "- rows/s");
    }
}

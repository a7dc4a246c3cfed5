using System.CommandLine;
using System.Globalization;
using System.Text.Json;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Saito.Payloads;
using Saito.Storage;
using Saito.Storage.Archive;
using Saito.Readings;
using Spectre.Console;

namespace Saito.Archiver;

/// <summary>Exit codes a scheduler can act on (docs/archiver.md).</summary>
internal static class ExitCodes
{
    public const int Ok = 0;
    public const int Failures = 1;
    public const int BadArguments = 2;
    public const int NothingToDo = 3;

    /// <summary>Asked to stop (SIGTERM, SIGINT, Ctrl+C) before the end: 128 + SIGINT, as a shell reports an interrupted command.</summary>
    public const int Stopped = 130;
}

/// <summary>The commands: <c>run</c>, <c>verify</c>, <c>restore</c>.</summary>
internal static class ArchiverCli
{
    private static readonly JsonSerializerOptions s_json = new() { WriteIndented = true, PropertyNamingPolicy = JsonNamingPolicy.CamelCase };

    public static async Task<int> RunAsync(string[] args)
    {
        if (Console.IsOutputRedirected || Environment.GetEnvironmentVariable("NO_COLOR") is { Length: > 0 })
        {
            // A journal, a log file or a script gets plain lines: no colour codes (Spectre would send them whenever
            // TERM says the terminal could show them, even into a pipe), and lines read whole, not wrapped at 80 columns.
            AnsiConsole.Console = AnsiConsole.Create(new AnsiConsoleSettings
            {
                Ansi = AnsiSupport.No,
                ColorSystem = ColorSystemSupport.NoColors,
                Interactive = InteractionSupport.No,
                Out = new AnsiConsoleOutput(Console.Out),
            });
            AnsiConsole.Profile.Width = 1000;
        }

        var (commandArgs, configurationArgs) = ArchiverConfiguration.Split(args);
        var configuration = ArchiverConfiguration.Build(configurationArgs);
        var root = new RootCommand(
            "saito-archiver: moves readings older than a cutoff from Saito's hot tables to its archive tables through export files, " +
            "crash-safe (a journal of batch states; a killed run is finished by the next). Settings: appsettings.json, " +
            "Saito__Section__Key environment variables and --Section:Key=value arguments, as the server reads them.")
        {
            RunCommand(configuration),
            VerifyCommand(configuration),
            RestoreCommand(configuration),
        };
        var parse = root.Parse(commandArgs);
        if (parse.Errors.Count > 0)
        {
            foreach (var error in parse.Errors)
            {
                await Console.Error.WriteLineAsync(error.Message);
            }

            await Console.Error.WriteLineAsync("See saito-archiver --help.");
            return ExitCodes.BadArguments;
        }

        try
        {
            return await parse.InvokeAsync(new InvocationConfiguration { EnableDefaultExceptionHandler = false });
        }
        catch (OperationCanceledException)
        {
            // SIGTERM or Ctrl+C: the command stopped at its next check. run: the journal keeps every batch under way for
            // the next run; restore: the files and chunks before this point are in, and a repeat skips rows already there.
            await Console.Error.WriteLineAsync(
                "saito-archiver stopped: it was asked to stop (SIGTERM or Ctrl+C) before it finished; what was done so far is kept " +
                "(run: unfinished batches are resumed by the next run; restore: run it again, rows already there are skipped).");
            return ExitCodes.Stopped;
        }
        catch (ArchiveSetupException e)
        {
            await Console.Error.WriteLineAsync("saito-archiver cannot start: " + e.Message);
            return ExitCodes.BadArguments;
        }
        catch (Exception e) when (e is not OperationCanceledException)
        {
            // One line a person can act on; the batch journal keeps whatever was under way for the next run.
            await Console.Error.WriteLineAsync($"saito-archiver failed: {e.GetType().Name}: {e.Message}");
            return ExitCodes.Failures;
        }
    }

    private static Option<string> KindOption() => new("--kind")
    {
        Description = "biosensor, location, pressure or all",
        DefaultValueFactory = _ => "all",
    };

    private static Option<bool> JsonOption() => new("--json") { Description = "A machine-readable summary on stdout (logs stay on stderr)" };

    private static IReadOnlyList<ReadingKind> Kinds(string kind) => kind == "all"
        ? ReadingKinds.All
        : [ReadingKinds.TryParse(kind, out var parsed) ? parsed : throw new ArgumentException($"--kind must be biosensor, location, pressure or all (was '{kind}').")];

    private static Command RunCommand(IConfiguration configuration)
    {
        var olderThan = new Option<string?>("--older-than") { Description = "Move readings older than this: 7d, 36h, 90m, 30s" };
        var before = new Option<string?>("--before") { Description = "Move readings stamped before this ISO-8601 time (UTC unless it says otherwise)" };
        var kind = KindOption();
        kind.AcceptOnlyFromAmong("biosensor", "location", "pressure", "all");
        var threads = new Option<int?>("--threads") { Description = "Workers over disjoint slices (device ranges; GUID tables: id ranges). Default Archiver:Threads (1)" };
        var batchRows = new Option<int?>("--batch-rows") { Description = "Rows per batch: one export file, one archive transaction, one hot delete. Default Archiver:BatchRows (50,000)" };
        var exportDir = new Option<string?>("--export-dir") { Description = "Folder for export files and manifests. Default Archiver:ExportDirectory, else exports/ under Storage:ArchivePath" };
        var gzip = new Option<bool>("--gzip") { Description = "Compress export files (.csv.gz)" };
        var dryRun = new Option<bool>("--dry-run") { Description = "Count what would move; change nothing" };
        var json = JsonOption();
        var command = new Command("run", "Move every reading older than the cutoff to the archive tables (unfinished batches of an earlier run first).")
        {
            olderThan, before, kind, threads, batchRows, exportDir, gzip, dryRun, json,
        };
        command.SetAction(async (parse, token) =>
        {
            var (storage, archiver, failures) = ArchiverConfiguration.Load(configuration);
            var now = DateTime.UtcNow;
            DateTime? cutoff = null;
            string? older = parse.GetValue(olderThan);
            string? beforeText = parse.GetValue(before);
            if (older is not null && beforeText is not null)
            {
                failures = [.. failures, "Give --older-than or --before, not both."];
            }
            else if (older is not null)
            {
                if (TryParseAge(older, out var age))
                {
                    cutoff = now - age;
                }
                else
                {
                    failures = [.. failures, $"--older-than must be a number with d, h, m or s (7d, 36h), was '{older}'."];
                }
            }
            else if (beforeText is not null)
            {
                if (DateTime.TryParse(beforeText, CultureInfo.InvariantCulture, DateTimeStyles.AssumeUniversal | DateTimeStyles.AdjustToUniversal, out var parsed))
                {
                    cutoff = parsed;
                }
                else
                {
                    failures = [.. failures, $"--before must be an ISO-8601 time (2026-11-16T00:00:00Z), was '{beforeText}'."];
                }
            }
            else
            {
                failures = [.. failures, "Say which readings to move: --older-than 7d or --before 2026-11-16T00:00:00Z."];
            }

            archiver.Threads = parse.GetValue(threads) ?? archiver.Threads;
            archiver.BatchRows = parse.GetValue(batchRows) ?? archiver.BatchRows;
            archiver.ExportDirectory = parse.GetValue(exportDir) ?? archiver.ExportDirectory;
            archiver.Gzip = parse.GetValue(gzip) || archiver.Gzip;
            if (new ArchiverOptionsValidator().Validate(null, archiver) is { Failed: true } validation)
            {
                failures = [.. failures, .. validation.Failures];
            }

            // Disposed last (declared first): the final export of the run's figures, after the summary is printed.
            using var telemetry = ArchiverTelemetry.Start(configuration, out string? telemetryFailure);
            if (telemetryFailure is not null)
            {
                failures = [.. failures, telemetryFailure];
            }

            if (failures.Count > 0)
            {
                return BadConfiguration(failures);
            }

            var request = new ArchiveRunRequest
            {
                Kinds = Kinds(parse.GetValue(kind)!),
                Cutoff = cutoff!.Value,
                Threads = archiver.Threads,
                BatchRows = archiver.BatchRows,
                ExportDirectory = archiver.EffectiveExportDirectory(storage),
                Gzip = archiver.Gzip,
                DryRun = parse.GetValue(dryRun),
            };
            bool asJson = parse.GetValue(json);
            using var loggers = Loggers(configuration);
            await using var engine = new Storage.Archive.Archiver(storage, loggers, EnvironmentArchivePauses.FromEnvironment());
            ArchiveRunSummary summary;
            if (asJson || request.DryRun)
            {
                summary = await engine.RunAsync(request, token);
            }
            else if (Console.IsOutputRedirected)
            {
                summary = await WithProgressLinesAsync(engine, request, token);
            }
            else
            {
                summary = await WithProgressAsync(engine, request, token);
            }

            if (asJson)
            {
                await Console.Out.WriteLineAsync(JsonSerializer.Serialize(new
                {
                    command = "run",
                    summary.DryRun,
                    cutoff = summary.CutoffUtc,
                    keyStrategy = summary.KeyStrategy,
                    store = engine.Describe(),
                    exportDirectory = Path.GetFullPath(request.ExportDirectory),
                    rowsOlder = summary.RowsOlder,
                    rowsMoved = summary.RowsMoved,
                    resumedBatches = summary.ResumedBatches,
                    unfinishedBatches = summary.UnfinishedBatches,
                    seconds = Math.Round(summary.Elapsed.TotalSeconds, 3),
                    rowsPerSecond = Math.Round(summary.RowsPerSecond),
                    kinds = summary.Kinds.Select(k => new { k.Kind, k.RowsOlder, k.RowsMoved, k.RowsInserted, k.Batches }),
                    failures = summary.Failures,
                }, s_json));
            }
            else
            {
                PrintRunSummary(summary, engine.Describe());
            }

            return summary.Failures.Count > 0 ? ExitCodes.Failures
                : summary.NothingToDo ? ExitCodes.NothingToDo
                : ExitCodes.Ok;
        });
        return command;
    }

    /// <summary>Under systemd or into a file: a plain line every 10 seconds (rows moved, rows/s, time left).</summary>
    private static async Task<ArchiveRunSummary> WithProgressLinesAsync(Storage.Archive.Archiver engine, ArchiveRunRequest request, CancellationToken token)
    {
        var lines = new ProgressLines(Console.Out, "rows");
        var run = engine.RunAsync(request, token);
        using var ticker = new PeriodicTimer(TimeSpan.FromMilliseconds(250));
        while (!run.IsCompleted)
        {
            await Task.WhenAny(run, ticker.WaitForNextTickAsync(token).AsTask());
            if (engine.ProgressTotal > 0)
            {
                lines.Report("moving rows", engine.Progress, engine.ProgressTotal);
            }
        }

        var summary = await run;
        lines.Finish(summary.RowsMoved);
        return summary;
    }

    private static async Task<ArchiveRunSummary> WithProgressAsync(Storage.Archive.Archiver engine, ArchiveRunRequest request, CancellationToken token)
    {
        ArchiveRunSummary? summary = null;
        await AnsiConsole.Progress()
            .AutoClear(false)
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new RowsPerSecondColumn(), new RemainingTimeColumn())
            .StartAsync(async context =>
            {
                var task = context.AddTask("moving rows", maxValue: 1);
                var run = engine.RunAsync(request, token);
                while (!run.IsCompleted)
                {
                    await Task.WhenAny(run, Task.Delay(250, token));
                    task.MaxValue = Math.Max(1, engine.ProgressTotal);
                    task.Value = engine.Progress;
                }

                summary = await run;
                task.Value = task.MaxValue;
            });
        return summary!;
    }

    private static void PrintRunSummary(ArchiveRunSummary summary, string store)
    {
        var table = new Table().Title(summary.DryRun ? "[bold]Dry run[/]: nothing changed" : "[bold]Archive run[/]")
            .AddColumn("kind").AddColumn(new TableColumn("older than cutoff").RightAligned()).AddColumn(new TableColumn("moved").RightAligned())
            .AddColumn(new TableColumn("inserted into archive").RightAligned()).AddColumn(new TableColumn("batches").RightAligned());
        foreach (var kind in summary.Kinds)
        {
            table.AddRow(kind.Kind, $"{kind.RowsOlder:N0}", $"{kind.RowsMoved:N0}", $"{kind.RowsInserted:N0}", $"{kind.Batches:N0}");
        }

        table.AddRow("[bold]all[/]", $"{summary.RowsOlder:N0}", $"{summary.RowsMoved:N0}", $"{summary.Kinds.Sum(k => k.RowsInserted):N0}", $"{summary.Kinds.Sum(k => k.Batches):N0}");
        AnsiConsole.Write(table);
        AnsiConsole.MarkupLine(Markup.Escape(
            $"{store}; keys {summary.KeyStrategy}; cutoff {summary.CutoffUtc:O}; {summary.Elapsed.TotalSeconds:N1} s, {summary.RowsPerSecond:N0} rows/s; " +
            $"resumed batches {summary.ResumedBatches}" + (summary.DryRun ? $"; unfinished batches in the journal {summary.UnfinishedBatches}" : string.Empty)));
        foreach (string failure in summary.Failures)
        {
            AnsiConsole.MarkupLine("[red]failed:[/] " + Markup.Escape(failure));
        }

        if (summary.NothingToDo)
        {
            AnsiConsole.MarkupLine("Nothing to do: no reading is older than the cutoff and no batch was unfinished (exit code 3).");
        }
    }

    private static Command VerifyCommand(IConfiguration configuration)
    {
        var kind = KindOption();
        kind.AcceptOnlyFromAmong("biosensor", "location", "pressure", "all");
        var json = JsonOption();
        var exportDir = new Option<string?>("--export-dir") { Description = "Where to count export files when the journal is empty. Default Archiver:ExportDirectory, else exports/ under Storage:ArchivePath" };
        var command = new Command("verify", "Check every batch: manifest, file checksum and row count, its rows in the archive table and not in the hot table; and that no row is in both tiers.")
        {
            kind, json, exportDir,
        };
        command.SetAction(async (parse, token) =>
        {
            var (storage, archiver, failures) = ArchiverConfiguration.Load(configuration);
            if (failures.Count > 0)
            {
                return BadConfiguration(failures);
            }

            archiver.ExportDirectory = parse.GetValue(exportDir) ?? archiver.ExportDirectory;
            using var loggers = Loggers(configuration);
            await using var engine = new Storage.Archive.Archiver(storage, loggers, EnvironmentArchivePauses.FromEnvironment());
            var report = await engine.VerifyAsync(Kinds(parse.GetValue(kind)!), archiver.EffectiveExportDirectory(storage), token);
            if (parse.GetValue(json))
            {
                await Console.Out.WriteLineAsync(JsonSerializer.Serialize(new
                {
                    command = "verify", ok = report.Ok, report.NothingToVerify, report.ExportFiles, report.BatchesChecked, report.RowsChecked, problems = report.Problems,
                }, s_json));
            }
            else
            {
                AnsiConsole.MarkupLine(Markup.Escape($"{engine.Describe()}: {report.BatchesChecked:N0} batches, {report.RowsChecked:N0} exported rows checked."));
                foreach (string problem in report.Problems)
                {
                    AnsiConsole.MarkupLine("[red]problem:[/] " + Markup.Escape(problem));
                }

                AnsiConsole.MarkupLine(report.Ok ? "[green]OK[/]: every batch's manifest, file and archive rows agree; no row is in both tiers."
                    : report.NothingToVerify ? "[red]Nothing verified[/]: there is no journal entry to check the exports against."
                    : $"[red]{report.Problems.Count} problem(s)[/]");
            }

            // Nothing to check against: 1 when export files exist (they cannot be vouched for), 3 on a system that never archived.
            return report.Ok ? ExitCodes.Ok
                : report.NothingToVerify && report.ExportFiles == 0 ? ExitCodes.NothingToDo
                : ExitCodes.Failures;
        });
        return command;
    }

    private static Command RestoreCommand(IConfiguration configuration)
    {
        var sources = new Argument<string[]>("files") { Description = "Export files, manifests, or folders (searched for *.manifest.json; symbolic links in them are not followed)", Arity = ArgumentArity.OneOrMore };
        var into = new Option<string>("--into") { Description = "hot, archive (each kind's table of that tier) or a table name", Required = true };
        var allowUnknown = new Option<bool>("--allow-unknown-devices")
        {
            Description = "Restore rows of device ids the device registry does not hold (when the registry was lost too); ids below 1 are refused still",
        };
        var rejectsFile = new Option<string?>("--rejects") { Description = "File for the lines not restored. Default restore-rejects/restore-<time>.tsv under Storage:ArchivePath" };
        var json = JsonOption();
        var command = new Command("restore", "Reinsert export files into a table (rows already there are skipped, so it can be repeated; lines that are malformed or outside ingestion's limits are skipped and kept in a rejects file).")
        {
            sources, into, allowUnknown, rejectsFile, json,
        };
        command.SetAction(async (parse, token) =>
        {
            var (storage, archiver, failures) = ArchiverConfiguration.Load(configuration);
            string target = parse.GetValue(into)!;
            if (target is not ("hot" or "archive") && !StorageOptionsValidator.IsPlainIdentifier(target))
            {
                failures = [.. failures, $"--into must be hot, archive or a table name (letters, digits, underscore), was '{target}'."];
            }

            // The window ingestion holds a reading's ts to, from the same Ingestion section the server reads.
            var ingestion = new PayloadLimits();
            configuration.GetSection("Ingestion").Bind(ingestion);
            var windowFailures = new List<string>();
            ingestion.AddWindowFailures(windowFailures);
            failures = [.. failures, .. windowFailures];

            if (failures.Count > 0)
            {
                return BadConfiguration(failures);
            }

            using var loggers = Loggers(configuration);
            await using var engine = new Storage.Archive.Archiver(storage, loggers, EnvironmentArchivePauses.FromEnvironment());
            var summary = await engine.RestoreAsync(new ArchiveRestoreRequest
            {
                Sources = parse.GetValue(sources)!,
                Into = target,
                MaxFileBytes = archiver.RestoreMaxFileMegabytes * (1L << 20),
                MaxFutureSkew = TimeSpan.FromSeconds(ingestion.MaxFutureSkewSeconds),
                MaxAge = TimeSpan.FromDays(ingestion.MaxAgeDays),
                AllowUnknownDevices = parse.GetValue(allowUnknown),
                RejectsFile = parse.GetValue(rejectsFile),
            }, token);
            if (parse.GetValue(json))
            {
                await Console.Out.WriteLineAsync(JsonSerializer.Serialize(new
                {
                    command = "restore", summary.Files, summary.RowsRead, summary.RowsInserted, summary.RowsRejected, summary.RejectsFile,
                    summary.SkippedLinks, summary.SchemaCreated, problems = summary.Problems,
                }, s_json));
            }
            else
            {
                if (summary.SchemaCreated.Count > 0)
                {
                    AnsiConsole.MarkupLine(Markup.Escape($"Created what was missing of the schema first: {string.Join(", ", summary.SchemaCreated)}."));
                }

                foreach (string link in summary.SkippedLinks)
                {
                    AnsiConsole.MarkupLine("[yellow]skipped link:[/] " + Markup.Escape(ArchiveRestore.Printable(link, 400)) + " (links in a folder are not followed)");
                }

                AnsiConsole.MarkupLine(Markup.Escape($"Restored {summary.Files} file(s): {summary.RowsRead:N0} rows read, {summary.RowsInserted:N0} inserted into {target} ({summary.RowsRead - summary.RowsInserted:N0} were already there)" +
                    (summary.RowsRejected > 0 ? $"; {summary.RowsRejected:N0} line(s) rejected, every one in {summary.RejectsFile}." : ".")));
                foreach (string problem in summary.Problems)
                {
                    AnsiConsole.MarkupLine("[red]problem:[/] " + Markup.Escape(problem));
                }
            }

            return summary.Problems.Count > 0 || summary.RowsRejected > 0 ? ExitCodes.Failures : summary.Files == 0 ? ExitCodes.NothingToDo : ExitCodes.Ok;
        });
        return command;
    }

    private static int BadConfiguration(IReadOnlyList<string> failures)
    {
        Console.Error.WriteLine("saito-archiver cannot start: its arguments or configuration are invalid.");
        foreach (string failure in failures)
        {
            Console.Error.WriteLine("  - " + failure);
        }

        Console.Error.WriteLine("Settings come from appsettings.json, Saito__Section__Key environment variables and --Section:Key=value arguments (see README).");
        return ExitCodes.BadArguments;
    }

    private static ILoggerFactory Loggers(IConfiguration configuration) => LoggerFactory.Create(builder => builder
        .AddConfiguration(configuration.GetSection("Logging"))
        .AddConsole(options => options.LogToStandardErrorThreshold = LogLevel.Trace) // stdout is for the summary (and --json)
        .AddSimpleConsole(options =>
        {
            options.SingleLine = true;
            options.TimestampFormat = "HH:mm:ss.fff ";
            options.UseUtcTimestamp = true;
        })
        .AddFilter("Microsoft", LogLevel.Warning));

    /// <summary>7d, 36h, 90m, 30s (or a .NET TimeSpan such as 1.12:00:00).</summary>
    public static bool TryParseAge(string text, out TimeSpan age)
    {
        age = default;
        if (text.Length >= 2 && double.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.Float, CultureInfo.InvariantCulture, out double number) && number >= 0)
        {
            TimeSpan? parsed = text[^1] switch
            {
                'd' => TimeSpan.FromDays(number),
                'h' => TimeSpan.FromHours(number),
                'm' => TimeSpan.FromMinutes(number),
                's' => TimeSpan.FromSeconds(number),
                _ => null,
            };
            if (parsed is { } value)
            {
                age = value;
                return true;
            }
        }

        return TimeSpan.TryParse(text, CultureInfo.InvariantCulture, out age) && age >= TimeSpan.Zero;
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

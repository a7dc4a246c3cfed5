using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;

namespace Saito.Archiver.Tests.FirstRun;

/// <summary>
/// The README's "Run it" steps, word for word, as a newcomer runs them: in a fresh copy of the repository (the files
/// git tracks, or would track: no bin/, obj/ or data/), from its root, through <c>dotnet run --project</c> (which
/// builds, then starts the program in its project folder). The server's own try-it lines are pasted from the root as
/// printed, and the archiver's dry run must find the database the server made. Only the environment differs from a
/// newcomer's: free ports (<c>ASPNETCORE_URLS</c>, <c>Saito__Mqtt__Port</c>) so the test runs beside others, and
/// <c>XDG_DATA_HOME</c> in a temporary folder so the files land there and not in this machine's home.
/// </summary>
public sealed partial class ReadmeFirstRunTests
{
    private static readonly TimeSpan BuildAndStart = TimeSpan.FromMinutes(10);

    // dotnet run builds the server (and then the archiver) from nothing: minutes on a busy 2-core machine.
    [Fact]
    public async Task The_readme_run_steps_work_word_for_word_from_a_fresh_copy_of_the_repository()
    {
        var ct = TestContext.Current.CancellationToken;
        string root = RepositoryRoot.Path;
        string readme = await File.ReadAllTextAsync(Path.Combine(root, "README.md"), ct);
        var commands = RunItCommands(readme);
        string serve = commands.FirstOrDefault(c => c == "dotnet run --project src/Saito.Server")
            ?? throw new InvalidOperationException("README.md's 'Run it' section has no `dotnet run --project src/Saito.Server` command:\n" + string.Join('\n', commands));
        string dryRun = commands.FirstOrDefault(c => c.StartsWith("dotnet run --project src/Saito.Archiver", StringComparison.Ordinal))
            ?? throw new InvalidOperationException("README.md's 'Run it' section has no `dotnet run --project src/Saito.Archiver` command:\n" + string.Join('\n', commands));

        var work = Directory.CreateTempSubdirectory("saito-readme-");
        try
        {
            string copy = Path.Combine(work.FullName, "saito");
            await CopyRepositoryAsync(root, copy, ct);
            string dataHome = Path.Combine(work.FullName, "xdg-data");
            var environment = new Dictionary<string, string?>
            {
                ["ASPNETCORE_URLS"] = $"http://127.0.0.1:{FreePort.Next()}",
                ["Saito__Mqtt__Port"] = FreePort.Next().ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["XDG_DATA_HOME"] = dataHome,
                ["STATE_DIRECTORY"] = null,
                ["DOTNET_NOLOGO"] = "1",
                ["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1",
            };

            await using var server = Shell.Start(serve, copy, environment);
            string publish = await server.WaitForLineAsync(StoreLine(), BuildAndStart, ct);
            string show = await server.WaitForLineAsync(ShowLine(), TimeSpan.FromMinutes(1), ct);
            server.Output.ShouldContain(Path.Combine(dataHome, "saito"), Case.Sensitive, "the log says where the files are");

            var published = await Shell.RunAsync(publish, copy, environment, TimeSpan.FromSeconds(60), ct);
            published.ExitCode.ShouldBe(0, $"the printed publish line, pasted from {copy}:\n$ {publish}\n{published.Output}");

            // The publish was acknowledged after the commit: the printed query shows the reading on its first run.
            var shown = await Shell.RunAsync(show, copy, environment, TimeSpan.FromSeconds(60), ct);
            shown.ExitCode.ShouldBe(0, $"the printed query, pasted from {copy}:\n$ {show}\n{shown.Output}");
            shown.Output.ShouldContain("wrist-17|", Case.Sensitive, $"$ {show}\n{shown.Output}");
            show.ShouldContain(Path.Combine(dataHome, "saito", "hot", "saito-hot.db"));

            var archived = await Shell.RunAsync(dryRun, copy, environment, BuildAndStart, ct);
            // 0: it would move something; 3: nothing is old enough (a reading just stored is not). Either way it found the files.
            archived.ExitCode.ShouldBeOneOf([0, 3], $"$ {dryRun}\n{archived.Output}");
            archived.Output.ShouldContain(Path.Combine(dataHome, "saito", "hot", "saito-hot.db"), Case.Sensitive, $"$ {dryRun}\n{archived.Output}");
            archived.Output.ShouldContain("Dry run", Case.Sensitive, $"$ {dryRun}\n{archived.Output}");
        }
        finally
        {
            try
            {
                work.Delete(recursive: true);
            }
            catch (IOException)
            {
                // A build server may still hold a file for a moment; the folder is in /tmp.
            }
        }
    }

    [Fact]
    public void The_commands_are_read_from_the_run_it_section_only()
    {
        string readme = """
            # Saito
            ```sh
            dotnet run --project elsewhere
            ```
            ## Run it
            Text.
            ```sh
            dotnet run --project src/Saito.Server
            ```
            More text.
            ```sh
            # a comment
            mosquitto_pub -h localhost -t x -m y   # trailing comment kept
            ```
            ## Next
            ```sh
            dotnet run --project src/Saito.Archiver -- verify
            ```
            """;
        RunItCommands(readme).ShouldBe(["dotnet run --project src/Saito.Server", "mosquitto_pub -h localhost -t x -m y   # trailing comment kept"]);
    }

    /// <summary>The command lines of the <c>sh</c> blocks in the README's "## Run it" section, comments left out.</summary>
    internal static IReadOnlyList<string> RunItCommands(string readme)
    {
        var commands = new List<string>();
        bool inSection = false, inBlock = false;
        foreach (string raw in readme.Split('\n'))
        {
            string line = raw.TrimEnd('\r');
            if (!inBlock && line.StartsWith("## ", StringComparison.Ordinal))
            {
                inSection = line == "## Run it";
                continue;
            }

            if (!inSection)
            {
                continue;
            }

            if (line.StartsWith("```", StringComparison.Ordinal))
            {
                inBlock = !inBlock && line == "```sh";
                continue;
            }

            if (inBlock && line.Trim() is { Length: > 0 } command && !command.StartsWith('#'))
            {
                commands.Add(command);
            }
        }

        return commands;
    }

    /// <summary>What a clone holds: the files git tracks or would track (ignored ones such as bin/ and obj/ left out).</summary>
    private static async Task CopyRepositoryAsync(string root, string target, CancellationToken ct)
    {
        var listed = await Shell.RunAsync("git ls-files -z --cached --others --exclude-standard 2>/dev/null", root, new Dictionary<string, string?>(), TimeSpan.FromMinutes(1), ct);
        IEnumerable<string> files = listed.ExitCode == 0
            ? listed.Output.Split('\0', StringSplitOptions.RemoveEmptyEntries)
            : UntrackedTree(root); // not a git checkout (an exported tree): everything but build output and installs
        foreach (string file in files)
        {
            string from = Path.Combine(root, file);
            if (!File.Exists(from))
            {
                continue; // deleted in the working tree, not yet committed
            }

            string to = Path.Combine(target, file);
            Directory.CreateDirectory(Path.GetDirectoryName(to)!);
            File.Copy(from, to);
        }
    }

    private static IEnumerable<string> UntrackedTree(string root)
    {
        string[] skipped = ["bin", "obj", "node_modules", "artifacts", "data", ".git", "TestResults", "BenchmarkDotNet.Artifacts"];
        return Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories)
            .Select(file => Path.GetRelativePath(root, file))
            .Where(file => !file.Split(Path.DirectorySeparatorChar).Any(part => skipped.Contains(part, StringComparer.Ordinal)));
    }

    [GeneratedRegex(@"Store a reading: (mosquitto_pub .+)$")]
    private static partial Regex StoreLine();

    [GeneratedRegex(@"See it stored: (sqlite3 .+)$")]
    private static partial Regex ShowLine();

    /// <summary><c>bash -c</c> with a folder and an environment, its output (stdout and stderr) kept.</summary>
    private sealed class Shell : IAsyncDisposable
    {
        private readonly Process _process;
        private readonly StringBuilder _output = new();
        private readonly Task _exited;

        private Shell(Process process)
        {
            _process = process;
            process.OutputDataReceived += (_, e) => Append(e.Data);
            process.ErrorDataReceived += (_, e) => Append(e.Data);
            process.BeginOutputReadLine();
            process.BeginErrorReadLine();
            _exited = process.WaitForExitAsync();
        }

        public string Output
        {
            get
            {
                lock (_output)
                {
                    return _output.ToString();
                }
            }
        }

        public static Shell Start(string command, string folder, IReadOnlyDictionary<string, string?> environment)
        {
            var psi = new ProcessStartInfo("bash") { WorkingDirectory = folder, UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
            psi.ArgumentList.Add("-c");
            psi.ArgumentList.Add(command);
            foreach (var (key, value) in environment)
            {
                psi.Environment[key] = value;
            }

            return new Shell(Process.Start(psi) ?? throw new InvalidOperationException("could not start bash"));
        }

        public static async Task<(int ExitCode, string Output)> RunAsync(
            string command, string folder, IReadOnlyDictionary<string, string?> environment, TimeSpan deadline, CancellationToken ct)
        {
            await using var shell = Start(command, folder, environment);
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(ct);
            timeout.CancelAfter(deadline);
            try
            {
                await shell._process.WaitForExitAsync(timeout.Token);
            }
            catch (OperationCanceledException) when (!ct.IsCancellationRequested)
            {
                throw new TimeoutException($"`{command}` did not finish within {deadline.TotalSeconds:F0} s:\n{shell.Output}");
            }

            return (shell._process.ExitCode, shell.Output);
        }

        /// <summary>The first group of the first output line <paramref name="pattern"/> matches, waiting up to <paramref name="deadline"/>.</summary>
        public async Task<string> WaitForLineAsync(Regex pattern, TimeSpan deadline, CancellationToken ct)
        {
            var until = DateTime.UtcNow + deadline;
            while (true)
            {
                foreach (string line in Output.Split('\n'))
                {
                    if (pattern.Match(line.TrimEnd('\r')) is { Success: true } match)
                    {
                        return match.Groups[1].Value.Trim();
                    }
                }

                if (_exited.IsCompleted)
                {
                    throw new InvalidOperationException($"the server exited ({_process.ExitCode}) before printing /{pattern}/:\n{Output}");
                }

                if (DateTime.UtcNow > until)
                {
                    throw new TimeoutException($"no line /{pattern}/ within {deadline.TotalSeconds:F0} s:\n{Output}");
                }

                await Task.Delay(200, ct);
            }
        }

        public async ValueTask DisposeAsync()
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
            }

            await _process.WaitForExitAsync();
            _process.Dispose();
        }

        private void Append(string? line)
        {
            if (line is null)
            {
                return;
            }

            lock (_output)
            {
                _output.AppendLine(line);
            }
        }
    }
}

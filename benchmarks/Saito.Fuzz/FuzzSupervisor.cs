using System.Diagnostics;
using System.Text;
using Saito.Fuzz.Targets;

namespace Saito.Fuzz;

/// <summary>
/// Runs <see cref="FuzzWorker"/> in a child process for the time asked and watches it through
/// <see cref="SharedInput"/>: a worker that stops counting executions for <c>--hang-seconds</c> is killed and its
/// input kept as a hang; a worker that dies (a stack overflow aborts the process) has its input kept as a crash.
/// Either way a new worker carries on until the time is up. Prints the executions per second at the end.
/// </summary>
internal static class FuzzSupervisor
{
    public static int Run(FuzzTarget target, TimeSpan duration, string crashDirectory, string? corpusDirectory, int seed, TimeSpan hangAfter)
    {
        string sharedPath = Path.Combine(Path.GetTempPath(), $"saito-fuzz-{Environment.ProcessId}.input");
        var crashes = new CrashStore(crashDirectory);
        var clock = Stopwatch.StartNew();
        int workers = 0;
        Console.WriteLine($"[{target.Name}] {target.Description}; {duration.TotalSeconds:F0} s, seed {seed}, crashers to {Path.GetFullPath(crashDirectory)}" +
            (corpusDirectory is null ? string.Empty : $", corpus {Path.GetFullPath(corpusDirectory)}"));
        using (var shared = SharedInput.Create(sharedPath))
        {
            try
            {
                while (duration - clock.Elapsed > TimeSpan.FromSeconds(1))
                {
                    var remaining = duration - clock.Elapsed;
                    RunWorker(target, shared, sharedPath, crashes, crashDirectory, corpusDirectory, remaining, seed + workers, hangAfter);
                    workers++;
                }

                long executions = shared.Executions;
                Console.WriteLine($"[{target.Name}] done: {executions:N0} executions in {clock.Elapsed.TotalSeconds:F0} s " +
                    $"({executions / clock.Elapsed.TotalSeconds:N0}/s), {workers} worker process(es), crashers in {crashDirectory}: " +
                    $"{Directory.EnumerateFiles(crashDirectory, "*.bin").Count()}");
            }
            finally
            {
                File.Delete(sharedPath);
            }
        }

        return Directory.EnumerateFiles(crashDirectory, "*.bin").Any() ? 1 : 0;
    }

    private static void RunWorker(FuzzTarget target, SharedInput shared, string sharedPath, CrashStore crashes, string crashDirectory,
        string? corpusDirectory, TimeSpan remaining, int seed, TimeSpan hangAfter)
    {
        var start = new ProcessStartInfo(Environment.ProcessPath!) { RedirectStandardError = true, UseShellExecute = false };
        if (Path.GetFileNameWithoutExtension(Environment.ProcessPath) == "dotnet")
        {
            start.ArgumentList.Add(typeof(FuzzSupervisor).Assembly.Location);
        }

        foreach (string argument in (string[])[target.Name, "--worker-input", sharedPath, "--seconds", ((int)remaining.TotalSeconds).ToString(System.Globalization.CultureInfo.InvariantCulture),
            "--crashes", crashDirectory, "--seed", seed.ToString(System.Globalization.CultureInfo.InvariantCulture)])
        {
            start.ArgumentList.Add(argument);
        }

        if (corpusDirectory is not null)
        {
            start.ArgumentList.Add("--corpus");
            start.ArgumentList.Add(corpusDirectory);
        }

        var errors = new StringBuilder();
        using var process = new Process { StartInfo = start };
        process.ErrorDataReceived += (_, e) =>
        {
            lock (errors)
            {
                if (e.Data is not null && errors.Length < 16 * 1024)
                {
                    errors.AppendLine(e.Data);
                }
            }
        };
        process.Start();
        process.BeginErrorReadLine();

        long lastCount = shared.Executions;
        var lastChange = Stopwatch.StartNew();
        while (!process.WaitForExit(200))
        {
            long count = shared.Executions;
            if (count != lastCount)
            {
                lastCount = count;
                lastChange.Restart();
            }
            else if (lastChange.Elapsed > hangAfter)
            {
                process.Kill(entireProcessTree: true);
                process.WaitForExit();
                Keep(target, crashes, "hang", shared.Current(), $"no execution finished for {hangAfter.TotalSeconds:F0} s: an infinite loop, or a very slow input");
                return;
            }
        }

        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            string report;
            lock (errors)
            {
                report = $"the worker process died with exit code {process.ExitCode}:\n{errors}";
            }

            Keep(target, crashes, "death", shared.Current(), report);
        }
    }

    private static void Keep(FuzzTarget target, CrashStore crashes, string kind, byte[] input, string report)
    {
        string identity = $"{kind} {CrashStore.Fingerprint(input)}";
        if (crashes.Save(kind, input, identity, report) is { } path)
        {
            Console.WriteLine($"[{target.Name}] {kind.ToUpperInvariant()}: {input.Length} bytes in {path}");
        }
    }
}

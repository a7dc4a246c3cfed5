using System.Diagnostics;
using System.Text;

namespace Saito.Archiver.Tests.Infrastructure;

/// <summary>
/// Saito.Archiver as its own process (the build output beside the tests), so that a test can SIGKILL it at a named
/// step (<c>SAITO_ARCHIVER_PAUSE_AT</c>) the way a power cut or the OOM killer would stop it.
/// </summary>
public sealed class ArchiverProcess : IDisposable
{
    public const string PausedMarker = "SAITO-ARCHIVER-PAUSED";

    private readonly Process _process;
    private readonly StringBuilder _stdout = new();
    private readonly StringBuilder _stderr = new();

    private ArchiverProcess(Process process)
    {
        _process = process;
    }

    public string Stdout
    {
        get
        {
            lock (_stdout)
            {
                return _stdout.ToString();
            }
        }
    }

    public string Stderr
    {
        get
        {
            lock (_stderr)
            {
                return _stderr.ToString();
            }
        }
    }

    public static ArchiverProcess Start(IEnumerable<string> arguments, IReadOnlyDictionary<string, string>? environment = null)
    {
        var psi = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = AppContext.BaseDirectory,
        };
        // SAITO_TEST_ARCHIVER_DLL: another build of the archiver (an older commit's), to show a test fails without its fix.
        psi.ArgumentList.Add(Environment.GetEnvironmentVariable("SAITO_TEST_ARCHIVER_DLL") is { Length: > 0 } other
            ? other
            : Path.Combine(AppContext.BaseDirectory, "Saito.Archiver.dll"));
        foreach (string argument in arguments)
        {
            psi.ArgumentList.Add(argument);
        }

        psi.Environment["SAITO_ARCHIVER_PAUSE_AT"] = null;
        psi.Environment["SAITO_ARCHIVER_PAUSE_SECONDS"] = null;
        foreach (var (key, value) in environment ?? new Dictionary<string, string>())
        {
            psi.Environment[key] = value;
        }

        var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start Saito.Archiver");
        var instance = new ArchiverProcess(process);
        process.OutputDataReceived += (_, e) => Append(instance._stdout, e.Data);
        process.ErrorDataReceived += (_, e) => Append(instance._stderr, e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return instance;
    }

    private static void Append(StringBuilder builder, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (builder)
        {
            builder.AppendLine(line);
        }
    }

    /// <summary>Runs the archiver to its end; its exit code and output.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> RunAsync(
        IEnumerable<string> arguments, TimeSpan? timeout = null, IReadOnlyDictionary<string, string>? environment = null)
    {
        using var archiver = Start(arguments, environment);
        using var cancellation = new CancellationTokenSource(timeout ?? TimeSpan.FromMinutes(2));
        try
        {
            await archiver._process.WaitForExitAsync(cancellation.Token);
        }
        catch (OperationCanceledException)
        {
            archiver._process.Kill(entireProcessTree: true);
            throw new TimeoutException($"Saito.Archiver did not finish:\n{archiver.Stdout}\n{archiver.Stderr}");
        }

        archiver._process.WaitForExit(); // drains the output readers
        return (archiver._process.ExitCode, archiver.Stdout, archiver.Stderr);
    }

    /// <summary>Waits for a started process to end; its exit code and output.</summary>
    public static async Task<(int ExitCode, string Stdout, string Stderr)> WaitAsync(ArchiverProcess archiver)
    {
        ArgumentNullException.ThrowIfNull(archiver);
        using var cancellation = new CancellationTokenSource(TimeSpan.FromMinutes(2));
        await archiver._process.WaitForExitAsync(cancellation.Token);
        archiver._process.WaitForExit();
        return (archiver._process.ExitCode, archiver.Stdout, archiver.Stderr);
    }

    /// <summary>Waits until the process says it paused at its step; false if it ended first.</summary>
    public async Task<bool> WaitForPauseAsync(TimeSpan timeout)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            if (Stderr.Contains(PausedMarker, StringComparison.Ordinal))
            {
                return true;
            }

            if (_process.HasExited)
            {
                _process.WaitForExit();
                return Stderr.Contains(PausedMarker, StringComparison.Ordinal);
            }

            await Task.Delay(20);
        }

        throw new TimeoutException($"Saito.Archiver did not pause within {timeout}:\n{Stdout}\n{Stderr}");
    }

    /// <summary>SIGTERM, as systemd or a person's <c>kill</c> stops a job: the process may end as it sees fit.</summary>
    public void Terminate()
    {
        using var kill = Process.Start("kill", ["-TERM", _process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]);
        kill.WaitForExit();
    }

    /// <summary>SIGKILL (Process.Kill on Linux): no handler, no flush, no cleanup runs.</summary>
    public void KillHard()
    {
        _process.Kill(entireProcessTree: true);
        _process.WaitForExit();
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
        }

        _process.Dispose();
    }
}

using System.ComponentModel;
using System.Diagnostics;
using System.Text;

namespace Saito.Testing;

/// <summary>What to run: a program, its arguments (passed as a list, never through a shell) and,
/// optionally, text for its stdin.</summary>
internal sealed record ProcessCommand(string FileName, IReadOnlyList<string> Arguments, string? StandardInput = null)
{
    public override string ToString() =>
        string.Join(' ', new[] { FileName }.Concat(Arguments).Select(Quote));

    private static string Quote(string arg) =>
        arg.Length > 0 && arg.All(c => char.IsAsciiLetterOrDigit(c) || "-_./:=@,+%".Contains(c, StringComparison.Ordinal))
            ? arg
            : "'" + (arg.Length > 200 ? arg[..200] + "…" : arg).Replace("'", "'\\''", StringComparison.Ordinal) + "'";
}

/// <summary>
/// One run of an external client: stdout is read line by line (handed to a callback as it arrives),
/// stderr is kept for failure messages. Disposing kills the process if it is still running.
/// </summary>
internal sealed class ExternalProcess : IAsyncDisposable
{
    private const int StdoutTailLines = 15;
    private const int MaxLineInMessages = 300;
    private static readonly Encoding s_utf8 = new UTF8Encoding(encoderShouldEmitUTF8Identifier: false);

    private readonly Process _process;
    private readonly ProcessCommand _command;
    private readonly Action<string>? _onStdoutLine;
    private readonly StringBuilder _stderr = new();
    private readonly Queue<string> _stdoutTail = new();
    private Task? _exited;

    private ExternalProcess(string displayName, ProcessCommand command, Process process, Action<string>? onStdoutLine)
    {
        DisplayName = displayName;
        _command = command;
        _process = process;
        _onStdoutLine = onStdoutLine;
    }

    public string DisplayName { get; }

    /// <summary>Completes when the process has exited and all of its output has been read.</summary>
    public Task Exited => _exited ?? throw new InvalidOperationException("Not started");

    public bool HasExited => Exited.IsCompleted;

    public int? ExitCode => HasExited ? _process.ExitCode : null;

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

    public static ExternalProcess Start(string displayName, ProcessCommand command, Action<string>? onStdoutLine = null)
    {
        var psi = new ProcessStartInfo(command.FileName)
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
            StandardInputEncoding = s_utf8,
            StandardOutputEncoding = s_utf8,
            StandardErrorEncoding = s_utf8,
        };
        foreach (string argument in command.Arguments)
        {
            psi.ArgumentList.Add(argument);
        }

        Process process;
        try
        {
            process = Process.Start(psi) ?? throw new ExternalClientException($"Could not start {command.FileName}");
        }
        catch (Win32Exception ex)
        {
            throw new ExternalClientException($"Could not start {displayName} ({command.FileName}): {ex.Message}. Is it installed? Run scripts/test.sh.", ex);
        }

        var external = new ExternalProcess(displayName, command, process, onStdoutLine);
        external.Pump();
        return external;
    }

    /// <summary>Waits for the process to end; kills it and throws a readable error after <paramref name="timeout"/>.</summary>
    public async Task<int> WaitForExitAsync(TimeSpan timeout, CancellationToken cancellationToken)
    {
        try
        {
            await Exited.WaitAsync(timeout, cancellationToken);
        }
        catch (TimeoutException)
        {
            await KillAsync();
            throw new ExternalClientException($"{DisplayName} did not finish within {timeout.TotalSeconds:0.#} s.\n{Describe()}");
        }

        return _process.ExitCode;
    }

    /// <summary>SIGKILL: the client gets no chance to send DISCONNECT.</summary>
    public async Task KillAsync()
    {
        try
        {
            _process.Kill(entireProcessTree: true);
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }

        await Exited.WaitAsync(TimeSpan.FromSeconds(10));
    }

    /// <summary>Command line, exit code, stderr and the last lines of stdout, for failure messages.</summary>
    public string Describe()
    {
        var text = new StringBuilder();
        text.Append("  command: ").AppendLine(_command.ToString());
        text.Append("  exit code: ").AppendLine(ExitCode?.ToString(System.Globalization.CultureInfo.InvariantCulture) ?? "(still running)");
        string stderr = Stderr.TrimEnd();
        text.Append("  stderr: ").AppendLine(stderr.Length == 0 ? "(empty)" : "\n    " + stderr.Replace("\n", "\n    ", StringComparison.Ordinal));
        lock (_stdoutTail)
        {
            text.Append("  last stdout lines:").AppendLine(_stdoutTail.Count == 0 ? " (none)" : string.Empty);
            foreach (string line in _stdoutTail)
            {
                text.Append("    ").AppendLine(line);
            }
        }

        return text.ToString();
    }

    public async ValueTask DisposeAsync()
    {
        if (!HasExited)
        {
            await KillAsync();
        }

        _process.Dispose();
    }

    private void Pump()
    {
        _exited = Task.Run(RunAsync);
        try
        {
            if (_command.StandardInput is { } input)
            {
                _process.StandardInput.Write(input);
            }

            _process.StandardInput.Close();
        }
        catch (IOException)
        {
            // The client exited before reading its stdin; its exit code and stderr tell why.
        }
    }

    /// <summary>Reads both streams to their end and waits for the exit, so Exited means "all output is in".</summary>
    private async Task RunAsync()
    {
        Task stdout = ReadStdoutAsync();
        Task stderr = ReadStderrAsync();
        await _process.WaitForExitAsync();
        await Task.WhenAll(stdout, stderr);
    }

    private async Task ReadStdoutAsync()
    {
        while (await _process.StandardOutput.ReadLineAsync() is { } line)
        {
            lock (_stdoutTail)
            {
                _stdoutTail.Enqueue(line.Length > MaxLineInMessages ? line[..MaxLineInMessages] + "…" : line);
                while (_stdoutTail.Count > StdoutTailLines)
                {
                    _stdoutTail.Dequeue();
                }
            }

            _onStdoutLine?.Invoke(line);
        }
    }

    private async Task ReadStderrAsync()
    {
        char[] buffer = new char[4096];
        int read;
        while ((read = await _process.StandardError.ReadAsync(buffer)) > 0)
        {
            lock (_stderr)
            {
                // Keep the start: the first error is the one that explains the rest.
                if (_stderr.Length < 20_000)
                {
                    _stderr.Append(buffer, 0, read);
                }
            }
        }
    }
}

/// <summary>A program run to its end, for tests that need a client's own command line (e.g. mosquitto_pub with <c>-u</c>/<c>-P</c>).</summary>
public static class ExternalCommand
{
    /// <summary>
    /// Its exit code, and its stdout followed by its stderr; <paramref name="standardInput"/> is written to its stdin, which
    /// is then closed. A run past <paramref name="timeout"/> is killed and throws.
    /// </summary>
    public static async Task<(int ExitCode, string Output)> RunAsync(string program, IReadOnlyList<string> arguments, TimeSpan timeout, CancellationToken cancellationToken,
        string? standardInput = null)
    {
        var stdout = new StringBuilder();
        await using var process = ExternalProcess.Start(Path.GetFileName(program), new ProcessCommand(program, arguments, standardInput), line =>
        {
            lock (stdout)
            {
                stdout.AppendLine(line);
            }
        });
        int exitCode = await process.WaitForExitAsync(timeout, cancellationToken);
        lock (stdout)
        {
            return (exitCode, stdout.ToString() + process.Stderr);
        }
    }
}

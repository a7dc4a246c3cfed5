using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Saito.Testing;

/// <summary>How to start Saito.Server as a process: <see cref="SaitoServerProcess.StartAsync"/>.</summary>
public sealed record SaitoServerStart
{
    /// <summary>Saito.Server.dll to run; null for the one beside the running program (a test project references Saito.Server).</summary>
    public string? ServerDll { get; init; }

    /// <summary>The MQTT port; null for a free one (and new free ones when another process took it before the bind).</summary>
    public int? Port { get; init; }

    /// <summary>Command-line settings after the ports' (<c>--Section:Key=value</c>), so they win.</summary>
    public IEnumerable<string> Arguments { get; init; } = [];

    /// <summary>Environment variables to add (e.g. for perf).</summary>
    public IEnumerable<KeyValuePair<string, string>> Environment { get; init; } = [];

    /// <summary>A file for the server's output; null to keep it in memory (<see cref="SaitoServerProcess.Output"/>).</summary>
    public string? LogPath { get; init; }

    public string? WorkingDirectory { get; init; }

    /// <summary>The line the server logs once it is ready; the default is logged once its database is prepared.</summary>
    public string ReadyLine { get; init; } = SaitoServerProcess.StoredReadyLine;

    /// <summary>Whether ready also means the MQTT port accepts connections (not in external mode, which has none).</summary>
    public bool WaitForMqttPort { get; init; } = true;

    public TimeSpan ReadyTimeout { get; init; } = TimeSpan.FromSeconds(60);
}

/// <summary>
/// Saito.Server as its own process, so a test can kill it with SIGKILL as a power cut or the OOM killer would and the
/// load tool can measure it from outside: started on free loopback ports, ready once it logs its ready line, its output
/// kept in memory or in a log file.
/// </summary>
public sealed class SaitoServerProcess : IAsyncDisposable
{
    /// <summary>Logged (with the try-it lines) once the writers are ready: the database is prepared.</summary>
    public const string StoredReadyLine = "See it stored";

    /// <summary>Logged in external mode once Saito has subscribed at the broker.</summary>
    public const string ExternalReadyLine = "Subscribed to";

    private readonly Process _process;
    private readonly string _readyLine;
    private readonly StreamWriter? _log;
    private readonly StringBuilder _output = new();
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _closed;
    private volatile bool _portTaken;

    private SaitoServerProcess(Process process, int port, string readyLine, string? logPath, StreamWriter? log)
    {
        _process = process;
        _readyLine = readyLine;
        Port = port;
        LogPath = logPath;
        _log = log;
    }

    public int Port { get; }

    public int Pid => _process.Id;

    public bool HasExited => _process.HasExited;

    /// <summary>The log file, when the server's output goes to one.</summary>
    public string? LogPath { get; }

    /// <summary>What the server printed so far, when it is kept in memory (no log file).</summary>
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

    public static async Task<SaitoServerProcess> StartAsync(SaitoServerStart start, CancellationToken token = default)
    {
        ArgumentNullException.ThrowIfNull(start);
        // FreePort's port is free when it answers, not when the server binds it: a process beside this one (a test
        // starting Mosquitto, another server) can take it in between. The server then exits at start saying so; a
        // new pair of ports is the cure, a few times, before the failure is reported. A port the caller chose is kept.
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return await StartOnceAsync(start, token);
            }
            catch (PortTakenException) when (attempt < 3 && start.Port is null)
            {
            }
        }
    }

    private sealed class PortTakenException(string message) : InvalidOperationException(message);

    private static async Task<SaitoServerProcess> StartOnceAsync(SaitoServerStart start, CancellationToken token)
    {
        string dll = start.ServerDll ?? Path.Combine(AppContext.BaseDirectory, "Saito.Server.dll");
        if (!File.Exists(dll))
        {
            throw new InvalidOperationException($"{dll} not found");
        }

        int port = start.Port ?? FreePort.Next();
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        if (start.WorkingDirectory is not null)
        {
            psi.WorkingDirectory = start.WorkingDirectory;
        }

        psi.ArgumentList.Add(dll);
        foreach (string arg in new[] { $"--urls=http://127.0.0.1:{FreePort.Next()}", "--Mqtt:BindAddress=127.0.0.1", $"--Mqtt:Port={port}" }.Concat(start.Arguments))
        {
            psi.ArgumentList.Add(arg);
        }

        foreach (var (key, value) in start.Environment)
        {
            psi.Environment[key] = value;
        }

        StreamWriter? log = null;
        if (start.LogPath is not null)
        {
            Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(start.LogPath))!);
            log = new StreamWriter(start.LogPath, append: false) { AutoFlush = true };
            await log.WriteLineAsync("$ dotnet " + string.Join(' ', psi.ArgumentList));
        }

        var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start dotnet " + dll);
        var server = new SaitoServerProcess(process, port, start.ReadyLine, start.LogPath, log);
        process.OutputDataReceived += (_, e) => server.OnLine(e.Data);
        process.ErrorDataReceived += (_, e) => server.OnLine(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(start.ReadyTimeout);
        try
        {
            var exited = process.WaitForExitAsync(timeout.Token);
            // _ready is completed by the output handler; neither a test nor a console tool has a synchronization context to deadlock on.
#pragma warning disable VSTHRD003
            var first = await Task.WhenAny(server._ready.Task, exited);
#pragma warning restore VSTHRD003
            if (first == exited)
            {
                await exited;
                string message = $"Saito.Server exited with {process.ExitCode} before it was ready{server.WhereToLook()}";
                throw server._portTaken ? new PortTakenException(message) : new InvalidOperationException(message);
            }

            if (start.WaitForMqttPort)
            {
                await WaitForPortAsync(port, timeout.Token);
            }
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            string where = server.WhereToLook();
            await server.DisposeAsync();
            throw new TimeoutException($"Saito.Server did not log '{start.ReadyLine}' within {start.ReadyTimeout.TotalSeconds:F0} s{where}");
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }

        return server;
    }

    /// <summary>SIGKILL: no shutdown, no flush, no goodbye.</summary>
    public async Task KillAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await KillAsync();
        _process.Dispose();
        if (_log is not null)
        {
            lock (_log)
            {
                _closed = true;
                _log.Dispose();
            }
        }
    }

    private string WhereToLook() => LogPath is not null ? $"; see {LogPath}" : $":\n{Output}";

    private void OnLine(string? line)
    {
        if (line is null)
        {
            return;
        }

        if (_log is not null)
        {
            lock (_log)
            {
                if (!_closed)
                {
                    _log.WriteLine(line);
                }
            }
        }
        else
        {
            lock (_output)
            {
                _output.AppendLine(line);
            }
        }

        if (line.Contains("address already in use", StringComparison.OrdinalIgnoreCase))
        {
            _portTaken = true;
        }

        if (line.Contains(_readyLine, StringComparison.Ordinal))
        {
            _ready.TrySetResult();
        }
    }

    private static async Task WaitForPortAsync(int port, CancellationToken token)
    {
        while (true)
        {
            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, port, token);
                return;
            }
            catch (SocketException)
            {
                await Task.Delay(100, token);
            }
        }
    }
}

using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Saito.Storage;

namespace Saito.LoadTest;

/// <summary>
/// Saito.Server (the Release build in the repository) as its own process, storing readings: started on free
/// loopback ports, ready once it logs "See it stored" (its database is prepared), its output kept in a log file.
/// </summary>
internal sealed class SaitoServerProcess : IAsyncDisposable
{
    private const string ReadyLine = "See it stored";
    private const string ExternalReadyLine = "Subscribed to";
    private readonly string _readyLine;
    private readonly Process _process;
    private readonly StreamWriter _log;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private bool _closed;
    private volatile bool _portTaken;

    private SaitoServerProcess(Process process, int port, string logPath, StreamWriter log, string readyLine)
    {
        _process = process;
        _readyLine = readyLine;
        Port = port;
        LogPath = logPath;
        _log = log;
    }

    public int Port { get; }

    public int Pid => _process.Id;

    public string LogPath { get; }

    /// <summary>
    /// Points <paramref name="storage"/> and the server's <paramref name="storageArgs"/> at SQLite files under
    /// <paramref name="workDirectory"/> (hot and archive), emptying it first so every run starts from no database.
    /// </summary>
    public static void UseFreshSqlite(StorageOptions storage, List<string> storageArgs, string workDirectory, SqliteSynchronous synchronous)
    {
        if (Directory.Exists(workDirectory))
        {
            Directory.Delete(workDirectory, recursive: true);
        }

        storage.HotPath = Path.Combine(workDirectory, "hot");
        storage.ArchivePath = Path.Combine(workDirectory, "archive");
        storage.Sqlite.Synchronous = synchronous;
        storageArgs.Add($"--Storage:HotPath={storage.HotPath}");
        storageArgs.Add($"--Storage:ArchivePath={storage.ArchivePath}");
        storageArgs.Add($"--Storage:Sqlite:Synchronous={synchronous.ToString().ToLowerInvariant()}");
    }

    /// <summary>
    /// Starts the server (<paramref name="serverDll"/>, or the repository's Release build) with <paramref name="storageArgs"/> (<c>--Storage:...=...</c>) and <paramref name="extraArgs"/>
    /// after the tool's own, so they win; <paramref name="environment"/> adds variables (e.g. for perf).
    /// </summary>
    public static Task<SaitoServerProcess> StartAsync(string? serverDll, IEnumerable<string> storageArgs, IEnumerable<string> extraArgs,
        IEnumerable<KeyValuePair<string, string>> environment, string logPath, TimeSpan readyTimeout, CancellationToken token) =>
        StartAsync(serverDll, storageArgs, extraArgs, environment, logPath, readyTimeout, ReadyLine, waitForMqttPort: true, token);

    /// <summary>
    /// Starts the server in external mode (<c>Mqtt:Mode=external</c>): a client of the broker at
    /// <paramref name="brokerHost"/>:<paramref name="brokerPort"/> with no MQTT port of its own, ready once it logs that it
    /// has subscribed there (so nothing published after this returns is missed).
    /// </summary>
    public static Task<SaitoServerProcess> StartExternalAsync(string? serverDll, string brokerHost, int brokerPort, IEnumerable<string> storageArgs,
        IEnumerable<string> extraArgs, string logPath, TimeSpan readyTimeout, CancellationToken token) =>
        StartAsync(serverDll, storageArgs,
            new[] { "--Mqtt:Mode=external", $"--Mqtt:External:Host={brokerHost}", $"--Mqtt:External:Port={brokerPort}" }.Concat(extraArgs), [], logPath,
            readyTimeout, ExternalReadyLine, waitForMqttPort: false, token);

    private static async Task<SaitoServerProcess> StartAsync(string? serverDll, IEnumerable<string> storageArgs, IEnumerable<string> extraArgs,
        IEnumerable<KeyValuePair<string, string>> environment, string logPath, TimeSpan readyTimeout, string readyLine, bool waitForMqttPort, CancellationToken token)
    {
        // FreePort's port is free when it answers, not when the server binds it: a process beside this one (a test
        // starting Mosquitto, another server) can take it in between. The server then exits at start saying so; a
        // new pair of ports is the cure, a few times, before the failure is reported.
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return await StartOnceAsync(serverDll, storageArgs, extraArgs, environment, logPath, readyTimeout, readyLine, waitForMqttPort, token);
            }
            catch (PortTakenException) when (attempt < 3)
            {
            }
        }
    }

    private sealed class PortTakenException(string message) : InvalidOperationException(message);

    private static async Task<SaitoServerProcess> StartOnceAsync(string? serverDll, IEnumerable<string> storageArgs, IEnumerable<string> extraArgs,
        IEnumerable<KeyValuePair<string, string>> environment, string logPath, TimeSpan readyTimeout, string readyLine, bool waitForMqttPort, CancellationToken token)
    {
        string dll = serverDll ?? LocalServers.SaitoServerDll();
        if (!File.Exists(dll))
        {
            throw new InvalidOperationException($"{dll} not found");
        }

        int port = LocalServers.FreePort();
        int http = LocalServers.FreePort();
        var psi = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        psi.ArgumentList.Add(dll);
        foreach (string arg in new[]
                 {
                     $"--urls=http://127.0.0.1:{http}", "--Mqtt:BindAddress=127.0.0.1", $"--Mqtt:Port={port}",
                     "--Logging:LogLevel:Default=Information", "--Logging:LogLevel:Microsoft=Warning",
                 }.Concat(storageArgs).Concat(extraArgs))
        {
            psi.ArgumentList.Add(arg);
        }

        foreach (var (key, value) in environment)
        {
            psi.Environment[key] = value;
        }

        Directory.CreateDirectory(Path.GetDirectoryName(Path.GetFullPath(logPath))!);
        var log = new StreamWriter(logPath, append: false) { AutoFlush = true };
        await log.WriteLineAsync("$ dotnet " + string.Join(' ', psi.ArgumentList));
        var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start dotnet " + dll);
        var server = new SaitoServerProcess(process, port, logPath, log, readyLine);
        process.OutputDataReceived += (_, e) => server.OnLine(e.Data);
        process.ErrorDataReceived += (_, e) => server.OnLine(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(readyTimeout);
        try
        {
            var exited = process.WaitForExitAsync(timeout.Token);
            // _ready is completed by the output handler; a console tool has no synchronization context to deadlock on.
#pragma warning disable VSTHRD003
            var first = await Task.WhenAny(server._ready.Task, exited);
#pragma warning restore VSTHRD003
            if (first == exited)
            {
                string message = $"Saito.Server exited with {process.ExitCode} before it was ready; see {logPath}";
                throw server._portTaken ? new PortTakenException(message) : new InvalidOperationException(message);
            }

            if (waitForMqttPort)
            {
                await WaitForPortAsync(port, timeout.Token);
            }
        }
        catch (OperationCanceledException) when (!token.IsCancellationRequested)
        {
            await server.DisposeAsync();
            throw new TimeoutException($"Saito.Server did not log '{readyLine}' within {readyTimeout.TotalSeconds:F0} s; see {logPath}");
        }
        catch
        {
            await server.DisposeAsync();
            throw;
        }

        return server;
    }

    private void OnLine(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_log)
        {
            if (!_closed)
            {
                _log.WriteLine(line);
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

    public bool HasExited => _process.HasExited;


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


    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
        lock (_log)
        {
            _closed = true;
            _log.Dispose();
        }
    }
}

using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Saito.Mqtt.Tests.Infrastructure;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// Saito.Server as its own process (the build output beside the tests), so a test can kill it with SIGKILL as a
/// power cut or the OOM killer would.
/// </summary>
public sealed class SaitoProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private SaitoProcess(Process process, int port)
    {
        _process = process;
        Port = port;
    }

    public int Port { get; }

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

    public static async Task<SaitoProcess> StartAsync(TestStorage storage, int? port = null)
    {
        ArgumentNullException.ThrowIfNull(storage);
        string dll = Path.Combine(AppContext.BaseDirectory, "Saito.Server.dll");
        int mqttPort = port ?? FreePort.Next();
        var psi = new ProcessStartInfo("dotnet")
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = AppContext.BaseDirectory,
        };
        foreach (string arg in (string[])[dll, $"--urls=http://127.0.0.1:{FreePort.Next()}", "--Mqtt:BindAddress=127.0.0.1", $"--Mqtt:Port={mqttPort}",
                     .. storage.Settings.Select(s => "--" + s)])
        {
            psi.ArgumentList.Add(arg);
        }

        var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start Saito.Server");
        var instance = new SaitoProcess(process, mqttPort);
        process.OutputDataReceived += (_, e) => instance.Append(e.Data);
        process.ErrorDataReceived += (_, e) => instance.Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();

        // Ready when the writers are: the try-it lines are logged once the database is prepared.
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (DateTime.UtcNow < deadline)
        {
            if (process.HasExited)
            {
                throw new InvalidOperationException($"Saito.Server exited with {process.ExitCode}:\n{instance.Output}");
            }

            if (instance.Output.Contains("See it stored", StringComparison.Ordinal) && await AcceptsAsync(mqttPort))
            {
                return instance;
            }

            await Task.Delay(100);
        }

        await instance.DisposeAsync();
        throw new TimeoutException($"Saito.Server was not ready within 60 s:\n{instance.Output}");
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
    }

    private static async Task<bool> AcceptsAsync(int port)
    {
        try
        {
            using var probe = new TcpClient();
            await probe.ConnectAsync("127.0.0.1", port);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
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

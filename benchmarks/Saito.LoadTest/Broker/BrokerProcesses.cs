using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Saito.LoadTest.Common;

namespace Saito.LoadTest.Broker;

/// <summary>A broker started as its own process on a free loopback port, so its CPU time can be read from /proc.</summary>
internal sealed class BrokerProcess : IAsyncDisposable
{
    private readonly Process _process;
    private readonly string? _directory;

    private BrokerProcess(string name, Process process, int port, string? directory)
    {
        Name = name;
        _process = process;
        Port = port;
        _directory = directory;
    }

    public string Name { get; }
    public int Port { get; }
    public int Pid => _process.Id;

    /// <summary>Resident set size of the broker process now, in KiB (VmRSS in /proc).</summary>
    public long RssKb()
    {
        foreach (var line in File.ReadLines($"/proc/{_process.Id}/status"))
        {
            if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
            {
                return long.Parse(line.AsSpan(6).Trim().TrimEnd("kB").Trim(), System.Globalization.CultureInfo.InvariantCulture);
            }
        }

        throw new InvalidOperationException("No VmRSS for the broker process");
    }

    /// <summary>User + system CPU seconds the broker process has used so far.</summary>
    public double CpuSeconds()
    {
        _process.Refresh();
        return _process.TotalProcessorTime.TotalSeconds;
    }

    public static async Task<BrokerProcess> StartMosquittoAsync(int inflight, bool unlimitedQueue, string binary = "/usr/sbin/mosquitto")
    {
        if (!File.Exists(binary))
        {
            throw new InvalidOperationException($"Mosquitto not found at {binary}: apt-get install mosquitto");
        }

        int port = FreePort.Next();
        string dir = Path.Combine(Path.GetTempPath(), "saito-load-mosquitto-" + port);
        Directory.CreateDirectory(dir);
        string config = Path.Combine(dir, "mosquitto.conf");
        await File.WriteAllTextAsync(config, $"""
            listener {port} 127.0.0.1
            allow_anonymous true
            persistence false
            max_inflight_messages {inflight}
            max_queued_messages {(unlimitedQueue ? 10_000_000 : 1000)}
            log_dest none
            """);
        var process = Start(binary, ["-c", config]);
        await WaitForPortAsync(process, port);
        return new BrokerProcess("mosquitto", process, port, dir);
    }

    public static async Task<BrokerProcess> StartSaitoAsync(int inflight, bool unlimitedQueue)
    {
        string[] queue = unlimitedQueue ? ["--Mqtt:MaxQueuedMessages=10000000", "--Mqtt:MaxQueuedBytesPerSession=10000000000"] : [];
        string dll = LocalServers.SaitoServerDll();
        int port = FreePort.Next();
        int http = FreePort.Next();
        var process = Start("dotnet", [dll, $"--urls=http://127.0.0.1:{http}", "--Mqtt:BindAddress=127.0.0.1", $"--Mqtt:Port={port}",
            $"--Mqtt:MaxInflightMessages={inflight}", .. queue, "--Logging:LogLevel:Default=Warning",
            // The load's topics (load/...) are not Saito reading topics, so nothing is stored; the folder keeps the empty
            // SQLite files out of the working directory.
            $"--Storage:HotPath={Path.Combine(Path.GetTempPath(), "saito-loadtest", "hot")}",
            $"--Storage:ArchivePath={Path.Combine(Path.GetTempPath(), "saito-loadtest", "archive")}"]);
        await WaitForPortAsync(process, port);
        return new BrokerProcess("saito", process, port, null);
    }


    private static Process Start(string file, string[] args)
    {
        var psi = new ProcessStartInfo(file, args) { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        var process = Process.Start(psi) ?? throw new InvalidOperationException($"Could not start {file}");
        process.OutputDataReceived += (_, _) => { };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is { Length: > 0 })
            {
                Console.Error.WriteLine($"[{Path.GetFileName(file)}] {e.Data}");
            }
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        return process;
    }

    private static async Task WaitForPortAsync(Process process, int port)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (DateTime.UtcNow < deadline)
        {
            if (process.HasExited)
            {
                throw new InvalidOperationException($"Broker exited with {process.ExitCode}");
            }

            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync(IPAddress.Loopback, port);
                return;
            }
            catch (SocketException)
            {
                await Task.Delay(100);
            }
        }

        throw new TimeoutException($"Broker did not listen on {port}");
    }


    public async ValueTask DisposeAsync()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            await _process.WaitForExitAsync();
        }

        _process.Dispose();
        if (_directory is not null)
        {
            Directory.Delete(_directory, recursive: true);
        }
    }
}

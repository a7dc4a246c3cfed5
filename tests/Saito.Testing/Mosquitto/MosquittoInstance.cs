using System.Diagnostics;
using System.Net.Sockets;
using System.Text;

namespace Saito.Testing;

/// <summary>
/// A real Mosquitto (Debian's <c>mosquitto</c> package) started on free loopback ports: plain TCP,
/// TLS with the test certificates, and WebSocket when the build supports it. It can be stopped and
/// started again on the same ports (for reconnect tests). The binary is found through
/// <c>SAITO_TEST_MOSQUITTO</c> (default /usr/sbin/mosquitto).
/// </summary>
public sealed class MosquittoInstance : IAsyncDisposable
{
    private readonly string _directory;
    private readonly string _configPath;
    private readonly StringBuilder _log = new();
    private Process? _process;

    private MosquittoInstance(string directory, int port, int tlsPort, int webSocketPort)
    {
        _directory = directory;
        _configPath = Path.Combine(directory, "mosquitto.conf");
        Port = port;
        TlsPort = tlsPort;
        WebSocketPort = webSocketPort;
    }

    public static string BinaryPath => Environment.GetEnvironmentVariable("SAITO_TEST_MOSQUITTO") ?? "/usr/sbin/mosquitto";

    public int Port { get; }
    public int TlsPort { get; }
    public int WebSocketPort { get; }

    public BrokerEndpoint Endpoint => new("mosquitto", "127.0.0.1", Port, TlsPort, TestCertificates.Instance.CaCertificatePath, $"ws://127.0.0.1:{WebSocketPort}/mqtt");

    /// <summary>What Mosquitto printed so far (for failure messages).</summary>
    public string Log
    {
        get
        {
            lock (_log)
            {
                return _log.ToString();
            }
        }
    }

    /// <summary>Starts one; <paramref name="maxQueuedMessages"/> per client (a class of load needs more than a test).</summary>
    public static async Task<MosquittoInstance> StartAsync(string? extraConfig = null, int maxQueuedMessages = 10000)
    {
        for (int attempt = 1; ; attempt++)
        {
            var instance = await CreateAsync(extraConfig, maxQueuedMessages);
            try
            {
                await instance.StartAsync();
                return instance;
            }
            catch (InvalidOperationException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                // Another process took one of the ports between the probe and the bind: try fresh ones.
                await instance.DisposeAsync();
            }
        }
    }

    private static async Task<MosquittoInstance> CreateAsync(string? extraConfig, int maxQueuedMessages)
    {
        if (!File.Exists(BinaryPath))
        {
            throw new InvalidOperationException(
                $"Mosquitto is not installed at {BinaryPath}. Run scripts/test.sh (it installs it with apt-get) or set SAITO_TEST_MOSQUITTO.");
        }

        string dir = Path.Combine(Path.GetTempPath(), "saito-mosquitto-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(dir);
        var instance = new MosquittoInstance(dir, FreePort.Next(), FreePort.Next(), FreePort.Next());
        var certs = TestCertificates.Instance;
        await File.WriteAllTextAsync(instance._configPath, $"""
            per_listener_settings false
            allow_anonymous true
            persistence false
            message_size_limit 0
            max_queued_messages {maxQueuedMessages}
            max_inflight_messages 20
            log_dest stdout
            log_type error
            log_type warning
            log_type notice

            listener {instance.Port} 127.0.0.1

            listener {instance.TlsPort} 127.0.0.1
            cafile {certs.CaCertificatePath}
            certfile {certs.ServerCertificatePath}
            keyfile {certs.ServerKeyPath}

            listener {instance.WebSocketPort} 127.0.0.1
            protocol websockets

            {extraConfig}
            """);
        return instance;
    }

    /// <summary>Starts (again) on the same ports and waits until the TCP port accepts connections.</summary>
    public async Task StartAsync()
    {
        if (_process is { HasExited: false })
        {
            return;
        }

        var psi = new ProcessStartInfo(BinaryPath, ["-c", _configPath])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        var process = Process.Start(psi) ?? throw new InvalidOperationException("Could not start mosquitto");
        process.OutputDataReceived += (_, e) => Append(e.Data);
        process.ErrorDataReceived += (_, e) => Append(e.Data);
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        _process = process;

        var deadline = DateTime.UtcNow.AddSeconds(10);
        while (DateTime.UtcNow < deadline)
        {
            if (process.HasExited)
            {
                throw new InvalidOperationException($"mosquitto exited with {process.ExitCode}: {Log}");
            }

            try
            {
                using var probe = new TcpClient();
                await probe.ConnectAsync("127.0.0.1", Port);
                return;
            }
            catch (SocketException)
            {
                await Task.Delay(50);
            }
        }

        throw new TimeoutException($"mosquitto did not listen on {Port} within 10 s: {Log}");
    }

    /// <summary>Stops the broker abruptly (SIGKILL), as a crash or a pulled cable would.</summary>
    public async Task StopAsync()
    {
        if (_process is { HasExited: false } process)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync();
        }
    }

    /// <summary>Stops the broker the way an operator's restart does (SIGTERM): with persistence on, it saves its sessions first.</summary>
    public async Task StopGracefullyAsync()
    {
        if (_process is { HasExited: false } process)
        {
            using var kill = Process.Start(new ProcessStartInfo("kill", ["-TERM", process.Id.ToString(System.Globalization.CultureInfo.InvariantCulture)]) { UseShellExecute = false })
                ?? throw new InvalidOperationException("Could not run kill");
            await kill.WaitForExitAsync();
            await process.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(10));
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        _process?.Dispose();
        try
        {
            Directory.Delete(_directory, recursive: true);
        }
        catch (IOException)
        {
            // A leftover temp folder is harmless.
        }
    }

    private void Append(string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (_log)
        {
            _log.AppendLine(line);
        }
    }
}

/// <summary>One Mosquitto shared by every test in the "mosquitto" collection.</summary>
public sealed class MosquittoFixture : IAsyncLifetime
{
    private MosquittoInstance? _instance;

    public MosquittoInstance Instance => _instance ?? throw new InvalidOperationException("Mosquitto not started");

    public BrokerEndpoint Endpoint => Instance.Endpoint;

    public async ValueTask InitializeAsync() => _instance = await MosquittoInstance.StartAsync();

    public async ValueTask DisposeAsync()
    {
        if (_instance is not null)
        {
            await _instance.DisposeAsync();
        }
    }
}

using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Saito.Mqtt.Broker;
using Saito.Server;

namespace Saito.Mqtt.Tests.Infrastructure;

/// <summary>
/// Saito's server, composed exactly as Program.cs composes it (<see cref="SaitoApp"/>), started in-process on free
/// loopback ports: MQTT over TCP, over TLS with the test certificates, and over WebSocket on the HTTP port.
/// </summary>
public sealed class SaitoBrokerInstance : IAsyncDisposable
{
    private readonly WebApplication _app;
    private readonly string _dataDirectory;

    private SaitoBrokerInstance(WebApplication app, string dataDirectory, int port, int tlsPort, int httpPort)
    {
        _app = app;
        _dataDirectory = dataDirectory;
        Port = port;
        TlsPort = tlsPort;
        HttpPort = httpPort;
    }

    public int Port { get; }
    public int TlsPort { get; }
    public int HttpPort { get; }

    public BrokerEndpoint Endpoint => new("saito", "127.0.0.1", Port, TlsPort, TestCertificates.Instance.CaCertificatePath, $"ws://127.0.0.1:{HttpPort}/mqtt");

    /// <summary>The SQLite file the server stores readings in (hot tier).</summary>
    public string HotDatabase => Path.Combine(_dataDirectory, "hot", "saito-hot.db");

    public MqttBroker Broker => _app.Services.GetRequiredService<MqttBroker>();

    public IServiceProvider Services => _app.Services;

    /// <param name="settings">Extra <c>Section:Key=value</c> settings, e.g. <c>Mqtt:MaxPacketSize=1024</c>.</param>
    /// <param name="configure">Extra service registrations (a publish hook, an authenticator).</param>
    /// <param name="waitUntilServed">Whether to return only once the broker serves connections (its start gates have opened).</param>
    public static async Task<SaitoBrokerInstance> StartAsync(
        IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null, bool waitUntilServed = true)
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                return await TryStartAsync(settings, configure, waitUntilServed);
            }
            catch (IOException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                // Another process took one of the ports between the probe and the bind: try fresh ones.
            }
        }
    }

    private static async Task<SaitoBrokerInstance> TryStartAsync(IEnumerable<string>? settings, Action<WebApplicationBuilder>? configure, bool waitUntilServed)
    {
        var certs = TestCertificates.Instance;
        int port = FreePort.Next();
        int tlsPort = FreePort.Next();
        int httpPort = FreePort.Next();
        // The server stores readings (SQLite by default): each instance gets its own throwaway folder.
        string data = Directory.CreateTempSubdirectory("saito-broker-test-").FullName;
        string[] args =
        [
            $"--urls=http://127.0.0.1:{httpPort}",
            "--Mqtt:BindAddress=127.0.0.1",
            $"--Mqtt:Port={port}",
            $"--Mqtt:TlsPort={tlsPort}",
            $"--Mqtt:CertificatePath={certs.ServerCertificatePath}",
            $"--Mqtt:CertificateKeyPath={certs.ServerKeyPath}",
            $"--Storage:HotPath={Path.Combine(data, "hot")}",
            $"--Storage:ArchivePath={Path.Combine(data, "archive")}",
            "--Logging:LogLevel:Default=Warning",
            .. (settings ?? []).Select(s => "--" + s),
        ];
        var app = SaitoApp.Build(args, configure);
        try
        {
            await app.StartAsync();
            if (waitUntilServed)
            {
                // The broker answers connections once the registry's start-up work is done (MqttBroker.Served).
                await app.Services.GetRequiredService<MqttBroker>().Served.WaitAsync(TimeSpan.FromSeconds(60));
            }
        }
        catch
        {
            await app.DisposeAsync();
            Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
            await TestFolders.DeleteAsync(data);
            throw;
        }

        return new SaitoBrokerInstance(app, data, port, tlsPort, httpPort);
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dataDirectory, recursive: true);
    }
}

/// <summary>One Saito broker shared by every test in the "saito" collection.</summary>
public sealed class SaitoBrokerFixture : IAsyncLifetime
{
    private SaitoBrokerInstance? _instance;

    public SaitoBrokerInstance Instance => _instance ?? throw new InvalidOperationException("Saito not started");

    public BrokerEndpoint Endpoint => Instance.Endpoint;

    // The conformance suites send a 1 MB payload; Saito's default packet limit is sized for readings (260 KiB).
    public async ValueTask InitializeAsync() => _instance = await SaitoBrokerInstance.StartAsync(["Mqtt:MaxPacketSize=16777216"]);

    public async ValueTask DisposeAsync()
    {
        if (_instance is not null)
        {
            await _instance.DisposeAsync();
        }
    }
}

[CollectionDefinition(Name)]
public sealed class SaitoCollection : ICollectionFixture<SaitoBrokerFixture>
{
    public const string Name = "saito";
}

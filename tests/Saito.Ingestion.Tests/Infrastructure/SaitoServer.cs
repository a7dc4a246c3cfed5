using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Pipeline;
using Saito.Server;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// Saito composed exactly as Program.cs composes it (<see cref="SaitoApp"/>), started in-process on free loopback
/// ports, storing into the database a <see cref="TestStorage"/> describes.
/// </summary>
public sealed class SaitoServer : IAsyncDisposable
{
    private readonly WebApplication _app;

    private SaitoServer(WebApplication app, TestStorage storage, int port, int httpPort)
    {
        _app = app;
        Storage = storage;
        Port = port;
        HttpPort = httpPort;
    }

    public TestStorage Storage { get; }
    public int Port { get; }
    public int HttpPort { get; }

    public BrokerEndpoint Endpoint => new("saito", "127.0.0.1", Port, 0, TestCertificates.Instance.CaCertificatePath, $"ws://127.0.0.1:{HttpPort}/mqtt");

    public IServiceProvider Services => _app.Services;

    public IReadingStore Store => _app.Services.GetRequiredService<IReadingStore>();

    public IngestionMetrics Metrics => _app.Services.GetRequiredService<IngestionMetrics>();

    /// <param name="storage">where readings go; the server does not own it (several servers may share one)</param>
    /// <param name="settings">extra <c>Section:Key=value</c> settings</param>
    /// <param name="configure">passed to <see cref="SaitoApp.Build"/>: services a test adds to the real composition</param>
    public static async Task<SaitoServer> StartAsync(TestStorage storage, IEnumerable<string>? settings = null, Action<WebApplicationBuilder>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(storage);
        for (int attempt = 1; ; attempt++)
        {
            int port = FreePort.Next();
            int httpPort = FreePort.Next();
            string[] args =
            [
                $"--urls=http://127.0.0.1:{httpPort}",
                "--Mqtt:BindAddress=127.0.0.1",
                $"--Mqtt:Port={port}",
                "--Logging:LogLevel:Default=Warning",
                .. storage.Settings.Select(s => "--" + s),
                .. (settings ?? []).Select(s => "--" + s),
            ];
            var app = SaitoApp.Build(args, configure);
            try
            {
                await app.StartAsync();
                await app.Services.GetRequiredService<StorageStartup>().Ready.WaitAsync(TimeSpan.FromSeconds(60));
                if (app.Services.GetService<Saito.Mqtt.Broker.MqttBroker>() is { } broker)
                {
                    // The broker answers connections once the registry's start-up work is done.
                    await broker.Served.WaitAsync(TimeSpan.FromSeconds(60));
                }

                return new SaitoServer(app, storage, port, httpPort);
            }
            catch (IOException ex) when (attempt < 5 && FreePort.IsAddressInUse(ex))
            {
                await app.DisposeAsync();
            }
            catch
            {
                await app.DisposeAsync();
                throw;
            }
        }
    }

    /// <summary>Waits until a table holds <paramref name="expected"/> rows (readings arrive asynchronously for QoS 0 and through other brokers).</summary>
    public async Task<long> WaitForCountAsync(ReadingKind kind, long expected, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        long count;
        while ((count = await Store.CountAsync(kind, StorageTier.Hot, CancellationToken.None)) < expected && DateTime.UtcNow < deadline)
        {
            await Task.Delay(50);
        }

        return count;
    }

    public async Task<HttpResponseMessage> GetHealthAsync()
    {
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(10) };
        return await http.GetAsync(new Uri($"http://127.0.0.1:{HttpPort}/health"));
    }

    /// <summary>Asks /health (as a caller on this machine) until its code and body meet <paramref name="condition"/>; returns the body.</summary>
    public async Task<string> WaitForHealthAsync(Func<System.Net.HttpStatusCode, string, bool> condition, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(condition);
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            using var response = await GetHealthAsync();
            string body = await response.Content.ReadAsStringAsync();
            if (condition(response.StatusCode, body))
            {
                return body;
            }

            if (DateTime.UtcNow > deadline)
            {
                throw new Shouldly.ShouldAssertException($"/health did not reach the expected state in time; last answer {response.StatusCode}: {body}");
            }

            await Task.Delay(100);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}

using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Hosting;

/// <summary>Says, once Kestrel is listening, where each MQTT listener and the HTTP endpoints are.</summary>
internal sealed partial class MqttStartupReport(
    IHostApplicationLifetime lifetime, IServer server, IOptions<MqttBrokerOptions> options, ILogger<MqttStartupReport> logger) : IHostedService
{
    public Task StartAsync(CancellationToken cancellationToken)
    {
        lifetime.ApplicationStarted.Register(Report);
        return Task.CompletedTask;
    }

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    private void Report()
    {
        var mqtt = options.Value;
        var addresses = server.Features.Get<IServerAddressesFeature>()?.Addresses ?? [];
        if (mqtt.Port > 0)
        {
            LogListening("MQTT (TCP)", $"mqtt://{mqtt.BindAddress}:{mqtt.Port}");
        }

        if (mqtt.TlsPort > 0)
        {
            LogListening("MQTT (TLS)", $"mqtts://{mqtt.BindAddress}:{mqtt.TlsPort}");
        }

        foreach (var address in addresses)
        {
            if (address.EndsWith($":{mqtt.Port}", StringComparison.Ordinal) || (mqtt.TlsPort > 0 && address.EndsWith($":{mqtt.TlsPort}", StringComparison.Ordinal)))
            {
                continue;
            }

            if (mqtt.WebSocketPath.Length > 0)
            {
                LogListening("MQTT (WebSocket)", address.Replace("http", "ws", StringComparison.Ordinal) + mqtt.WebSocketPath);
            }

            LogListening("Health", address + "/health");
        }
    }

    [LoggerMessage(1100, LogLevel.Information, "{What} listening on {Address}")]
    private partial void LogListening(string what, string address);
}

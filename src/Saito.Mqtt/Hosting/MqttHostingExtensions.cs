using System.Net;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Hosting;

public static class MqttHostingExtensions
{
    /// <summary>The HTTP address Kestrel uses when neither --urls nor ASPNETCORE_URLS says otherwise.</summary>
    public const string DefaultUrls = "http://localhost:5000";

    /// <summary>
    /// Registers the embedded broker: options from the <c>Mqtt</c> section (validated at start), the broker,
    /// its Kestrel listeners (TCP, TLS) beside the HTTP endpoints from <c>--urls</c>, and a health check.
    /// </summary>
    public static IHostApplicationBuilder AddSaitoMqttBroker(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        // Listening in code makes Kestrel ignore --urls / ASPNETCORE_URLS, so the HTTP addresses are read here and listened
        // on beside the MQTT ports (and taken out of the host's copy, for which Kestrel would warn: UrlsListenedInCode).
        string urls = ListenerAddresses.Urls(builder.Configuration);
        services.AddSingleton<IStartupFilter>(new UrlsListenedInCode(urls));
        // The WebSocket path is served on every HTTP address, those of Kestrel:Endpoints included.
        var httpUrls = ListenerAddresses.HttpUrls(builder.Configuration);
        services.AddOptions<MqttBrokerOptions>()
            .BindConfiguration(MqttBrokerOptions.SectionName)
            .PostConfigure(o => o.LoopbackOnly = ListenersAreLoopbackOnly(o, httpUrls))
            .ValidateDataAnnotations()
            .ValidateOnStart();
        services.AddSingleton<IValidateOptions<MqttBrokerOptions>>(new MqttBrokerOptionsValidator(httpUrls));
        services.AddHostedService<ListenerCheck>();
        services.AddMetrics();
        services.AddSingleton<MqttBrokerMetrics>();
        services.AddSingleton<MqttBroker>();
        services.AddHostedService(sp => sp.GetRequiredService<MqttBroker>());
        services.AddSingleton<MqttSocketListener>();
        services.AddHostedService(sp => sp.GetRequiredService<MqttSocketListener>());
        services.AddHostedService<MqttStartupReport>();
        services.AddHealthChecks().AddCheck<MqttBrokerHealthCheck>("mqtt");

        // MQTT connections do little work per read and never block: running socket continuations inline on the
        // I/O threads saves a thread-pool hop per read (the profile showed handoffs dominating broker CPU).
        services.Configure<SocketTransportOptions>(o => o.UnsafePreferInlineScheduling = true);
        services.AddOptions<KestrelServerOptions>()
            .Configure<IOptions<MqttBrokerOptions>>((kestrel, mqtt) => ConfigureListeners(kestrel, mqtt.Value, urls));
        return builder;
    }

    /// <summary>Maps MQTT over WebSocket at <see cref="MqttBrokerOptions.WebSocketPath"/> (default /mqtt).</summary>
    public static IEndpointRouteBuilder MapSaitoMqttEndpoints(this IEndpointRouteBuilder endpoints)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        var options = endpoints.ServiceProvider.GetRequiredService<IOptions<MqttBrokerOptions>>().Value;
        if (string.IsNullOrEmpty(options.WebSocketPath))
        {
            return endpoints;
        }

        var broker = endpoints.ServiceProvider.GetRequiredService<MqttBroker>();
        var pipeline = endpoints.CreateApplicationBuilder();
        pipeline.UseWebSockets(new WebSocketOptions { KeepAliveInterval = TimeSpan.Zero });
        pipeline.Run(context => MqttWebSocketTransport.HandleAsync(context, broker));
        endpoints.Map(options.WebSocketPath, pipeline.Build());
        return endpoints;
    }

    private static void ConfigureListeners(KestrelServerOptions kestrel, MqttBrokerOptions mqtt, string urls)
    {
        foreach (var url in urls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            var address = BindingAddress.Parse(url);
            bool https = string.Equals(address.Scheme, "https", StringComparison.OrdinalIgnoreCase);
            Listen(kestrel, address.Host, address.Port, listen =>
            {
                if (https)
                {
                    listen.UseHttps();
                }
            });
        }

        if (mqtt.Port > 0 && !MqttSocketListener.Serves(mqtt))
        {
            Listen(kestrel, mqtt.BindAddress, mqtt.Port, listen => listen.UseConnectionHandler<MqttConnectionHandler>());
        }

        if (mqtt.TlsPort > 0)
        {
            var certificate = LoadCertificate(mqtt);
            var clientCa = mqtt.ClientCaPath is { Length: > 0 } caPath ? X509CertificateLoader.LoadCertificateFromFile(caPath) : null;
            Listen(kestrel, mqtt.BindAddress, mqtt.TlsPort, listen =>
            {
                listen.UseHttps(new HttpsConnectionAdapterOptions
                {
                    ServerCertificate = certificate,
                    ClientCertificateMode = mqtt.RequestClientCertificate || clientCa is not null
                        ? ClientCertificateMode.AllowCertificate
                        : ClientCertificateMode.NoCertificate,

                    // A client certificate identifies a hub only when its chain ends at the configured CA (and it is
                    // in date); any other certificate fails the handshake. Without a CA no certificate is trusted.
                    ClientCertificateValidation = (client, _, _) => clientCa is not null && IsIssuedBy(client, clientCa),
                });
                listen.UseConnectionHandler<MqttConnectionHandler>();
            });
        }
    }

    private static void Listen(KestrelServerOptions kestrel, string host, int port, Action<ListenOptions> configure)
    {
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            kestrel.ListenLocalhost(port, configure);
        }
        else if (host is "*" or "+" or "0.0.0.0" or "[::]" or "::")
        {
            kestrel.ListenAnyIP(port, configure);
        }
        else if (IPAddress.TryParse(host.Trim('[', ']'), out var ip))
        {
            kestrel.Listen(ip, port, configure);
        }
        else
        {
            // A host name other than localhost: bind every interface, as Kestrel does for --urls.
            kestrel.ListenAnyIP(port, configure);
        }
    }

    /// <summary>Whether <paramref name="client"/> chains to <paramref name="ca"/> (custom root trust, no revocation list here) and is for client authentication.</summary>
    internal static bool IsIssuedBy(X509Certificate2 client, X509Certificate2 ca)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(ca);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.ApplicationPolicy.Add(new System.Security.Cryptography.Oid("1.3.6.1.5.5.7.3.2")); // client authentication
        return chain.Build(client);
    }

    /// <summary>
    /// True when every MQTT listener (TCP, TLS, and the WebSocket path on each HTTP address of
    /// <see cref="ListenerAddresses.HttpUrls"/>) is on a loopback address.
    /// </summary>
    internal static bool ListenersAreLoopbackOnly(MqttBrokerOptions mqtt, IReadOnlyList<string> httpUrls)
    {
        bool tcp = (mqtt.Port == 0 && mqtt.TlsPort == 0) || ListenerAddresses.IsLoopbackHost(mqtt.BindAddress);
        bool ws = mqtt.WebSocketPath.Length == 0 || httpUrls.All(ListenerAddresses.IsLoopbackUrl);
        return tcp && ws;
    }

    internal static X509Certificate2 LoadCertificate(MqttBrokerOptions mqtt)
    {
        string path = mqtt.CertificatePath!;
        return mqtt.CertificateKeyPath is { Length: > 0 } key
            ? X509Certificate2.CreateFromPemFile(path, key)
            : X509CertificateLoader.LoadPkcs12FromFile(path, mqtt.CertificatePassword);
    }
}

/// <summary>
/// Checks that cannot be said with attributes: TLS needs a certificate that loads, ports do not collide, and anonymous
/// access is never left open on a network by default.
/// </summary>
internal sealed class MqttBrokerOptionsValidator(IReadOnlyList<string> httpUrls) : IValidateOptions<MqttBrokerOptions>
{
    public ValidateOptionsResult Validate(string? name, MqttBrokerOptions options)
    {
        var failures = new List<string>();
        if (options.AllowAnonymous is null && !MqttHostingExtensions.ListenersAreLoopbackOnly(options, httpUrls))
        {
            failures.Add(AnonymousOnNetwork($"Mqtt:BindAddress '{options.BindAddress}', HTTP '{string.Join(';', httpUrls)}' " +
                $"(urls and Kestrel:Endpoints) with Mqtt:WebSocketPath '{options.WebSocketPath}'"));
        }

        if (options.ClientCaPath is { Length: > 0 } ca && !File.Exists(ca))
        {
            failures.Add($"Mqtt:ClientCaPath '{ca}' does not exist.");
        }

        if (options.RequestClientCertificate && options.ClientCaPath is not { Length: > 0 })
        {
            failures.Add("Mqtt:RequestClientCertificate is set but Mqtt:ClientCaPath is not: without that CA no client certificate is accepted, " +
                "so every client that presents one would fail the TLS handshake. Set Mqtt:ClientCaPath (it asks for certificates by itself).");
        }

        if (options.ClientCaPath is { Length: > 0 } && options.TlsPort == 0)
        {
            failures.Add("Mqtt:ClientCaPath is set but Mqtt:TlsPort is 0: client certificates need the TLS listener.");
        }
        if (options.TlsPort > 0)
        {
            if (string.IsNullOrEmpty(options.CertificatePath))
            {
                failures.Add("Mqtt:TlsPort is set but Mqtt:CertificatePath is not: the TLS listener needs a server certificate (PEM with Mqtt:CertificateKeyPath, or PFX).");
            }
            else if (!File.Exists(options.CertificatePath))
            {
                failures.Add($"Mqtt:CertificatePath '{options.CertificatePath}' does not exist.");
            }
            else if (options.CertificateKeyPath is { Length: > 0 } key && !File.Exists(key))
            {
                failures.Add($"Mqtt:CertificateKeyPath '{key}' does not exist.");
            }
            else
            {
                try
                {
                    using var certificate = MqttHostingExtensions.LoadCertificate(options);
                    if (!certificate.HasPrivateKey)
                    {
                        failures.Add($"The certificate in '{options.CertificatePath}' has no private key.");
                    }
                }
                catch (Exception ex) when (ex is System.Security.Cryptography.CryptographicException or ArgumentException)
                {
                    failures.Add($"Mqtt:CertificatePath '{options.CertificatePath}' could not be loaded: {ex.Message}");
                }
            }

            if (options.TlsPort == options.Port)
            {
                failures.Add($"Mqtt:TlsPort and Mqtt:Port are both {options.Port}.");
            }
        }

        if (options.WebSocketPath.Length > 0 && !options.WebSocketPath.StartsWith('/'))
        {
            failures.Add($"Mqtt:WebSocketPath '{options.WebSocketPath}' must start with '/' (or be empty to turn WebSockets off).");
        }

        if (options.Port == 0 && options.TlsPort == 0 && options.WebSocketPath.Length == 0)
        {
            failures.Add("Every MQTT listener is off (Mqtt:Port 0, Mqtt:TlsPort 0, Mqtt:WebSocketPath empty).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }

    /// <summary>The refusal when anonymous access would reach the network; <paramref name="where"/> names the listeners.</summary>
    internal static string AnonymousOnNetwork(string where) =>
        $"Mqtt:AllowAnonymous is not set and an MQTT listener is not on loopback ({where}). Anyone on the network could read and forge children's readings. " +
        "Set Mqtt:AllowAnonymous=false and give each hub credentials ('saito hubs add hub-1', docs/security.md), or " +
        "Mqtt:AllowAnonymous=true to accept anonymous publishers on purpose.";
}

/// <summary>
/// The second half of the loopback decision: once Kestrel has bound, the addresses it reports
/// (<see cref="IServerAddressesFeature"/>) must all be loopback while <see cref="MqttBrokerOptions.AllowAnonymous"/> is unset.
/// The configuration is read before start (<see cref="MqttBrokerOptionsValidator"/>), but an endpoint can also be added in
/// code or by a hosting layer Saito does not read; such a server stops at start with the same message instead of serving
/// anonymous clients on the network.
/// </summary>
internal sealed class ListenerCheck(IServer server, IOptions<MqttBrokerOptions> options) : IHostedLifecycleService
{
    public Task StartedAsync(CancellationToken cancellationToken)
    {
        var mqtt = options.Value;
        if (mqtt.AllowAnonymous is not null)
        {
            return Task.CompletedTask;
        }

        // The validator's rule, on what Kestrel bound: an HTTP address counts only while the WebSocket path is on.
        var addresses = (server.Features.Get<IServerAddressesFeature>()?.Addresses ?? []).ToList();
        if (!MqttHostingExtensions.ListenersAreLoopbackOnly(mqtt, addresses))
        {
            var open = addresses.Where(a => !ListenerAddresses.IsLoopbackUrl(a)).ToList();
            throw new OptionsValidationException(MqttBrokerOptions.SectionName, typeof(MqttBrokerOptions),
                [MqttBrokerOptionsValidator.AnonymousOnNetwork($"bound to {string.Join(", ", open)}")]);
        }

        return Task.CompletedTask;
    }

    public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StartingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
}

internal sealed class MqttBrokerHealthCheck(MqttBroker broker) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var data = new Dictionary<string, object>
        {
            ["connectedClients"] = broker.ConnectedClients,
            ["retainedMessages"] = broker.RetainedMessages,
            ["messagesReceived"] = broker.Metrics.MessagesReceivedTotal,
            ["messagesSent"] = broker.Metrics.MessagesSentTotal,
            ["messagesDropped"] = broker.Metrics.DroppedTotal,
        };
        return Task.FromResult(HealthCheckResult.Healthy("MQTT broker running", data));
    }
}

using Microsoft.Extensions.Options;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using OpenTelemetry.Resources;
using Saito.Ingestion.Pipeline;
using Saito.Mqtt.Broker;
using Saito.Storage.Archive;

namespace Saito.Server.Metrics;

/// <summary>
/// OpenTelemetry metrics for the server: Saito's meters and the runtime's, a Prometheus scrape endpoint at
/// <see cref="Path"/> behind <see cref="MetricsAccess"/>, and OTLP export when <c>Metrics:Otlp:Endpoint</c> is set.
/// docs/metrics.md lists the instruments.
/// </summary>
public static class MetricsHosting
{
    public const string Path = "/metrics";

    /// <summary>The meters exported: Saito's three and the .NET runtime's (GC, thread pool, exceptions).</summary>
    public static IReadOnlyList<string> Meters { get; } =
        [IngestionMetrics.MeterName, MqttBrokerMetrics.MeterName, ArchiverMetrics.MeterName, "System.Runtime"];

    public static IHostApplicationBuilder AddSaitoMetrics(this IHostApplicationBuilder builder)
    {
        ArgumentNullException.ThrowIfNull(builder);
        var services = builder.Services;
        services.AddOptions<MetricsOptions>().BindConfiguration(MetricsOptions.SectionName).ValidateOnStart();
        services.AddSingleton<IValidateOptions<MetricsOptions>, MetricsOptionsValidator>();
        var options = builder.Configuration.GetSection(MetricsOptions.SectionName).Get<MetricsOptions>() ?? new MetricsOptions();
        if (!options.Enabled)
        {
            return builder;
        }

        MetricsAccess.AddPolicy(services);
        services.AddHostedService<ArchiverLagSampler>();
        services.AddOpenTelemetry()
            .ConfigureResource(r => r.AddService("saito", serviceVersion: typeof(MetricsHosting).Assembly.GetName().Version?.ToString()))
            .WithMetrics(metrics =>
            {
                metrics.AddMeter([.. Meters]);
                metrics.AddPrometheusExporter();
                var otlp = options.Otlp;
                // An endpoint that is not a URL is reported by MetricsOptionsValidator when Saito starts.
                if (!string.IsNullOrWhiteSpace(otlp.Endpoint) && Uri.TryCreate(otlp.Endpoint, UriKind.Absolute, out var endpoint))
                {
                    metrics.AddOtlpExporter((exporter, reader) =>
                    {
                        exporter.Endpoint = endpoint;
                        exporter.Protocol = otlp.Protocol == "http/protobuf" ? OtlpExportProtocol.HttpProtobuf : OtlpExportProtocol.Grpc;
                        reader.PeriodicExportingMetricReaderOptions.ExportIntervalMilliseconds = otlp.ExportIntervalSeconds * 1000;
                    });
                }
            });
        return builder;
    }

    /// <summary>Maps <see cref="Path"/> when metrics are on (after <c>MapSaitoApi</c>, which adds authentication).</summary>
    public static WebApplication MapSaitoMetrics(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        if (app.Services.GetRequiredService<IOptions<MetricsOptions>>().Value.Enabled)
        {
            app.MapPrometheusScrapingEndpoint(Path).RequireAuthorization(MetricsAccess.Policy);
        }

        return app;
    }
}

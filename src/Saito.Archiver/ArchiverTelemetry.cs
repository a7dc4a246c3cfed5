using Microsoft.Extensions.Configuration;
using OpenTelemetry;
using OpenTelemetry.Exporter;
using OpenTelemetry.Metrics;
using Saito.Storage.Archive;

namespace Saito.Archiver;

/// <summary>
/// saito-archiver runs for minutes from a timer and has no endpoint to scrape: when <c>Metrics:Otlp:Endpoint</c> is set
/// (the server's setting, read from the same configuration), its <c>Saito.Archiver</c> instruments are pushed to that
/// OpenTelemetry collector during the run and once more when it ends. Unset: nothing is exported.
/// </summary>
internal static class ArchiverTelemetry
{
    private static readonly string[] Protocols = ["grpc", "http/protobuf"];

    /// <summary>The provider to dispose when the run ends (which exports what is left); null when OTLP is not configured.</summary>
    public static MeterProvider? Start(IConfiguration configuration, out string? failure)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        failure = null;
        string? endpoint = configuration["Metrics:Otlp:Endpoint"];
        if (string.IsNullOrWhiteSpace(endpoint) || configuration["Metrics:Enabled"] is { } enabled && bool.TryParse(enabled, out bool on) && !on)
        {
            return null;
        }

        string protocol = configuration["Metrics:Otlp:Protocol"] ?? "grpc";
        if (!Uri.TryCreate(endpoint, UriKind.Absolute, out var uri) || uri.Scheme is not ("http" or "https"))
        {
            failure = $"Metrics:Otlp:Endpoint must be an absolute http or https URL, such as http://collector:4317 (was '{endpoint}').";
            return null;
        }

        if (!Protocols.Contains(protocol, StringComparer.Ordinal))
        {
            failure = $"Metrics:Otlp:Protocol must be one of {string.Join(", ", Protocols)} (was '{protocol}').";
            return null;
        }

        int seconds = int.TryParse(configuration["Metrics:Otlp:ExportIntervalSeconds"], out int interval) && interval is >= 1 and <= 3600 ? interval : 15;
        return Sdk.CreateMeterProviderBuilder()
            .AddMeter(ArchiverMetrics.MeterName)
            .AddOtlpExporter((exporter, reader) =>
            {
                exporter.Endpoint = uri;
                exporter.Protocol = protocol == "http/protobuf" ? OtlpExportProtocol.HttpProtobuf : OtlpExportProtocol.Grpc;
                reader.PeriodicExportingMetricReaderOptions.ExportIntervalMilliseconds = seconds * 1000;
            })
            .Build();
    }
}

using Microsoft.Extensions.Options;

namespace Saito.Server.Metrics;

/// <summary>
/// The <c>Metrics</c> section: OpenTelemetry metrics from the meters <c>Saito.Ingestion</c>, <c>Saito.Mqtt</c> and
/// <c>Saito.Archiver</c> (and the runtime's), scraped at <c>/metrics</c> (Prometheus) and, when an endpoint is set,
/// pushed over OTLP. Who may scrape: see <see cref="MetricsAccess"/> and docs/metrics.md.
/// </summary>
public sealed class MetricsOptions
{
    public const string SectionName = "Metrics";

    /// <summary>The shortest scrape token accepted: it is a password that never changes hands by a person.</summary>
    public const int MinScrapeTokenLength = 24;

    /// <summary>Off: no OpenTelemetry at all, no <c>/metrics</c> (404); the instruments then cost a flag check.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// A static token Prometheus sends as <c>Authorization: Bearer &lt;token&gt;</c> (its <c>authorization</c> setting),
    /// compared in constant time; unset: no token works, only signed-in admin or ops staff (and loopback).
    /// </summary>
    public string? ScrapeToken { get; set; }

    /// <summary>Anonymous scrapes from this machine (loopback, no forwarding headers); default true, as <c>/scalar</c> and <c>/health</c>'s details.</summary>
    public bool AllowLoopback { get; set; } = true;

    /// <summary>How often the oldest hot reading of each kind is looked up for <c>saito.archiver.lag</c> (a <c>MIN(ts)</c> per hot table).</summary>
    public int ArchiverLagIntervalSeconds { get; set; } = 60;

    public OtlpMetricsOptions Otlp { get; set; } = new();
}

/// <summary><c>Metrics:Otlp</c>: push metrics to an OpenTelemetry collector.</summary>
public sealed class OtlpMetricsOptions
{
    /// <summary>The collector (<c>http://collector:4317</c> for gRPC, <c>http://collector:4318/v1/metrics</c> for HTTP); unset: no OTLP export.</summary>
    public string? Endpoint { get; set; }

    /// <summary><c>grpc</c> (default) or <c>http/protobuf</c>.</summary>
    public string Protocol { get; set; } = "grpc";

    /// <summary>How often metrics are pushed.</summary>
    public int ExportIntervalSeconds { get; set; } = 15;
}

internal sealed class MetricsOptionsValidator : IValidateOptions<MetricsOptions>
{
    public static readonly string[] Protocols = ["grpc", "http/protobuf"];

    public ValidateOptionsResult Validate(string? name, MetricsOptions options)
    {
        var failures = new List<string>();
        if (options.ScrapeToken is { } token)
        {
            if (token.Length < MetricsOptions.MinScrapeTokenLength)
            {
                failures.Add($"Metrics:ScrapeToken must be at least {MetricsOptions.MinScrapeTokenLength} characters (was {token.Length}); make one with `openssl rand -base64 32`, or leave it unset.");
            }

            if (token.Any(c => char.IsWhiteSpace(c) || char.IsControl(c)))
            {
                failures.Add("Metrics:ScrapeToken must not contain spaces or control characters (it travels in an HTTP header).");
            }
        }

        if (options.ArchiverLagIntervalSeconds is < 5 or > 24 * 3600)
        {
            failures.Add($"Metrics:ArchiverLagIntervalSeconds must be from 5 to 86400 (was {options.ArchiverLagIntervalSeconds}).");
        }

        var otlp = options.Otlp;
        if (!string.IsNullOrWhiteSpace(otlp.Endpoint)
            && !(Uri.TryCreate(otlp.Endpoint, UriKind.Absolute, out var endpoint) && endpoint.Scheme is "http" or "https"))
        {
            failures.Add($"Metrics:Otlp:Endpoint must be an absolute http or https URL, such as http://collector:4317 (was '{otlp.Endpoint}').");
        }

        if (!Protocols.Contains(otlp.Protocol, StringComparer.Ordinal))
        {
            failures.Add($"Metrics:Otlp:Protocol must be one of {string.Join(", ", Protocols)} (was '{otlp.Protocol}').");
        }

        if (otlp.ExportIntervalSeconds is < 1 or > 3600)
        {
            failures.Add($"Metrics:Otlp:ExportIntervalSeconds must be from 1 to 3600 (was {otlp.ExportIntervalSeconds}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

using Microsoft.Extensions.Options;

namespace Saito.Server.Dashboard;

/// <summary>The <c>Dashboard</c> section: the live class pages and what feeds them (docs/dashboard.md).</summary>
public sealed class DashboardOptions
{
    public const string SectionName = "Dashboard";

    /// <summary>The channel of a location garment that is the head tag (sway is measured from it).</summary>
    public int HeadChannel { get; set; }

    /// <summary>Whether aides see blood pressure. Off: the server never sends it to an aide (live tiles, charts, readings API).</summary>
    public bool AidesSeeBloodPressure { get; set; }

    /// <summary>Longest wait between a committed reading and the tiles that show it being pushed (milliseconds).</summary>
    public int PushIntervalMilliseconds { get; set; } = 100;

    /// <summary>How often rosters, assignments, check-ins and sessions are read again from the registry (seconds); changes made through Saito are picked up at once.</summary>
    public int RefreshSeconds { get; set; } = 15;

    /// <summary>
    /// Committed readings waiting for the live view, at most. Past this the live view skips readings (counted, logged,
    /// shown on the dashboards as "live view behind") rather than slow ingestion; the readings are stored regardless.
    /// A batch that arrives while nothing waits is taken even if it alone is larger.
    /// </summary>
    public int MaxBacklogReadings { get; set; } = 1_000_000;

    /// <summary>Dashboards one user may have open at once (each is a SignalR connection watching a class).</summary>
    public int MaxConnectionsPerUser { get; set; } = 20;

    /// <summary>
    /// A tile's vital signs older than this (seconds) grey out and show their age, so a value that stopped coming never
    /// looks live; 2 to 3600. Wristbands send every second or two: the default allows a few missed.
    /// </summary>
    public int StaleAfterSeconds { get; set; } = 10;

    /// <summary>Points of a student chart, at most, per series (the server downsamples to this); 100 to 10,000.</summary>
    public int MaxChartPoints { get; set; } = 2_000;
}

public sealed class DashboardOptionsValidator : IValidateOptions<DashboardOptions>
{
    public ValidateOptionsResult Validate(string? name, DashboardOptions options)
    {
        var failures = new List<string>();
        if (options.HeadChannel is < 0 or > 65_535)
        {
            failures.Add("Dashboard:HeadChannel must be a channel number from 0 to 65535.");
        }

        if (options.PushIntervalMilliseconds is < 10 or > 5_000)
        {
            failures.Add("Dashboard:PushIntervalMilliseconds must be from 10 to 5000.");
        }

        if (options.RefreshSeconds is < 1 or > 3_600)
        {
            failures.Add("Dashboard:RefreshSeconds must be from 1 to 3600.");
        }

        if (options.MaxBacklogReadings is < 1_000 or > 100_000_000)
        {
            failures.Add("Dashboard:MaxBacklogReadings must be from 1000 to 100000000.");
        }

        if (options.MaxConnectionsPerUser is < 1 or > 1_000)
        {
            failures.Add("Dashboard:MaxConnectionsPerUser must be from 1 to 1000.");
        }

        if (options.StaleAfterSeconds is < 2 or > 3_600)
        {
            failures.Add("Dashboard:StaleAfterSeconds must be from 2 to 3600.");
        }

        if (options.MaxChartPoints is < 100 or > StudentCharts.MaxChartPointsLimit)
        {
            failures.Add($"Dashboard:MaxChartPoints must be from 100 to {StudentCharts.MaxChartPointsLimit} (a chart's series is one downsample of at most {StudentCharts.MaxChartPointsLimit} buckets; was {options.MaxChartPoints}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

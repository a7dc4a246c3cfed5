using Microsoft.Extensions.Options;
using Saito.Payloads;
using Saito.Readings.Configuration;

namespace Saito.Ingestion;

/// <summary>The <c>Ingestion</c> section: what Saito accepts as a reading (see docs/protocol.md).</summary>
public sealed class IngestionOptions : PayloadLimits
{
    public const string SectionName = "Ingestion";

    /// <summary>First topic level: readings arrive on <c>{prefix}/{hub}/{device}/{kind}</c>.</summary>
    public string TopicPrefix { get; set; } = "saito";

    /// <summary>
    /// New device serials one hub may register in any hour (a sliding window); past it, a message from an unknown
    /// serial on that hub is dead-lettered (<c>too-many-new-devices</c>) and known devices keep flowing. 0 turns the
    /// limit off (for a first import of a large fleet through one hub).
    /// </summary>
    public int MaxNewDevicesPerHubPerHour { get; set; } = 1000;

    /// <summary>
    /// While some hub has a site: how often every device's hub is read again from the database (a move by staff
    /// through another Saito instance counts here within this time), and how often, at most, one device's hub is read
    /// again when a hub of another site sends for it; a hub forging messages for many devices costs at most one query per
    /// device per this many seconds.
    /// </summary>
    public int DeviceHubRecheckSeconds { get; set; } = 30;

    /// <summary>How often the times devices were last heard from are written to the device table (<c>last_seen</c>).</summary>
    public int LastSeenFlushSeconds { get; set; } = 5;
}

public sealed class IngestionOptionsValidator : IValidateOptions<IngestionOptions>
{
    public ValidateOptionsResult Validate(string? name, IngestionOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (string.IsNullOrEmpty(options.TopicPrefix) || options.TopicPrefix.AsSpan().IndexOfAny("/+#") >= 0)
        {
            failures.Add($"Ingestion:TopicPrefix must be one topic level without '/', '+' or '#' (was '{options.TopicPrefix}').");
        }

        OptionFailures.Range(failures, "Ingestion:MaxPayloadBytes", options.MaxPayloadBytes, 64, 16 * 1024 * 1024);

        OptionFailures.Range(failures, "Ingestion:MaxReadingsPerMessage", options.MaxReadingsPerMessage, 1, 1_000_000);

        OptionFailures.Range(failures, "Ingestion:MaxDeadLettersPerMessage", options.MaxDeadLettersPerMessage, 1, 1_000_000);

        OptionFailures.Range(failures, "Ingestion:MaxNewDevicesPerHubPerHour", options.MaxNewDevicesPerHubPerHour, 0, 1_000_000, minMeaning: "no limit");

        OptionFailures.Range(failures, "Ingestion:DeviceHubRecheckSeconds", options.DeviceHubRecheckSeconds, 1, 86_400);

        options.AddWindowFailures(failures);

        OptionFailures.Range(failures, "Ingestion:LastSeenFlushSeconds", options.LastSeenFlushSeconds, 1, 3600);

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

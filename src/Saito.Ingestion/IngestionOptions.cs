using Microsoft.Extensions.Options;
using Saito.Payloads;

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

        if (options.MaxPayloadBytes is < 64 or > 16 * 1024 * 1024)
        {
            failures.Add($"Ingestion:MaxPayloadBytes must be between 64 and 16,777,216 (was {options.MaxPayloadBytes}).");
        }

        if (options.MaxReadingsPerMessage is < 1 or > 1_000_000)
        {
            failures.Add($"Ingestion:MaxReadingsPerMessage must be between 1 and 1,000,000 (was {options.MaxReadingsPerMessage}).");
        }

        if (options.MaxDeadLettersPerMessage is < 1 or > 1_000_000)
        {
            failures.Add($"Ingestion:MaxDeadLettersPerMessage must be between 1 and 1,000,000 (was {options.MaxDeadLettersPerMessage}).");
        }

        if (options.MaxNewDevicesPerHubPerHour is < 0 or > 1_000_000)
        {
            failures.Add($"Ingestion:MaxNewDevicesPerHubPerHour must be between 0 (no limit) and 1,000,000 (was {options.MaxNewDevicesPerHubPerHour}).");
        }

        if (options.DeviceHubRecheckSeconds is < 1 or > 86_400)
        {
            failures.Add($"Ingestion:DeviceHubRecheckSeconds must be between 1 and 86,400 (was {options.DeviceHubRecheckSeconds}).");
        }

        options.AddWindowFailures(failures);

        if (options.LastSeenFlushSeconds is < 1 or > 3600)
        {
            failures.Add($"Ingestion:LastSeenFlushSeconds must be between 1 and 3,600 (was {options.LastSeenFlushSeconds}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

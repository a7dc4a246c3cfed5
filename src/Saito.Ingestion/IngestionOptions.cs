using Microsoft.Extensions.Options;

namespace Saito.Ingestion;

/// <summary>The <c>Ingestion</c> section: what Saito accepts as a reading (see docs/protocol.md).</summary>
public sealed class IngestionOptions
{
    public const string SectionName = "Ingestion";

    /// <summary>First topic level: readings arrive on <c>{prefix}/{hub}/{device}/{kind}</c>.</summary>
    public string TopicPrefix { get; set; } = "saito";

    /// <summary>Largest payload parsed, in bytes; a larger one is dead-lettered whole (truncated) without parsing.</summary>
    public int MaxPayloadBytes { get; set; } = 256 * 1024;

    /// <summary>Most readings taken from one message; the rest are dead-lettered.</summary>
    public int MaxReadingsPerMessage { get; set; } = 10_000;

    /// <summary>
    /// Most dead letters written one by one for one message; past it, the rest of that message's rejections become
    /// one <c>too-many-rejections</c> dead letter that counts them, names the most common reasons and holds the whole
    /// message. Good readings in the message are stored either way.
    /// </summary>
    public int MaxDeadLettersPerMessage { get; set; } = 100;

    /// <summary>
    /// New device serials one hub may register in any hour (a sliding window); past it, a message from an unknown
    /// serial on that hub is dead-lettered (<c>too-many-new-devices</c>) and known devices keep flowing. 0 turns the
    /// limit off (for a first import of a large fleet through one hub).
    /// </summary>
    public int MaxNewDevicesPerHubPerHour { get; set; } = 1000;

    /// <summary>A reading stamped further ahead of Saito's clock than this is rejected (hub clock wrong).</summary>
    public int MaxFutureSkewSeconds { get; set; } = 300;

    /// <summary>A reading older than this is rejected (a hub replaying a stale buffer, or a clock at 1970).</summary>
    public int MaxAgeDays { get; set; } = 30;
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

        if (options.MaxFutureSkewSeconds is < 0 or > 86_400)
        {
            failures.Add($"Ingestion:MaxFutureSkewSeconds must be between 0 and 86,400 (was {options.MaxFutureSkewSeconds}).");
        }

        if (options.MaxAgeDays is < 1 or > 36_500)
        {
            failures.Add($"Ingestion:MaxAgeDays must be between 1 and 36,500 (was {options.MaxAgeDays}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

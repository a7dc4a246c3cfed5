using Saito.Readings.Configuration;

namespace Saito.Payloads;

/// <summary>
/// How much of a message the parsers take: size, readings, dead letters, and how far from Saito's clock a reading's
/// time may be. Configured as part of the <c>Ingestion</c> section (IngestionOptions derives from this).
/// </summary>
public class PayloadLimits
{
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

    /// <summary>A reading stamped further ahead of Saito's clock than this is rejected (hub clock wrong).</summary>
    public int MaxFutureSkewSeconds { get; set; } = 300;

    /// <summary>A reading older than this is rejected (a hub replaying a stale buffer, or a clock at 1970).</summary>
    public int MaxAgeDays { get; set; } = 30;

    /// <summary>
    /// The ranges of the reading window (<see cref="MaxFutureSkewSeconds"/>, <see cref="MaxAgeDays"/>), one rule for the
    /// server's validator and the archiver's restore, which reads the same Ingestion section.
    /// </summary>
    public void AddWindowFailures(ICollection<string> failures)
    {
        ArgumentNullException.ThrowIfNull(failures);
        OptionFailures.Range(failures, "Ingestion:MaxFutureSkewSeconds", MaxFutureSkewSeconds, 0, 86_400);

        OptionFailures.Range(failures, "Ingestion:MaxAgeDays", MaxAgeDays, 1, 36_500);
    }
}

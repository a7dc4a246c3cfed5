using Microsoft.Extensions.Options;
using Saito.Readings.Configuration;

namespace Saito.Registry.CheckIns;

/// <summary>
/// The <c>CheckIns</c> section: how recent a fingerprint reader's check-in must be. A hub may send for any reader, and
/// an arrival emails the family, so a reader's check-in is taken only about now: one stamped more than
/// <see cref="ReaderMaxAgeSeconds"/> before Saito records it, or more than <see cref="ReaderMaxAheadSeconds"/> after,
/// is a <c>bad-check-in</c> dead letter, recorded nowhere and told to no one (issue 32, item 11). Staff check in by hand
/// (<c>POST /api/check-ins</c>) at any time.
/// </summary>
public sealed class CheckInOptions
{
    public const string SectionName = "CheckIns";

    /// <summary>How old a reader's check-in or check-out may be when it is recorded (a hub catching up after a short outage).</summary>
    public int ReaderMaxAgeSeconds { get; set; } = 600;

    /// <summary>How far ahead of Saito's clock a reader's check-in may be stamped (the reader's clock running fast).</summary>
    public int ReaderMaxAheadSeconds { get; set; } = 60;
}

internal sealed class CheckInOptionsValidator : IValidateOptions<CheckInOptions>
{
    public ValidateOptionsResult Validate(string? name, CheckInOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        OptionFailures.Range(failures, "CheckIns:ReaderMaxAgeSeconds", options.ReaderMaxAgeSeconds, 10, 86_400);

        OptionFailures.Range(failures, "CheckIns:ReaderMaxAheadSeconds", options.ReaderMaxAheadSeconds, 0, 3600);

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

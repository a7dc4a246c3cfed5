namespace Saito.Live.Analytics;

/// <summary>
/// The <c>Dashboard:Sway</c> section: how head sway is measured from the head location tag (docs/sway-and-mats.md).
/// </summary>
public sealed class SwayOptions
{
    public const string SectionName = "Dashboard:Sway";

    /// <summary>Seconds at the start of each phase over which the ideal (median) head position is taken. 1 to 600.</summary>
    public double SettlingSeconds { get; set; } = 20;

    /// <summary>Seconds of the rolling window the sway figures are taken over, ending at the latest sample. 1 to 600.</summary>
    public double WindowSeconds { get; set; } = 10;

    /// <summary>
    /// When posture is unknown, a head height this far (metres) from the phase's reference height, held for
    /// <see cref="HeightChangeSeconds"/>, starts a new phase. 0.05 to 2.
    /// </summary>
    public double HeightChangeMetres { get; set; } = 0.25;

    /// <summary>How long (seconds) a height change must hold to start a new phase. 0.1 to 60.</summary>
    public double HeightChangeSeconds { get; set; } = 2;

    /// <summary>
    /// A gap between head samples longer than this (seconds) empties the window (and restarts settling if the phase
    /// was still settling). 0.1 to 3,600.
    /// </summary>
    public double MaxGapSeconds { get; set; } = 5;

    /// <summary>
    /// Most samples kept in the window, and in the settling window. Past it the window drops its oldest samples (it
    /// then covers less than <see cref="WindowSeconds"/>) and settling ignores later samples. 16 to 1,000,000.
    /// </summary>
    public int MaxSamplesPerWindow { get; set; } = 4096;

    /// <summary>Readable errors, each naming its setting; empty when the options are usable.</summary>
    public IEnumerable<string> Validate()
    {
        var errors = new List<string>();
        OptionChecks.Range(errors, SectionName, nameof(SettlingSeconds), SettlingSeconds, 1, 600);
        OptionChecks.Range(errors, SectionName, nameof(WindowSeconds), WindowSeconds, 1, 600);
        OptionChecks.Range(errors, SectionName, nameof(HeightChangeMetres), HeightChangeMetres, 0.05, 2);
        OptionChecks.Range(errors, SectionName, nameof(HeightChangeSeconds), HeightChangeSeconds, 0.1, 60);
        OptionChecks.Range(errors, SectionName, nameof(MaxGapSeconds), MaxGapSeconds, 0.1, 3600);
        OptionChecks.Range(errors, SectionName, nameof(MaxSamplesPerWindow), MaxSamplesPerWindow, 16, 1_000_000);
        return errors;
    }
}

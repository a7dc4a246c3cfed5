namespace Saito.Live.Analytics;

/// <summary>A head position in the room, metres (the location tag's x, y, z; z is height).</summary>
public readonly record struct HeadPosition(double X, double Y, double Z);

/// <summary>
/// Sway figures over one window, all from the ideal position: distances in metres, speed in metres per second
/// (path length over the window divided by the time it spans; 0 with fewer than two samples).
/// </summary>
public readonly record struct SwayFigures(
    double MeanDistanceMetres,
    double RmsDistanceMetres,
    double MaxDistanceMetres,
    double MeanSpeedMetresPerSecond);

/// <summary>
/// One student's head sway as of the latest sample.
/// <see cref="Horizontal"/> uses x and y only (the figure shown); <see cref="ThreeD"/> adds height.
/// While <see cref="Settling"/>, <see cref="Ideal"/> and <see cref="WindowStartUtc"/> are null, the sample count is 0
/// and the figures are 0.
/// </summary>
/// <param name="Posture">The phase's posture (as the mat said when the phase began; Unknown for a phase found by head height).</param>
/// <param name="PhaseStartedUtc">When the phase began (its first sample).</param>
/// <param name="Settling">True until the settling window has passed and the ideal position is known.</param>
/// <param name="Ideal">The component-wise median over the settling window.</param>
/// <param name="SampleCount">Samples in the window.</param>
/// <param name="WindowStartUtc">The oldest sample in the window.</param>
/// <param name="LastSampleUtc">The newest sample taken (the window ends here).</param>
/// <param name="Horizontal">Figures from x and y.</param>
/// <param name="ThreeD">Figures from x, y and z.</param>
public sealed record SwaySnapshot(
    Posture Posture,
    DateTime PhaseStartedUtc,
    bool Settling,
    HeadPosition? Ideal,
    int SampleCount,
    DateTime? WindowStartUtc,
    DateTime LastSampleUtc,
    SwayFigures Horizontal,
    SwayFigures ThreeD);

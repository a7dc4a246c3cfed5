namespace Saito.Live.Analytics;

/// <summary>One seat mat as of its latest complete frame. Positions are metres from the corner of cell 0.</summary>
/// <param name="FrameUtc">The frame's time (the timestamp its cells share).</param>
/// <param name="Occupied">Total pressure at or above <see cref="MatOptions.OccupiedKpa"/>.</param>
/// <param name="TotalKpa">Sum of the cells' pressures, kPa.</param>
/// <param name="CopX">Centre of pressure across the columns, metres; null when vacant.</param>
/// <param name="CopY">Centre of pressure along the rows, metres; null when vacant.</param>
/// <param name="RestlessnessMps">
/// Centre-of-pressure path length per second over the window, m/s, from pairs of consecutive occupied frames no
/// further apart than <see cref="MatOptions.MaxGapSeconds"/>; null when there is no such pair.
/// </param>
/// <param name="OccupancyChanges">How often occupancy flipped between consecutive frames in the window.</param>
/// <param name="FramesInWindow">Frames in the window (including this one).</param>
/// <param name="OccupiedSince">When the seat became occupied (the first occupied frame of this run); null when vacant.</param>
/// <param name="VacantSince">When the seat became vacant (the first vacant frame of this run); null when occupied.</param>
public sealed record MatSnapshot(
    DateTime FrameUtc,
    bool Occupied,
    double TotalKpa,
    double? CopX,
    double? CopY,
    double? RestlessnessMps,
    int OccupancyChanges,
    int FramesInWindow,
    DateTime? OccupiedSince,
    DateTime? VacantSince);

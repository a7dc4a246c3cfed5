namespace Saito.Live.Analytics;

/// <summary>
/// The <c>Dashboard:Mat</c> section: the seat pressure mats' layout and how occupancy, centre of pressure and
/// restlessness are taken (docs/sway-and-mats.md).
/// </summary>
public sealed class MatOptions
{
    public const string SectionName = "Dashboard:Mat";

    /// <summary>Cells per row: channel c sits in column c % Columns, row c / Columns. 1 to 256.</summary>
    public int Columns { get; set; } = 4;

    /// <summary>Cells on a mat: channels 0 to Cells - 1 (others are ignored). 1 to 65,536.</summary>
    public int Cells { get; set; } = 16;

    /// <summary>Cell pitch in metres (centre to centre, the same across and along). 0.001 to 1.</summary>
    public double CellMetres { get; set; } = 0.1;

    /// <summary>The seat is occupied when the frame's total pressure (sum over cells, kPa) is at least this. 0.01 to 10,000.</summary>
    public double OccupiedKpa { get; set; } = 2.0;

    /// <summary>Seconds of the rolling window restlessness is taken over, ending at the latest frame. 1 to 600.</summary>
    public double WindowSeconds { get; set; } = 10;

    /// <summary>
    /// A cell missing from a frame keeps its last value if that was read at most this many seconds before the frame,
    /// else counts as 0 kPa. 0 (a missing cell is always 0) to 60.
    /// </summary>
    public double MaxCellAgeSeconds { get; set; } = 2;

    /// <summary>Consecutive frames further apart than this (seconds) add no centre-of-pressure path. 0.1 to 3,600.</summary>
    public double MaxGapSeconds { get; set; } = 5;

    /// <summary>Most frames kept in the window; past it the oldest are dropped (the window then covers less time). 16 to 1,000,000.</summary>
    public int MaxFramesPerWindow { get; set; } = 4096;

    /// <summary>Readable errors, each naming its setting; empty when the options are usable.</summary>
    public IEnumerable<string> Validate()
    {
        var errors = new List<string>();
        OptionChecks.Range(errors, SectionName, nameof(Columns), Columns, 1, 256);
        OptionChecks.Range(errors, SectionName, nameof(Cells), Cells, 1, 65_536);
        OptionChecks.Range(errors, SectionName, nameof(CellMetres), CellMetres, 0.001, 1);
        OptionChecks.Range(errors, SectionName, nameof(OccupiedKpa), OccupiedKpa, 0.01, 10_000);
        OptionChecks.Range(errors, SectionName, nameof(WindowSeconds), WindowSeconds, 1, 600);
        OptionChecks.Range(errors, SectionName, nameof(MaxCellAgeSeconds), MaxCellAgeSeconds, 0, 60);
        OptionChecks.Range(errors, SectionName, nameof(MaxGapSeconds), MaxGapSeconds, 0.1, 3600);
        OptionChecks.Range(errors, SectionName, nameof(MaxFramesPerWindow), MaxFramesPerWindow, 16, 1_000_000);
        return errors;
    }
}

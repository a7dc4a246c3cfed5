namespace Saito.Live.Alerts;

/// <summary>Everything the engine knows about one watched student. Mutable, owned by <see cref="AlertEngine"/>'s one thread.</summary>
internal sealed class StudentState
{
    public StudentState(int ownerId)
    {
        OwnerId = ownerId;
        for (var i = 0; i < Rules.Length; i++)
        {
            Rules[i] = new RuleState(this, (AlertKind)i);
        }
    }

    public readonly int OwnerId;
    public readonly RuleState[] Rules = new RuleState[AlertKinds.Count];

    // Limits resolved from the options and the clinician's thresholds (SetStudent).
    public double? ClinicianBaseline;
    public double Factor;
    public double HeartRateMax;
    public double HeartRateMin;
    public double OverheatCelsius;
    public double OverheatWarnCelsius;
    public TimeSpan OffSeat;
    public bool HasSeatMat;

    public bool HasSession;
    public DateTime SessionStart;
    public DateTime SessionEnd;

    public bool CheckedIn;
    public bool EverCheckedIn;
    public DateTime CheckedInAt;

    /// <summary>Assigned device → the newest non-late reading time heard from it (MinValue: never).</summary>
    public readonly Dictionary<int, DateTime> Devices = [];

    public DateTime LastHeartAt;
    public DateTime LastTemperatureAt;
    public DateTime LastSeatAt;
    public bool? SeatOccupied;
    public DateTime SeatChangedAt;

    public double? LearnedBaseline;
    public DateTime BaselineStartedAt;
    public readonly List<double> BaselineSamples = [];
    public readonly TemperatureTrend Trend = new();
    /// <summary>The last skin-temperature slope, °C/min (0 until the trend window is covered), for the alert's text.</summary>
    public double Slope;

    public double? Baseline => ClinicianBaseline ?? LearnedBaseline;

    public bool InSession(DateTime t) => HasSession && t >= SessionStart && t < SessionEnd;

    /// <summary>Forgets what the last session taught: baseline, signal order, trend, timers.</summary>
    public void ResetForSession()
    {
        LearnedBaseline = null;
        BaselineStartedAt = default;
        BaselineSamples.Clear();
        Trend.Reset();
        LastHeartAt = LastTemperatureAt = LastSeatAt = default;
        SeatOccupied = null;
        EverCheckedIn = CheckedIn;
        foreach (var rule in Rules)
        {
            rule.ResetTimers();
        }
    }
}

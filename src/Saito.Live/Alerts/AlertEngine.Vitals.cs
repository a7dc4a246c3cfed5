namespace Saito.Live.Alerts;

// The reading-driven rules: heart rate (relative and absolute) and skin temperature. Timed in reading time.
public sealed partial class AlertEngine
{
    private readonly TimeSpan _tachycardiaOnset;
    private readonly TimeSpan _heartRateMaxOnset;
    private readonly TimeSpan _heartRateMinOnset;
    private readonly TimeSpan _overheatOnset;
    private readonly TimeSpan _trendWindow;

    /// <summary>
    /// A committed biosensor reading; either value may be missing (a missing value neither confirms nor clears).
    /// Ignored (and counted) when late, outside the session, or not newer than the newest evaluated for that
    /// student and signal. It also tells the silent-sensor rule that <paramref name="deviceId"/> is alive.
    /// </summary>
    public void ObserveHeart(int ownerId, int deviceId, DateTime timestampUtc, double? heartRate, double? skinTemperature, DateTime now)
    {
        if (!Admit(ownerId, timestampUtc, now, out var s))
        {
            return;
        }
        Heard(s, deviceId, timestampUtc, now);
        var heart = Accept(heartRate, ref s.LastHeartAt, timestampUtc);
        var temperature = Accept(skinTemperature, ref s.LastTemperatureAt, timestampUtc);
        if (heart == Signal.Accepted)
        {
            EvaluateHeartRate(s, timestampUtc, heartRate.GetValueOrDefault(), now);
        }
        if (temperature == Signal.Accepted)
        {
            EvaluateTemperature(s, timestampUtc, skinTemperature.GetValueOrDefault(), now);
        }
        if (heart != Signal.Accepted && temperature != Signal.Accepted && (heart == Signal.OutOfOrder || temperature == Signal.OutOfOrder))
        {
            _outOfOrder++;
        }
        else
        {
            _evaluated++;
        }
    }

    private enum Signal
    {
        Absent = 0,
        OutOfOrder = 1,
        Accepted = 2,
    }

    /// <summary>A value is evaluated only when present, finite and newer than the newest of its signal (then it becomes the newest).</summary>
    private static Signal Accept(double? value, ref DateTime newest, DateTime timestamp)
    {
        if (value is not { } v || !double.IsFinite(v))
        {
            return Signal.Absent;
        }
        if (timestamp <= newest)
        {
            return Signal.OutOfOrder;
        }
        newest = timestamp;
        return Signal.Accepted;
    }

    private void EvaluateHeartRate(StudentState s, DateTime t, double hr, DateTime now)
    {
        if (s.ClinicianBaseline is null && s.LearnedBaseline is null)
        {
            LearnBaseline(s, t, hr);
        }
        var margin = _options.HeartRateMarginBpm;
        Apply(s.Rules[(int)AlertKind.HeartRateHigh], t, now, hr, hr >= s.HeartRateMax, hr < s.HeartRateMax - margin, _heartRateMaxOnset);
        Apply(s.Rules[(int)AlertKind.Bradycardia], t, now, hr, hr <= s.HeartRateMin, hr > s.HeartRateMin + margin, _heartRateMinOnset);
        if (s.Baseline is { } baseline)
        {
            var limit = s.Factor * baseline;
            Apply(s.Rules[(int)AlertKind.Tachycardia], t, now, hr, hr >= limit, hr < limit - margin, _tachycardiaOnset);
        }
    }

    /// <summary>The median of the heart rates stamped in the first BaselineSeconds after the session's first one.</summary>
    private void LearnBaseline(StudentState s, DateTime t, double hr)
    {
        if (s.BaselineSamples.Count == 0)
        {
            s.BaselineStartedAt = t;
        }
        if (t - s.BaselineStartedAt < _baselineSpan)
        {
            s.BaselineSamples.Add(hr);
            return;
        }
        var samples = s.BaselineSamples;
        samples.Sort();
        var middle = samples.Count / 2;
        s.LearnedBaseline = samples.Count % 2 == 1 ? samples[middle] : (samples[middle - 1] + samples[middle]) / 2;
        samples.Clear();
        samples.Capacity = 0;
    }

    private void EvaluateTemperature(StudentState s, DateTime t, double celsius, DateTime now)
    {
        s.Trend.Add(t, celsius, _trendWindow);
        var hasSlope = s.Trend.TrySlopePerMinute(t, _trendWindow, out var slope);
        var rise = _options.OverheatRiseCelsiusPerMinute;
        var margin = _options.OverheatMarginCelsius;
        var level = celsius >= s.OverheatCelsius;
        var rising = hasSlope && celsius >= s.OverheatWarnCelsius && slope >= rise;
        var absent = celsius <= s.OverheatCelsius - margin
            && (celsius < s.OverheatWarnCelsius - margin || !hasSlope || slope < rise / 2);
        s.Slope = slope;
        Apply(s.Rules[(int)AlertKind.Overheating], t, now, celsius, level || rising, absent, _overheatOnset);
    }

    private void Apply(RuleState rule, DateTime t, DateTime now, double value, bool holds, bool absent, TimeSpan onset)
    {
        switch (rule.Step(t, holds, absent, onset, _clear, _maxGap))
        {
            case RuleStep.Raise:
                Raise(rule, t, now, value, RaiseDetail(rule, t, value));
                break;
            case RuleStep.Clear:
                CloseIfOpen(rule, t, value, rule.Kind == AlertKind.Overheating
                    ? FormattableString.Invariant($"skin temperature {value:0.0} °C, not rising, for {_options.ClearSeconds} s")
                    : FormattableString.Invariant($"heart rate {value:0} bpm, back in range for {_options.ClearSeconds} s"));
                break;
            default:
                break;
        }
    }

    private string RaiseDetail(RuleState rule, DateTime t, double value)
    {
        var s = rule.Student;
        var held = (t - rule.OnsetSince.GetValueOrDefault()).TotalSeconds;
        return rule.Kind switch
        {
            AlertKind.Tachycardia => FormattableString.Invariant(
                $"heart rate {value:0} bpm for {held:0} s, {value / s.Baseline.GetValueOrDefault():0.0}× resting {s.Baseline:0} bpm ({(s.ClinicianBaseline is null ? "learned" : "clinician")})"),
            AlertKind.HeartRateHigh => FormattableString.Invariant($"heart rate {value:0} bpm for {held:0} s, limit {s.HeartRateMax:0} bpm"),
            AlertKind.Bradycardia => FormattableString.Invariant($"heart rate {value:0} bpm for {held:0} s, limit {s.HeartRateMin:0} bpm"),
            _ when value >= s.OverheatCelsius => FormattableString.Invariant($"skin temperature {value:0.0} °C for {held:0} s, limit {s.OverheatCelsius:0.0} °C"),
            _ => FormattableString.Invariant($"skin temperature {value:0.0} °C rising {s.Slope:0.00} °C/min over {_options.OverheatTrendMinutes} min"),
        };
    }
}

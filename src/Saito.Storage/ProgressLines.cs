using System.Diagnostics;
using System.Globalization;

namespace Saito.Storage;

/// <summary>
/// Progress of a long job as plain lines, for output that is not a terminal (systemd's journal, a CI log, a pipe),
/// where a progress bar would be noise: one line per <see cref="Interval"/> at most, and when the step changes, with
/// the rate and an estimate of the time left. A terminal gets Spectre.Console's bars instead.
/// </summary>
public sealed class ProgressLines(TextWriter output, string unit, TimeSpan? interval = null, Func<long>? clock = null)
{
    private readonly Func<long> _clock = clock ?? Stopwatch.GetTimestamp;
    private string? _label;
    private long _startedAt;
    private long _lastLineAt;

    public TimeSpan Interval { get; } = interval ?? TimeSpan.FromSeconds(10);

    /// <summary>Says how far <paramref name="label"/> has got, if a line is due.</summary>
    public void Report(string label, long done, long total)
    {
        long now = _clock();
        if (label != _label)
        {
            _label = label;
            _startedAt = now;
            _lastLineAt = now;
            output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{label}: started, {total:N0} {unit}"));
            return;
        }

        if (Stopwatch.GetElapsedTime(_lastLineAt, now) < Interval)
        {
            return;
        }

        _lastLineAt = now;
        output.WriteLine(Line(label, done, total, Stopwatch.GetElapsedTime(_startedAt, now)));
    }

    /// <summary>The last line: what was done, in how long.</summary>
    public void Finish(long done)
    {
        if (_label is null)
        {
            return;
        }

        var elapsed = Stopwatch.GetElapsedTime(_startedAt, _clock());
        double rate = elapsed.TotalSeconds > 0 ? done / elapsed.TotalSeconds : 0;
        output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{_label}: done, {done:N0} {unit} in {elapsed.TotalSeconds:F1} s ({rate:N0} {unit}/s)"));
    }

    /// <summary><c>moving rows: 120,000 of 1,000,000 rows (12 %), 45,000 rows/s, about 20 s left</c>.</summary>
    public string Line(string label, long done, long total, TimeSpan elapsed)
    {
        double rate = elapsed.TotalSeconds > 0 ? done / elapsed.TotalSeconds : 0;
        string percent = total > 0 ? string.Create(CultureInfo.InvariantCulture, $" ({100.0 * done / total:F0} %)") : string.Empty;
        string left = rate > 0 && total > done ? ", about " + Duration(TimeSpan.FromSeconds((total - done) / rate)) + " left" : string.Empty;
        return string.Create(CultureInfo.InvariantCulture, $"{label}: {done:N0} of {total:N0} {unit}{percent}, {rate:N0} {unit}/s{left}");
    }

    private static string Duration(TimeSpan span) =>
        span.TotalHours >= 1 ? string.Create(CultureInfo.InvariantCulture, $"{(int)span.TotalHours} h {span.Minutes:D2} min")
        : span.TotalMinutes >= 1 ? string.Create(CultureInfo.InvariantCulture, $"{(int)span.TotalMinutes} min {span.Seconds:D2} s")
        : string.Create(CultureInfo.InvariantCulture, $"{Math.Max(1, (int)Math.Ceiling(span.TotalSeconds))} s");
}

namespace Saito.Mqtt;

/// <summary>
/// When a repeated warning is due: the first time, then at most once per interval, with how many happened since the
/// last report; lock-free, for events that can come from many threads at once (a full write queue, retained messages
/// past a limit). The caller counts the events and passes the running total; the count itself stays in its metrics.
/// </summary>
public sealed class ReportThrottle(TimeSpan interval)
{
    private long _reportedAt; // Environment.TickCount64 of the last report; 0: never
    private long _totalAtReport;

    /// <summary>
    /// Call once per event with the running total (this event included). Returns how many events to report (those since
    /// the last report, this one included) when a report is due, or 0 when it is not; only one caller gets a report.
    /// </summary>
    public long Due(long total)
    {
        long now = Environment.TickCount64;
        long last = Interlocked.Read(ref _reportedAt);
        if ((last != 0 && now - last < (long)interval.TotalMilliseconds) || Interlocked.CompareExchange(ref _reportedAt, now, last) != last)
        {
            return 0;
        }

        return Math.Max(1, total - Interlocked.Exchange(ref _totalAtReport, total));
    }

    /// <summary>
    /// For an event that was not reported (<see cref="Due"/> returned 0) but is logged on its own anyway: how many events
    /// came since the last report, this one included. While another thread is making a report it may count from the
    /// report before.
    /// </summary>
    public long SinceReport(long total) => Math.Max(1, total - Interlocked.Read(ref _totalAtReport));
}

using System.Collections.Concurrent;
using System.Globalization;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The connections' story at Information level: how many connected, disconnected and were refused (by reason), summed
/// between two reports, instead of a line per connection (each of those is at Debug). A class whose hubs reconnect all
/// day made thousands of lines an hour; this makes at most one per <see cref="MqttBrokerOptions.ConnectionSummarySeconds"/>,
/// and none while nothing changes. Counting is lock-free (any connection's thread); <see cref="Take"/> is called by one
/// thread at a time, the broker's housekeeping.
/// </summary>
internal sealed class ConnectionSummary
{
    private readonly ConcurrentDictionary<string, long> _refused = new(StringComparer.Ordinal);
    private long _connected;
    private long _disconnected;
    private long _takenOver;

    // What the last report had counted, touched only by Take.
    private readonly Dictionary<string, long> _refusedReported = new(StringComparer.Ordinal);
    private long _connectedReported;
    private long _disconnectedReported;
    private long _takenOverReported;

    /// <summary>A CONNECT was accepted (CONNACK sent).</summary>
    public void Connected() => Interlocked.Increment(ref _connected);

    /// <summary>A connection counted by <see cref="Connected"/> ended; <paramref name="takenOver"/> when a newer connection with its client id ended it.</summary>
    public void Disconnected(bool takenOver)
    {
        if (takenOver)
        {
            Interlocked.Increment(ref _takenOver);
        }

        Interlocked.Increment(ref _disconnected);
    }

    /// <summary>A connection was refused before it was connected; <paramref name="reason"/> is a short stable name (a reason code or a limit).</summary>
    public void Refused(string reason) => _refused.AddOrUpdate(reason, 1, static (_, n) => n + 1);

    /// <summary>What changed since the last call, or null when nothing did.</summary>
    public ConnectionReport? Take()
    {
        // Disconnections first: one that ends between the two reads is then counted in the next report, so the open
        // count may include a connection that has just gone, but is never below zero.
        long disconnected = Interlocked.Read(ref _disconnected);
        long takenOver = Interlocked.Read(ref _takenOver);
        long connected = Interlocked.Read(ref _connected);
        List<(string Reason, long Count)> refused = [];
        foreach (var (reason, total) in _refused)
        {
            long since = total - _refusedReported.GetValueOrDefault(reason);
            if (since > 0)
            {
                refused.Add((reason, since));
                _refusedReported[reason] = total;
            }
        }

        var report = new ConnectionReport(connected - _connectedReported, disconnected - _disconnectedReported, takenOver - _takenOverReported,
            [.. refused.OrderByDescending(r => r.Count).ThenBy(r => r.Reason, StringComparer.Ordinal)], connected - disconnected);
        _connectedReported = connected;
        _disconnectedReported = disconnected;
        _takenOverReported = takenOver;
        return report.Connected == 0 && report.Disconnected == 0 && refused.Count == 0 ? null : report;
    }
}

/// <summary>One summary: counts since the previous one, and the connections open now.</summary>
internal sealed record ConnectionReport(long Connected, long Disconnected, long TakenOver, IReadOnlyList<(string Reason, long Count)> Refused, long Open)
{
    public long RefusedTotal => Refused.Sum(r => r.Count);

    /// <summary>The refusals as a log line shows them: <c>BadUserNameOrPassword 3, ServerBusy 1</c>, or <c>none</c>.</summary>
    public string RefusedByReason => Refused.Count == 0
        ? "none"
        : string.Join(", ", Refused.Select(r => string.Create(CultureInfo.InvariantCulture, $"{r.Reason} {r.Count}")));
}

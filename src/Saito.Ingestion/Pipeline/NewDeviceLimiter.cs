using Microsoft.Extensions.Options;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// How many new device serials each hub may register per hour (<c>Ingestion:MaxNewDevicesPerHubPerHour</c>; 0: no
/// limit), so that one hub cannot fill the device table. A sliding window: a hub may register a new device when it
/// registered fewer than the limit in the hour before now. The hub is the topic's second level, which the broker's
/// topic ACL ties to the publisher. Thread-safe; called only on a device's first sight, never for known devices.
/// </summary>
public sealed class NewDeviceLimiter
{
    private static readonly TimeSpan Window = TimeSpan.FromHours(1);

    private readonly int _max;
    private readonly TimeProvider _time;
    private readonly Dictionary<string, Queue<long>> _registrations = new(StringComparer.Ordinal);
    private readonly Lock _lock = new();

    public NewDeviceLimiter(IOptions<IngestionOptions> options, TimeProvider time)
        : this(options?.Value.MaxNewDevicesPerHubPerHour ?? throw new ArgumentNullException(nameof(options)), time)
    {
    }

    public NewDeviceLimiter(int maxPerHubPerHour, TimeProvider time)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(maxPerHubPerHour);
        ArgumentNullException.ThrowIfNull(time);
        _max = maxPerHubPerHour;
        _time = time;
    }

    /// <summary>The limit; 0 when there is none.</summary>
    public int MaxPerHubPerHour => _max;

    /// <summary>
    /// Counts one new device for <paramref name="hub"/> and returns true, or returns false (counting nothing) when
    /// the hub registered <see cref="MaxPerHubPerHour"/> devices in the last hour.
    /// </summary>
    public bool TryAdmit(string hub)
    {
        ArgumentNullException.ThrowIfNull(hub);
        if (_max == 0)
        {
            return true;
        }

        long now = _time.GetUtcNow().UtcTicks;
        lock (_lock)
        {
            // Hubs whose hour has passed are forgotten, so the table holds only hubs that registered lately.
            if (!_registrations.TryGetValue(hub, out var times))
            {
                times = new Queue<long>();
                _registrations[hub] = times;
            }

            while (times.Count > 0 && now - times.Peek() >= Window.Ticks)
            {
                times.Dequeue();
            }

            if (times.Count >= _max)
            {
                return false;
            }

            times.Enqueue(now);
            if (_registrations.Count > 1024)
            {
                Forget(now);
            }

            return true;
        }
    }

    private void Forget(long now)
    {
        foreach (var (hub, times) in _registrations.ToList())
        {
            if (times.Count == 0 || now - times.Last() >= Window.Ticks)
            {
                _registrations.Remove(hub);
            }
        }
    }
}

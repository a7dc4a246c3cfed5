using System.Collections.Concurrent;
using System.Net;

namespace Saito.Server.Security;

/// <summary>
/// Failed logins per IP address in a window (from the address's first failure in it): past the maximum, the address is
/// blocked until the window ends. Thread-safe. Windows that have ended are swept once the table holds
/// <see cref="SweepAt"/> addresses, so an attacker with many addresses cannot grow it without bound.
/// </summary>
internal sealed class FailedLogins(int max, TimeSpan window)
{
    internal const int SweepAt = 10_000;

    private readonly ConcurrentDictionary<IPAddress, Entry> _entries = new();
    private readonly long _windowMs = (long)window.TotalMilliseconds;

    /// <summary>True when <paramref name="address"/> is blocked now; <paramref name="first"/> for the first refusal of its window.</summary>
    public bool IsBlocked(IPAddress address, out bool first)
    {
        first = false;
        if (!_entries.TryGetValue(address, out var entry))
        {
            return false;
        }

        lock (entry)
        {
            if (Environment.TickCount64 - entry.Start >= _windowMs || entry.Count < max)
            {
                return false;
            }

            first = !entry.Reported;
            entry.Reported = true;
            return true;
        }
    }

    public void Fail(IPAddress address)
    {
        if (_entries.Count >= SweepAt)
        {
            Sweep();
        }

        var entry = _entries.GetOrAdd(address, _ => new Entry { Start = Environment.TickCount64 });
        lock (entry)
        {
            long now = Environment.TickCount64;
            if (now - entry.Start >= _windowMs)
            {
                entry.Start = now;
                entry.Count = 0;
                entry.Reported = false;
            }

            entry.Count++;
        }
    }

    private void Sweep()
    {
        long now = Environment.TickCount64;
        foreach (var (address, entry) in _entries)
        {
            bool ended;
            lock (entry)
            {
                ended = now - entry.Start >= _windowMs;
            }

            if (ended)
            {
                _entries.TryRemove(address, out _);
            }
        }
    }

    private sealed class Entry
    {
        public long Start;
        public int Count;
        public bool Reported;
    }
}

using System.Collections.Concurrent;

namespace Saito.Server.Dashboard;

/// <summary>Open dashboard connections per user, for <see cref="DashboardOptions.MaxConnectionsPerUser"/>.</summary>
public sealed class LiveConnections
{
    private readonly ConcurrentDictionary<string, int> _byUser = new(StringComparer.Ordinal);

    /// <summary>Counts one more; returns the user's count with it.</summary>
    public int Opened(string user) => _byUser.AddOrUpdate(user, 1, (_, n) => n + 1);

    public void Closed(string user) => _byUser.AddOrUpdate(user, 0, (_, n) => Math.Max(0, n - 1));

    public int Of(string user) => _byUser.GetValueOrDefault(user);
}

using System.Collections.Concurrent;
using System.Security.Claims;
using Microsoft.AspNetCore.SignalR;

namespace Saito.Server.Dashboard;

/// <summary>
/// Open dashboard connections: how many each user has (for <see cref="DashboardOptions.MaxConnectionsPerUser"/>), and
/// which classes each connection watches, for <see cref="LiveAccessCheck"/> to take away what its user may no longer see.
/// </summary>
public sealed class LiveConnections
{
    private readonly ConcurrentDictionary<string, int> _byUser = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, LiveWatcher> _watchers = new(StringComparer.Ordinal);
    private TaskCompletionSource _recheck = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Counts one more; returns the user's count with it.</summary>
    public int Opened(string user) => _byUser.AddOrUpdate(user, 1, (_, n) => n + 1);

    public void Closed(string user) => _byUser.AddOrUpdate(user, 0, (_, n) => Math.Max(0, n - 1));

    public int Of(string user) => _byUser.GetValueOrDefault(user);

    /// <summary>The connection of <paramref name="context"/> now receives <paramref name="classId"/>'s tiles and alerts.</summary>
    public void Watching(HubCallerContext context, int classId)
    {
        ArgumentNullException.ThrowIfNull(context);
        _watchers.GetOrAdd(context.ConnectionId, static (_, c) => new LiveWatcher(c), context).Classes[classId] = 0;
    }

    public void Unwatched(string connectionId, int classId)
    {
        if (_watchers.TryGetValue(connectionId, out var watcher))
        {
            watcher.Classes.TryRemove(classId, out _);
        }
    }

    public void Gone(string connectionId) => _watchers.TryRemove(connectionId, out _);

    /// <summary>The connections watching at least one class.</summary>
    public IReadOnlyList<LiveWatcher> Watchers() => [.. _watchers.Values.Where(w => !w.Classes.IsEmpty)];

    /// <summary>Accounts or rosters changed: check the watchers now rather than at the next interval.</summary>
    public void AccessMayHaveChanged() => Volatile.Read(ref _recheck).TrySetResult();

    /// <summary>Completes at the next <see cref="AccessMayHaveChanged"/> after this call.</summary>
    internal Task NextChangeAsync() => Volatile.Read(ref _recheck).Task;

    /// <summary>Called before a check, so that a change signalled during it leads to another.</summary>
    internal void TakeChange() =>
        Interlocked.Exchange(ref _recheck, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
}

/// <summary>One dashboard connection that watches classes.</summary>
public sealed class LiveWatcher(HubCallerContext context)
{
    public HubCallerContext Context { get; } = context;

    public string ConnectionId => Context.ConnectionId;

    public ClaimsPrincipal User => Context.User!;

    /// <summary>The classes it watches (the values are unused).</summary>
    public ConcurrentDictionary<int, byte> Classes { get; } = new();
}

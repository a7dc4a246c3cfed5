using Microsoft.AspNetCore.SignalR;
using Microsoft.Extensions.Options;
using Saito.Registry.Hosting;

namespace Saito.Server.Dashboard;

/// <summary>
/// A dashboard connection is authorized when it opens and when it asks to watch a class; it then stays open for the
/// school day. This takes away what its user may no longer see: every <see cref="DashboardOptions.RefreshSeconds"/>,
/// and at once after a change made through the API, each watching connection is checked again. A connection whose
/// account changed (disabled, roles replaced, password reset) or that watches a class its user is no longer listed on
/// stops receiving that class's tiles and alerts and is closed (event 5040); its dashboard reconnects and is refused.
/// </summary>
public sealed partial class LiveAccessCheck(IServiceScopeFactory scopes, LiveConnections connections, IHubContext<LiveHub> hub,
    RegistryMigrator migrator, IOptions<DashboardOptions> options, TimeProvider time, ILogger<LiveAccessCheck> logger) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (!await migrator.WaitReadyAsync(stoppingToken))
        {
            return; // no registry, no dashboards
        }

        var interval = TimeSpan.FromSeconds(options.Value.RefreshSeconds);
        while (!stoppingToken.IsCancellationRequested)
        {
            try
            {
                await connections.NextChangeAsync().WaitAsync(interval, time, stoppingToken);
            }
            catch (TimeoutException)
            {
            }
            catch (OperationCanceledException)
            {
                return;
            }

            connections.TakeChange();
            try
            {
                await CheckAsync(stoppingToken);
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                LogCheckFailed(ex);
            }
        }
    }

    /// <summary>Checks every watching connection once; returns how many were closed.</summary>
    public async Task<int> CheckAsync(CancellationToken cancellationToken)
    {
        int closed = 0;
        foreach (var group in connections.Watchers().GroupBy(w => DashboardAccess.UserName(w.User), StringComparer.Ordinal))
        {
            await using var scope = scopes.CreateAsyncScope();
            var db = scope.ServiceProvider.GetRequiredService<RegistryDbContext>();
            foreach (var watcher in group)
            {
                string? reason = !await Api.StaffGrant.IsCurrentAsync(scope.ServiceProvider, watcher.User)
                    ? "the account was changed or disabled"
                    : null;
                foreach (int classId in watcher.Classes.Keys)
                {
                    if (reason is null && !await DashboardAccess.CanSeeClassAsync(db, watcher.User, classId, cancellationToken))
                    {
                        reason = $"the account is no longer listed on class {classId}";
                    }
                }

                if (reason is null)
                {
                    continue;
                }

                foreach (int classId in watcher.Classes.Keys)
                {
                    await hub.Groups.RemoveFromGroupAsync(watcher.ConnectionId, LivePublisher.FullGroup(classId), cancellationToken);
                    await hub.Groups.RemoveFromGroupAsync(watcher.ConnectionId, LivePublisher.NoBloodPressureGroup(classId), cancellationToken);
                }

                connections.Gone(watcher.ConnectionId);
                watcher.Context.Abort();
                LogClosed(group.Key, reason);
                closed++;
            }
        }

        return closed;
    }

    [LoggerMessage(5040, LogLevel.Information, "Closed a live dashboard connection of {User}: {Reason}")]
    private partial void LogClosed(string user, string reason);

    [LoggerMessage(5041, LogLevel.Warning, "Checking the live dashboards' access failed; trying again at the next interval")]
    private partial void LogCheckFailed(Exception exception);
}

using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.SignalR;
using Microsoft.Extensions.Options;
using Saito.Live.Classroom;

namespace Saito.Server.Dashboard;

/// <summary>
/// The dashboards' live connection (<c>/live/hub</c>, SignalR). Staff who see vitals (admin, teacher, aide) may
/// connect; <see cref="Watch"/> checks the class against <see cref="DashboardAccess"/>, records the view of each
/// student's vitals in the audit, and joins the class's group with or without blood pressure. Server to client:
/// <c>tiles</c> (changed tiles) and <c>alert</c> (<see cref="AlertMessage"/>). <see cref="LiveAccessCheck"/> closes a
/// connection once its user may no longer see a class it watches. The sign-in cookie is SameSite=Strict,
/// so another site's page cannot open this connection with a member of staff's cookie.
/// </summary>
[Authorize(Policy = Api.ApiPolicies.ViewLive)]
public sealed class LiveHub(RegistryDbContext db, DashboardAccess access, VitalsAudit audit, LiveClassroom live, LiveFeed feed, LiveConnections connections, IOptions<DashboardOptions> options) : Hub
{
    public override async Task OnConnectedAsync()
    {
        string user = DashboardAccess.UserName(Context.User!);
        int count = connections.Opened(user);
        Context.Items["counted"] = user;
        if (count > options.Value.MaxConnectionsPerUser)
        {
            // Dashboard:MaxConnectionsPerUser: one account cannot hold open an unbounded number of connections.
            Context.Abort();
            return;
        }

        await base.OnConnectedAsync();
    }

    public override Task OnDisconnectedAsync(Exception? exception)
    {
        if (Context.Items.TryGetValue("counted", out var value) && value is string user)
        {
            connections.Closed(user);
        }

        connections.Gone(Context.ConnectionId);

        return base.OnDisconnectedAsync(exception);
    }

    /// <summary>Start receiving a class's tiles and alerts; answers what there is now.</summary>
    public async Task<ClassLive> Watch(int classId)
    {
        var user = Context.User!;
        if (!await DashboardAccess.CanSeeClassAsync(db, user, classId, Context.ConnectionAborted))
        {
            throw new HubException("You may not see this class: ask an admin to list you on it.");
        }

        var registry = live.Registry;
        if (!registry.Classes.TryGetValue(classId, out var c))
        {
            throw new HubException("The live view has not loaded this class yet: try again in a moment.");
        }

        bool bp = access.SeesBloodPressure(user);
        await Groups.AddToGroupAsync(Context.ConnectionId, bp ? LivePublisher.FullGroup(classId) : LivePublisher.NoBloodPressureGroup(classId), Context.ConnectionAborted);
        connections.Watching(Context, classId);
        audit.Viewed(DashboardAccess.UserName(user), c.Roster, VitalsAudit.LiveClass);
        var tiles = c.Roster.Select(o => live.Tiles.GetValueOrDefault(o)).OfType<LiveTile>().Select(t => bp ? t.Full : t.WithoutBloodPressure).ToList();
        var roster = c.Roster.ToHashSet();
        return new ClassLive(c.Id, c.Name, c.Room, c.Session, tiles,
            [.. live.ActiveAlerts.Where(a => roster.Contains(a.OwnerId)).Order(AlertView.Order)], bp, new LiveHealthView(feed.Skipped, feed.Backlog),
            options.Value.StaleAfterSeconds);
    }

    public async Task Unwatch(int classId)
    {
        await Groups.RemoveFromGroupAsync(Context.ConnectionId, LivePublisher.FullGroup(classId));
        await Groups.RemoveFromGroupAsync(Context.ConnectionId, LivePublisher.NoBloodPressureGroup(classId));
        connections.Unwatched(Context.ConnectionId, classId);
    }

    /// <summary>Acknowledge an open alert of a student this user may see; stops its escalation.</summary>
    public async Task<bool> Acknowledge(Guid alertId)
    {
        var user = Context.User!;
        var alert = live.ActiveAlerts.FirstOrDefault(a => a.Id == alertId);
        if (alert is null)
        {
            return false;
        }

        if (!await DashboardAccess.CanSeeStudentAsync(db, user, alert.OwnerId, Context.ConnectionAborted))
        {
            throw new HubException("You may not acknowledge alerts of this student.");
        }

        live.Acknowledge(alertId, DashboardAccess.UserName(user));
        return true;
    }
}

/// <summary>What a dashboard gets when it starts watching a class: its tiles, its open alerts (most pressing first), and how old a value may get before the tile greys it.</summary>
public sealed record ClassLive(
    int ClassId, string Name, string? Room, LiveSession? Session, IReadOnlyList<TileView> Tiles, IReadOnlyList<AlertView> Alerts, bool SeesBloodPressure,
    LiveHealthView Health, int StaleAfterSeconds);

/// <summary>Whether the live view is keeping up: readings skipped because it fell behind, and its backlog.</summary>
public sealed record LiveHealthView(long SkippedReadings, long Backlog);

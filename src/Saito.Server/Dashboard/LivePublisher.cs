using Saito.Live.Classroom;
using System.Threading.Channels;
using Microsoft.AspNetCore.SignalR;
using Saito.Live.Alerts;

namespace Saito.Server.Dashboard;

/// <summary>
/// Sends what <see cref="LiveClassroom"/> produces to the dashboards, on its own loop: a dashboard that reads
/// slowly (a tablet on bad Wi-Fi) delays only this loop, by at most <see cref="SendTimeout"/> per message, never the
/// live view or ingestion. Each class has two SignalR groups: one with blood pressure, one without (aides, unless
/// <see cref="DashboardOptions.AidesSeeBloodPressure"/>); the second gets tiles made without it on the server
/// (<see cref="LiveTile.WithoutBloodPressure"/>), and only when what it shows changed.
/// </summary>
public sealed partial class LivePublisher(IHubContext<LiveHub> hub, ILogger<LivePublisher> logger) : BackgroundService
{
    /// <summary>Longest wait for one group send; past it the slow connections miss that message.</summary>
    public static readonly TimeSpan SendTimeout = TimeSpan.FromSeconds(2);

    private const int Capacity = 4096;
    private readonly Channel<Push> _pushes = Channel.CreateBounded<Push>(new BoundedChannelOptions(Capacity)
    {
        SingleReader = true,
        FullMode = BoundedChannelFullMode.DropOldest,
    });

    private long _dropped;

    public static string FullGroup(int classId) => FormattableString.Invariant($"class:{classId}:full");

    public static string NoBloodPressureGroup(int classId) => FormattableString.Invariant($"class:{classId}:no-bp");

    public long Dropped => Interlocked.Read(ref _dropped);

    /// <summary>Changed tiles: <paramref name="full"/> to those who see blood pressure, <paramref name="withoutBloodPressure"/> (none when empty) to the others.</summary>
    public void Tiles(int classId, IReadOnlyList<TileView> full, IReadOnlyList<TileView> withoutBloodPressure)
    {
        Enqueue(new Push(classId, "tiles", full, withoutBloodPressure.Count > 0 ? withoutBloodPressure : null));
    }

    public void Alert(int classId, AlertEventType type, AlertView alert)
    {
        var message = new AlertMessage(type.ToString().ToLowerInvariant(), alert);
        Enqueue(new Push(classId, "alert", message, message));
    }

    private void Enqueue(Push push)
    {
        if (_pushes.Reader.Count >= Capacity)
        {
            Interlocked.Increment(ref _dropped);
        }

        _pushes.Writer.TryWrite(push);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        await foreach (var push in _pushes.Reader.ReadAllAsync(stoppingToken))
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
            timeout.CancelAfter(SendTimeout);
            try
            {
                await hub.Clients.Group(FullGroup(push.ClassId)).SendAsync(push.Method, push.Full, timeout.Token);
                if (push.Reduced is not null)
                {
                    await hub.Clients.Group(NoBloodPressureGroup(push.ClassId)).SendAsync(push.Method, push.Reduced, timeout.Token);
                }
            }
            catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
            {
                LogSlowDashboard(push.ClassId, SendTimeout.TotalSeconds);
            }
        }
    }

    private readonly record struct Push(int ClassId, string Method, object Full, object? Reduced);

    [LoggerMessage(5010, LogLevel.Warning, "A dashboard of class {ClassId} did not take an update within {Seconds} s; it missed that update")]
    private partial void LogSlowDashboard(int classId, double seconds);
}

/// <summary>An alert event pushed to dashboards: <c>raised</c>, <c>escalated</c>, <c>acknowledged</c>, <c>cleared</c>.</summary>
public sealed record AlertMessage(string Event, AlertView Alert);

using System.Threading.Channels;
using Microsoft.Extensions.Options;
using Saito.Live.Alerts;
using Saito.Live.Analytics;
using Saito.Live.Classroom;
using Saito.Registry.Hosting;

namespace Saito.Server.Dashboard;

/// <summary>
/// The live view's one thread, hosting <see cref="LiveView"/> (Saito.Live, the model): it reads the registry into it,
/// feeds it committed readings from <see cref="LiveFeed"/> and acknowledgements from dashboards, ticks it, and hands
/// the tiles and alert events it produces to <see cref="LivePublisher"/> (dashboards) and <see cref="AlertRecorder"/>
/// (the alert table). Others read <see cref="Tiles"/>, <see cref="ActiveAlerts"/> and <see cref="Registry"/>.
/// </summary>
public sealed partial class LiveClassroom : BackgroundService
{
    private readonly LiveFeed _feed;
    private readonly LiveSignal _signal;
    private readonly LivePublisher _publisher;
    private readonly AlertRecorder _recorder;
    private readonly RegistryContextFactory _contexts;
    private readonly RegistryMigrator _migrator;
    private readonly DashboardOptions _options;
    private readonly SchoolOptions _school;
    private readonly TimeProvider _time;
    private readonly ILogger<LiveClassroom> _logger;
    private readonly LiveView _view;
    private readonly Channel<Acknowledgement> _acks = Channel.CreateUnbounded<Acknowledgement>(new UnboundedChannelOptions { SingleReader = true });
    private readonly List<LiveAlertEvent> _events = [];
    private long _lastSkippedLogged;

    public LiveClassroom(LiveFeed feed, LiveSignal signal, LivePublisher publisher, AlertRecorder recorder, RegistryContextFactory contexts,
        RegistryMigrator migrator, IOptions<DashboardOptions> options, IOptions<SchoolOptions> school, IOptions<AlertOptions> alerts,
        IOptions<SwayOptions> sway, IOptions<MatOptions> mat, TimeProvider time, ILogger<LiveClassroom> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(school);
        ArgumentNullException.ThrowIfNull(alerts);
        ArgumentNullException.ThrowIfNull(sway);
        ArgumentNullException.ThrowIfNull(mat);
        _feed = feed;
        _signal = signal;
        _publisher = publisher;
        _recorder = recorder;
        _contexts = contexts;
        _migrator = migrator;
        _options = options.Value;
        _school = school.Value;
        _time = time;
        _logger = logger;
        _view = new LiveView(alerts.Value, sway.Value, mat.Value, _options.HeadChannel);
    }

    /// <summary>Each student's tile as last pushed, for those who see blood pressure and for those who do not.</summary>
    public IReadOnlyDictionary<int, LiveTile> Tiles => _view.Tiles;

    /// <summary>The alerts open now.</summary>
    public IReadOnlyList<AlertView> ActiveAlerts => _view.ActiveAlerts;

    /// <summary>Who is where, as last read from the registry.</summary>
    public LiveRegistry Registry => _view.Registry;

    /// <summary>Acknowledge an alert (from a dashboard); the engine does it on its thread.</summary>
    public void Acknowledge(Guid alertId, string userName) => _acks.Writer.TryWrite(new Acknowledgement(alertId, userName));

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        if (!await _migrator.WaitReadyAsync(stoppingToken))
        {
            LogRegistryUnavailable();
            return;
        }

        var refreshEvery = TimeSpan.FromSeconds(_options.RefreshSeconds);
        var pushEvery = TimeSpan.FromMilliseconds(_options.PushIntervalMilliseconds);
        var tickEvery = TimeSpan.FromMilliseconds(250);
        DateTime nextRefresh = DateTime.MinValue, nextTick = DateTime.MinValue, nextPush = DateTime.MinValue;
        while (!stoppingToken.IsCancellationRequested)
        {
            var now = _time.GetUtcNow().UtcDateTime;
            if (now >= nextRefresh || _signal.TakeChanged())
            {
                await RefreshAsync(now, stoppingToken);
                nextRefresh = now + refreshEvery;
            }

            int readings = DrainReadings(now);
            while (_acks.Reader.TryRead(out var ack))
            {
                _view.Acknowledge(ack.AlertId, ack.UserName, now);
            }

            if (now >= nextTick || readings > 0)
            {
                _view.Tick(now);
                nextTick = now + tickEvery;
            }

            await PublishAlertsAsync(stoppingToken);
            if (_view.HasChangedTiles && now >= nextPush)
            {
                foreach (var c in _view.TakeChangedTiles(now))
                {
                    _publisher.Tiles(c.ClassId, c.Full, c.WithoutBloodPressure);
                }

                nextPush = now + pushEvery;
            }

            // Wait for readings, an acknowledgement, a registry change or the next tick; never longer than the tick.
            var wake = _view.HasChangedTiles ? Min(nextPush, nextTick) : Min(nextTick, nextRefresh);
            var delay = wake - _time.GetUtcNow().UtcDateTime;
            if (delay > TimeSpan.Zero && !_feed.Reader.TryPeek(out _) && !_acks.Reader.TryPeek(out _))
            {
                using var wait = CancellationTokenSource.CreateLinkedTokenSource(stoppingToken);
                wait.CancelAfter(delay);
                try
                {
                    await Task.WhenAny(_feed.Reader.WaitToReadAsync(wait.Token).AsTask(), _acks.Reader.WaitToReadAsync(wait.Token).AsTask(),
                        _signal.WaitAsync(wait.Token));
                }
                catch (OperationCanceledException) when (!stoppingToken.IsCancellationRequested)
                {
                }
            }
        }
    }

    private static DateTime Min(DateTime a, DateTime b) => a < b ? a : b;

    private async Task RefreshAsync(DateTime now, CancellationToken cancellationToken)
    {
        LiveRegistry registry;
        try
        {
            await using var db = _contexts.Create();
            registry = await LiveRegistryReader.LoadAsync(db, _school, new DateTimeOffset(now), cancellationToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            LogRefreshFailed(ex);
            return;
        }

        foreach (var problem in _view.SetRegistry(registry, now))
        {
            LogBadThresholds(problem.OwnerId, problem.Problem);
        }
    }

    private int DrainReadings(DateTime now)
    {
        int total = 0;
        while (total < 200_000 && _feed.Reader.TryRead(out var chunk))
        {
            try
            {
                foreach (ref readonly var reading in chunk.Readings)
                {
                    _view.Observe(reading, now);
                }

                total += chunk.Count;
            }
            finally
            {
                _feed.Consumed(chunk);
            }
        }

        long skipped = _feed.Skipped;
        if (skipped > _lastSkippedLogged)
        {
            LogBehind(skipped - _lastSkippedLogged, skipped);
            _lastSkippedLogged = skipped;
        }

        return total;
    }

    private async Task PublishAlertsAsync(CancellationToken cancellationToken)
    {
        _events.Clear();
        _view.DrainAlerts(_events);
        foreach (var e in _events)
        {
            await _recorder.RecordAsync(e.Event, e.ClassId, cancellationToken);
            foreach (int c in e.Classes)
            {
                _publisher.Alert(c, e.Event.Type, e.View);
            }
        }
    }

    private readonly record struct Acknowledgement(Guid AlertId, string UserName);

    [LoggerMessage(5001, LogLevel.Warning, "The live view could not read the registry (rosters, devices, check-ins); it keeps the last it read and tries again")]
    private partial void LogRefreshFailed(Exception exception);

    [LoggerMessage(5002, LogLevel.Error, "The registry is not available, so the live view and its alerts are off; readings are still stored")]
    private partial void LogRegistryUnavailable();

    [LoggerMessage(5004, LogLevel.Warning, "The alert thresholds of student {OwnerId} do not fit together ({Problem}); the Alerts:* defaults apply until they are fixed")]
    private partial void LogBadThresholds(int ownerId, string problem);

    [LoggerMessage(5003, LogLevel.Warning, "The live view fell behind and skipped {Skipped} committed readings ({Total} since start; Dashboard:MaxBacklogReadings); they are stored, but no alert was evaluated on them")]
    private partial void LogBehind(long skipped, long total);
}

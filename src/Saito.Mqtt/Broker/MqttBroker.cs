using System.Collections.Concurrent;
using System.IO.Pipelines;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Hosting;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// The embedded MQTT 3.1.1 / 5.0 broker. Transports (Kestrel TCP/TLS connections, WebSockets) hand each
/// connection to <see cref="RunConnectionAsync"/>; the broker admits connections, keeps subscriptions, routes
/// publishes, and runs the timers (keep-alive, will delay, session and message expiry). Sessions, retained messages
/// and wills each have a class of their own (<see cref="MqttSessionStore"/>, <see cref="MqttRetainedMessageStore"/>,
/// <see cref="MqttWills"/>); the broker routes between them. Beside this file: MqttBroker.Limits.cs (admission, the pending
/// and unfinished-packet budgets), MqttBroker.Routing.cs (subscriptions, routing, session queues), MqttBroker.Log.cs.
/// </summary>
public sealed partial class MqttBroker : BackgroundService
{
    private static readonly TimeSpan HousekeepingPeriod = TimeSpan.FromMilliseconds(200);

    /// <summary>A subscriber whose queue stays full is logged about at most this often (the count of drops is in every line).</summary>
    internal static readonly TimeSpan DropLogInterval = TimeSpan.FromSeconds(10);

    private readonly ConcurrentDictionary<MqttServerConnection, byte> _connections = new();
    private readonly SubscriptionTree _tree = new();
    private readonly MqttSessionStore _sessions;
    private readonly MqttRetainedMessageStore _retained;
    private readonly MqttWills _wills;
    // Publish hooks still running (their acknowledgements wait on them): a count, not a set of tasks, since one starts
    // per message (a shared dictionary's add and remove were 2% of Saito's CPU at one reading per message).
    private readonly TaskCompletionSource _hooksDrained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _hooksRunning;
    private readonly IMqttAuthenticator? _authenticator;
    private readonly IMqttAuthorizer? _authorizer;
    private readonly ILogger<MqttBroker> _logger;
    private readonly CancellationTokenSource _stopping = new();
    private int _connectedCount;

    // CONNECTs refused, in all, and when to warn about them (ConnectRefused); the summary's next report (Environment.TickCount64).
    private long _connectsRefused;
    private readonly ReportThrottle _connectRefusedReports = new(DropLogInterval);
    private long _summaryDue;
    private readonly IMqttStartGate[] _gates;

    // Completes once every start gate has opened (or Mqtt:StartupWaitSeconds passed); connections are served after it.
    private Task _gatesOpen = Task.CompletedTask;

    public MqttBroker(IOptions<MqttBrokerOptions> options, ILogger<MqttBroker> logger, MqttBrokerMetrics metrics,
        IEnumerable<IMqttPublishHook> hooks, IEnumerable<IMqttAuthenticator> authenticators, IEnumerable<IMqttAuthorizer> authorizers,
        IEnumerable<IMqttStartGate> gates)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(gates);
        _gates = [.. gates];
        Options = options.Value;
        _logger = logger;
        Metrics = metrics;
        PublishHook = hooks.LastOrDefault();
        _authenticator = authenticators.LastOrDefault();
        _authorizer = authorizers.LastOrDefault();
        _sessions = new MqttSessionStore(Options, metrics, _tree, logger);
        metrics.ObserveSubscriberDrops(_sessions.Drops);
        _retained = new MqttRetainedMessageStore(Options, metrics);
        _wills = new MqttWills(this, logger);
        _pending = new PendingConnections(Options.MaxPendingConnections, Options.MaxPendingConnectionsPerAddress);
        _summaryDue = Environment.TickCount64 + SummaryPeriodMs;
    }

    public MqttBrokerOptions Options { get; }

    internal MqttBrokerMetrics Metrics { get; }

    internal IMqttPublishHook? PublishHook { get; }

    internal MqttTopicCache TopicCache { get; } = new();

    internal CancellationToken StoppingToken => _stopping.Token;

    /// <summary>Connects, disconnects and refusals, summed up in the log every <see cref="MqttBrokerOptions.ConnectionSummarySeconds"/>.</summary>
    internal ConnectionSummary Connections { get; } = new();

    private long SummaryPeriodMs => Options.ConnectionSummarySeconds * 1000L;

    /// <summary>Clients connected now (CONNECT accepted).</summary>
    public int ConnectedClients => Volatile.Read(ref _connectedCount);

    public int RetainedMessages => _retained.Count;

    /// <summary>Connections that have not sent CONNECT yet.</summary>
    internal int PendingConnections => _pending.Count;

    /// <summary>Sessions kept (connected or waiting for their client).</summary>
    internal int Sessions => _sessions.Count;

    /// <summary>The queue of <paramref name="clientId"/>'s session: messages, bytes as bounded, messages dropped; null without a session.</summary>
    internal (int Messages, long Bytes, long Dropped)? QueueOf(string clientId) => _sessions.QueueOf(clientId);

    /// <summary>Serves one connection until it closes. Never throws for anything the peer sends.</summary>
    public Task RunConnectionAsync(IDuplexPipe transport, MqttConnectionInfo info)
    {
        ArgumentNullException.ThrowIfNull(transport);
        ArgumentNullException.ThrowIfNull(info);
        var network = Broker.PendingConnections.NetworkOf(AddressOf(info.RemoteEndPoint));
        if (!TryAdmit(network))
        {
            return RefuseAdmissionAsync(transport, info, nameof(MqttBrokerOptions.MaxConnectionsPerAddress));
        }

        // Taken in first, so the connections that wait for the start gates count against the pending budgets; a full
        // budget closes its oldest connection, never the new one (PendingConnections says why).
        var connection = new MqttServerConnection(this, transport, info, _logger, network);
        if (_pending.Enter(connection, network, out string? limit) is { } evicted)
        {
            Evict(evicted, limit!);
        }

        return _gatesOpen.IsCompleted ? Serve(connection) : ServeOnceGatesOpenAsync(connection);
    }

    /// <summary>Completes, never faulted, once connections are served: the start gates have opened or the wait for them ended.</summary>
#pragma warning disable VSTHRD003 // The broker's own task, started in StartAsync; it never faults.
    public Task Served => _gatesOpen;
#pragma warning restore VSTHRD003

    private async Task ServeOnceGatesOpenAsync(MqttServerConnection connection)
    {
        // Until then it is still served at once when closed (a newer connection took its pending place), so that it ends now.
#pragma warning disable VSTHRD003 // The broker's own task, started in StartAsync; a server has no context to deadlock.
        await _gatesOpen.WaitAsync(connection.ClosedToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
#pragma warning restore VSTHRD003
        await Serve(connection);
    }

    private Task Serve(MqttServerConnection connection)
    {
        _connections.TryAdd(connection, 0);
        if (_stopping.IsCancellationRequested)
        {
            // Came in while the broker stops: StopAsync cancels first and then goes through the connections, so either it
            // sees this one or this sees the cancellation.
            connection.CancelNow();
        }

        Metrics.ConnectionOpened();

        // Its own task, not awaited here: one async frame less held by every connection for its whole life (issue 15,
        // memory per idle connection). The connection releases its admission (Released) when it ends.
        return connection.RunAsync();
    }

    /// <summary>Publishes a message from inside the process (no client), as if a client had sent it.</summary>
    public void Publish(string topic, ReadOnlyMemory<byte> payload, MqttQoS qos = MqttQoS.AtMostOnce, bool retain = false, MqttProperties? properties = null)
    {
        ArgumentNullException.ThrowIfNull(topic);
        if (topic.Length == 0 || topic.AsSpan().IndexOfAny('+', '#') >= 0)
        {
            throw new ArgumentException("A topic name is non-empty and has no wildcards", nameof(topic));
        }

        long now = Environment.TickCount64;
        Route(MqttMessage.Create(topic, payload, qos, retain, properties, sender: null, now), now);
    }

    // ------------------------------------------------------------ connections and sessions

    internal bool TryReserveConnectionSlot()
    {
        if (Interlocked.Increment(ref _connectedCount) > Options.MaxConnections)
        {
            Interlocked.Decrement(ref _connectedCount);
            return false;
        }

        return true;
    }

    internal void ReleaseConnectionSlot() => Interlocked.Decrement(ref _connectedCount);

    /// <summary>
    /// A CONNECT was refused with <paramref name="reason"/>: counted (metrics, the summary), and the level of its log line:
    /// Warning for the first and then at most once per <see cref="DropLogInterval"/>, Debug for the others; either way with
    /// <paramref name="since"/> refused since the last warning, this one included.
    /// </summary>
    internal LogLevel ConnectRefused(string reason, out long since, out long total)
    {
        Metrics.ConnectRefused();
        Connections.Refused(reason);
        total = Interlocked.Increment(ref _connectsRefused);
        since = _connectRefusedReports.Due(total);
        if (since > 0)
        {
            return LogLevel.Warning;
        }

        // The line says "N refused since the last warning": 0 there was false, so a Debug line counts them too.
        since = _connectRefusedReports.SinceReport(total);
        return LogLevel.Debug;
    }

    internal async ValueTask<MqttAuthenticationOutcome> AuthenticateAsync(MqttServerConnection connection, ConnectPacket connect, CancellationToken token)
    {
        // Unset means "anonymous on loopback only"; start-up refuses a listener elsewhere while it is unset (hosting validator).
        // A WebSocket connection a proxy forwarded is not on loopback, whatever Saito listens on: with the default, nginx
        // in front of a loopback-only Saito gave anyone anonymous MQTT.
        bool anonymous = Options.AllowAnonymous ?? !connection.Info.Forwarded;
        var asAnonymous = anonymous
            ? MqttAuthenticationOutcome.Accepted(MqttClientIdentity.Anonymous)
            : MqttAuthenticationOutcome.Refused(MqttAuthenticationResult.NotAuthorized);
        if (connect.UserName is null && connection.Info.ClientCertificate is null)
        {
            return asAnonymous;
        }

        if (_authenticator is null)
        {
            // Credentials given but nobody to check them: accept only where anonymous clients are accepted anyway.
            return asAnonymous;
        }

        return await _authenticator.AuthenticateAsync(new MqttAuthenticationContext
        {
            ClientId = connection.ClientId,
            UserName = connect.UserName,
            Password = connect.Password,
            ClientCertificate = connection.Info.ClientCertificate,
            RemoteEndPoint = connection.Info.RemoteEndPoint,
            ProtocolVersion = connect.ProtocolVersion,
        }, token);
    }

    /// <summary>
    /// Gives the connection its session: a new one, or the existing one (taking it over from an older connection).
    /// Null when a new session is needed and <see cref="MqttBrokerOptions.MaxSessions"/> are kept already.
    /// </summary>
    internal (MqttSession Session, bool Present)? AttachSession(MqttServerConnection connection, string clientId, bool cleanStart, uint expiry,
        out bool ownedByAnother)
    {
        var attached = _sessions.Attach(connection, clientId, cleanStart, expiry, out var willsToPublish, out ownedByAnother);
        _wills.Publish(willsToPublish);
        return attached;
    }

    /// <summary>A connected client's connection ended; <paramref name="will"/> is its will when one must be published.</summary>
    internal void OnConnectionClosed(MqttServerConnection connection, MqttWill? will)
    {
        ReleaseConnectionSlot();
        if (connection.Session is { } session)
        {
            _wills.Publish(_sessions.Detach(session, connection, will));
        }
    }

    internal void Unregister(MqttServerConnection connection)
    {
        _connections.TryRemove(connection, out _);
        Metrics.ConnectionClosed();
    }

    /// <summary>A publish hook's verdict is awaited from here on; <see cref="HookEnded"/> when it has landed.</summary>
    internal void HookStarted() => Interlocked.Increment(ref _hooksRunning);

    internal void HookEnded()
    {
        if (Interlocked.Decrement(ref _hooksRunning) == 0 && _stopping.IsCancellationRequested)
        {
            _hooksDrained.TrySetResult();
        }
    }

    /// <summary>Counts <paramref name="task"/> as a running hook until it ends (for the rarer paths that have only a task).</summary>
    internal void Track(Task task)
    {
        HookStarted();
        _ = task.ContinueWith(static (_, state) => ((MqttBroker)state!).HookEnded(), this,
            CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
    }

    // ------------------------------------------------------------ housekeeping

    public override Task StartAsync(CancellationToken cancellationToken)
    {
        if (_gates.Length > 0 && Options.StartupWaitSeconds > 0)
        {
            _gatesOpen = OpenGatesAsync(TimeSpan.FromSeconds(Options.StartupWaitSeconds), _stopping.Token);
        }

        return base.StartAsync(cancellationToken);
    }

    /// <summary>Waits for the start gates, at most <paramref name="limit"/>; never throws, so connections are always served after it.</summary>
    private async Task OpenGatesAsync(TimeSpan limit, CancellationToken stopping)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        string names = string.Join(", ", _gates.Select(g => g.Name));
        try
        {
            await Task.WhenAll(_gates.Select(g => g.WaitAsync(stopping))).WaitAsync(limit, stopping);
            LogGatesOpened(names, clock.ElapsedMilliseconds);
        }
        catch (TimeoutException)
        {
            LogGatesTimedOut(names, Options.StartupWaitSeconds);
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Stopping before the gates opened: the connections waiting are served and closed at once.
        }
        catch (Exception e)
        {
            LogGateFailed(e, names);
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(HousekeepingPeriod);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken))
            {
                Housekeep(Environment.TickCount64);
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // Shutting down.
        }
    }

    internal void Housekeep(long now)
    {
        long packetTimeoutMs = Options.PacketReadTimeoutSeconds * 1000L;
        foreach (var connection in _connections.Keys)
        {
            if (connection.IsClosing)
            {
                // Listed until it has ended: a connection is counted, logged and closed once, not every round.
                continue;
            }

            if (connection.UnfinishedSince is > 0 and var since && now - since > packetTimeoutMs)
            {
                ClosePacketTimedOut(connection);
            }
            else if (!connection.IsConnected)
            {
                if (now > connection.ConnectDeadline)
                {
                    LogConnectTimeout(connection.Info.RemoteEndPoint?.ToString());
                    connection.Close(MqttReasonCode.MaximumConnectTime);
                }
            }
            else if (connection.KeepAliveMs > 0 && now - connection.LastReceived > connection.KeepAliveMs * 3 / 2)
            {
                LogKeepAliveTimeout(connection.ClientId, connection.KeepAliveMs / 1000);
                connection.Close(MqttReasonCode.KeepAliveTimeout);
            }
        }

        _wills.Publish(_sessions.Expire(now));
        if (now >= _summaryDue)
        {
            _summaryDue = now + SummaryPeriodMs;
            if (Connections.Take() is { } report)
            {
                LogConnectionSummary(Options.ConnectionSummarySeconds, report.Connected, report.Disconnected, report.TakenOver, report.RefusedTotal,
                    report.RefusedByReason, report.Open);
            }
        }
    }

    public override async Task StopAsync(CancellationToken cancellationToken)
    {
        foreach (var connection in _connections.Keys)
        {
            connection.Close(MqttReasonCode.ServerShuttingDown);
        }

        await _stopping.CancelAsync();
        foreach (var connection in _connections.Keys)
        {
            connection.CancelNow();
        }

        if (Volatile.Read(ref _hooksRunning) == 0)
        {
            _hooksDrained.TrySetResult();
        }

        await _hooksDrained.Task.WaitAsync(TimeSpan.FromSeconds(5), cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await base.StopAsync(cancellationToken);
    }

    public override void Dispose()
    {
        _stopping.Dispose();
        _tree.Dispose();
        base.Dispose();
    }

    /// <summary>Whether the topic ACL lets <paramref name="identity"/> publish to <paramref name="topic"/>.</summary>
    internal bool MayPublish(MqttClientIdentity identity, string topic) => _authorizer is null || _authorizer.MayPublish(identity, topic);
}

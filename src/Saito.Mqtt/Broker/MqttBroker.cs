using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Net;
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
/// <see cref="MqttWills"/>); the broker routes between them.
/// </summary>
public sealed partial class MqttBroker : BackgroundService
{
    private static readonly TimeSpan HousekeepingPeriod = TimeSpan.FromMilliseconds(200);

    /// <summary>A subscriber whose queue stays full is logged about at most this often (the count of drops is in every line).</summary>
    internal static readonly TimeSpan DropLogInterval = TimeSpan.FromSeconds(10);

    [ThreadStatic]
    private static List<Subscriber>? t_matches;

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
    private readonly ConcurrentDictionary<IPAddress, int> _connectionsPerAddress = new();
    private readonly PendingConnections _pending;
    private long _pendingEvicted;
    private long _admissionsRefused;

    // Bytes held by unfinished packets (Mqtt:MaxUnfinishedPacketBytes), those of connections being closed for it, and reports.
    private long _unfinishedBytes;
    private long _unfinishedShed;
    private long _unfinishedClosed;
    private readonly Lock _shedLock = new();
    private readonly ReportThrottle _unfinishedReports = new(DropLogInterval);

    // Connections closed for Mqtt:PacketReadTimeoutSeconds (counted by housekeeping only), and reports.
    private long _packetTimeouts;
    private readonly ReportThrottle _packetTimeoutReports = new(DropLogInterval);

    // Retained messages not kept for a limit, in all, and when to log them.
    private long _retainedNotKept;
    private readonly ReportThrottle _retainedNotKeptReports = new(DropLogInterval);
    private readonly ILogger<MqttBroker> _logger;
    private readonly CancellationTokenSource _stopping = new();
    private int _connectedCount;
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
    }

    public MqttBrokerOptions Options { get; }

    internal MqttBrokerMetrics Metrics { get; }

    internal IMqttPublishHook? PublishHook { get; }

    internal MqttTopicCache TopicCache { get; } = new();

    internal CancellationToken StoppingToken => _stopping.Token;

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

    /// <summary>A pending budget was full: its oldest connection, which has still sent no CONNECT, is closed at once.</summary>
    private void Evict(MqttServerConnection oldest, string limit)
    {
        Metrics.LimitHit(limit);

        // A flood must not become a flood of log lines: the first, then one in a thousand.
        long evicted = Interlocked.Increment(ref _pendingEvicted);
        if (evicted % 1000 == 1)
        {
            LogPendingEvicted(oldest.Info.RemoteEndPoint?.ToString() ?? oldest.Info.Transport, limit, evicted);
        }

        oldest.CancelNow();
    }

    /// <summary>Over a limit before a byte is read: close at once; nothing is parsed, nothing is held.</summary>
    private async Task RefuseAdmissionAsync(IDuplexPipe transport, MqttConnectionInfo info, string limit)
    {
        Metrics.LimitHit(limit);

        // A flood of refused connections must not become a flood of log lines: the first, then one in a thousand.
        if (Interlocked.Increment(ref _admissionsRefused) % 1000 == 1)
        {
            LogAdmissionRefused(info.RemoteEndPoint?.ToString() ?? info.Transport, limit, _admissionsRefused);
        }

        await transport.Input.CompleteAsync();
        await transport.Output.CompleteAsync();
        info.Ended?.Invoke();
    }

    /// <summary>
    /// <paramref name="connection"/>'s unfinished packet holds <paramref name="change"/> bytes more (or fewer). Past
    /// <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/> in all, the connections whose packets have been unfinished
    /// longest are closed until the rest fit (the largest first among packets begun at the same time). A packet from a
    /// hub arrives in milliseconds, so it is never the oldest while a flood of slow packets holds the budget, however large
    /// it is; to stay younger than a hub's packet, a flood would have to send the whole budget again every few milliseconds.
    /// </summary>
    internal void HoldUnfinished(MqttServerConnection connection, long change)
    {
        long held = Interlocked.Add(ref _unfinishedBytes, change);
        if (change > 0 && held - Volatile.Read(ref _unfinishedShed) > Options.MaxUnfinishedPacketBytes)
        {
            ShedUnfinished(connection);
        }
    }

    /// <summary>Bytes held by packets not yet received whole (as counted for <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/>).</summary>
    internal long UnfinishedPacketBytes => Volatile.Read(ref _unfinishedBytes);

    private void ShedUnfinished(MqttServerConnection grown)
    {
        // Rare (only past the budget): one at a time, a scan of the connections for the oldest unfinished packet.
        lock (_shedLock)
        {
            while (Volatile.Read(ref _unfinishedBytes) - _unfinishedShed > Options.MaxUnfinishedPacketBytes)
            {
                MqttServerConnection? oldest = grown.ShedBytes == 0 && grown.UnfinishedCounted > 0 ? grown : null;
                foreach (var candidate in _connections.Keys)
                {
                    if (candidate.ShedBytes == 0 && candidate.UnfinishedCounted > 0 && (oldest is null || OlderOrLarger(candidate, oldest)))
                    {
                        oldest = candidate;
                    }
                }

                if (oldest is null)
                {
                    return;
                }

                oldest.ShedBytes = Math.Max(1, oldest.UnfinishedCounted);
                Volatile.Write(ref _unfinishedShed, _unfinishedShed + oldest.ShedBytes);
                Metrics.LimitHit(nameof(MqttBrokerOptions.MaxUnfinishedPacketBytes));
                long shed = Interlocked.Increment(ref _unfinishedClosed);
                if (_unfinishedReports.Due(shed) is > 0 and var since)
                {
                    LogUnfinishedShed(oldest.Info.RemoteEndPoint?.ToString() ?? oldest.Info.Transport, LogText.Safe(oldest.ClientId),
                        oldest.UnfinishedCounted, Options.MaxUnfinishedPacketBytes, since, shed);
                }

                oldest.Close(MqttReasonCode.QuotaExceeded);
            }
        }
    }

    private static bool OlderOrLarger(MqttServerConnection candidate, MqttServerConnection chosen) =>
        candidate.UnfinishedSince < chosen.UnfinishedSince
        || (candidate.UnfinishedSince == chosen.UnfinishedSince && candidate.UnfinishedCounted > chosen.UnfinishedCounted);

    /// <summary>A connection admitted by <see cref="RunConnectionAsync"/> has ended: it no longer counts against the limits.</summary>
    internal void Released(MqttServerConnection connection, IPAddress? network)
    {
        if (connection.UnfinishedCounted != 0 || connection.ShedBytes != 0)
        {
            // Under the shedding lock, so a scan going on cannot pick this connection after it has given its bytes back.
            lock (_shedLock)
            {
                Interlocked.Add(ref _unfinishedBytes, -connection.UnfinishedCounted);
                Volatile.Write(ref _unfinishedShed, _unfinishedShed - connection.ShedBytes);
                connection.ForgetUnfinished();
            }
        }

        _pending.Leave(connection);
        Release(network);
        connection.Info.Ended?.Invoke();
    }

    private static IPAddress? AddressOf(EndPoint? endPoint) => endPoint is IPEndPoint ip
        ? ip.Address.IsIPv4MappedToIPv6 ? ip.Address.MapToIPv4() : ip.Address
        : null;

    /// <summary>Counts one more connection from <paramref name="network"/>; false (and not counted) past <see cref="MqttBrokerOptions.MaxConnectionsPerAddress"/>.</summary>
    private bool TryAdmit(IPAddress? network)
    {
        if (network is not null && _connectionsPerAddress.AddOrUpdate(network, 1, static (_, n) => n + 1) > Options.MaxConnectionsPerAddress)
        {
            Release(network);
            return false;
        }

        return true;
    }

    private void Release(IPAddress? address)
    {
        if (address is null)
        {
            return;
        }

        while (_connectionsPerAddress.TryGetValue(address, out int count))
        {
            bool done = count <= 1
                ? _connectionsPerAddress.TryRemove(new KeyValuePair<IPAddress, int>(address, count))
                : _connectionsPerAddress.TryUpdate(address, count - 1, count);
            if (done)
            {
                return;
            }
        }
    }

    /// <summary>A connection sent CONNECT: it no longer counts as pending.</summary>
    internal void LeftPending(MqttServerConnection connection) => _pending.Leave(connection);

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

    // ------------------------------------------------------------ subscriptions

    internal MqttReasonCode Subscribe(MqttSession session, MqttClientIdentity identity, MqttSubscription subscription, uint subscriptionId,
        MqttProtocolVersion version, out bool isNew)
    {
        isNew = false;
        string filter = subscription.TopicFilter;
        string? group = null;
        string inner = filter;
        if (MqttTopic.TryParseShared(filter, out var shareGroup, out var shareFilter, out bool validShare))
        {
            if (!validShare)
            {
                return version == MqttProtocolVersion.V500 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
            }

            if (subscription.NoLocal && version == MqttProtocolVersion.V500)
            {
                throw MqttProtocolException.Protocol("No Local on a shared subscription");
            }

            group = shareGroup;
            inner = shareFilter;
        }
        else if (!MqttTopic.IsValidFilter(filter))
        {
            return version == MqttProtocolVersion.V500 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
        }

        bool v5 = version == MqttProtocolVersion.V500;
        if (!MqttTopic.IsWithinLimits(filter, Options.MaxTopicLength, Options.MaxTopicLevels))
        {
            Metrics.LimitHit(filter.Length > Options.MaxTopicLength ? nameof(MqttBrokerOptions.MaxTopicLength) : nameof(MqttBrokerOptions.MaxTopicLevels));
            return v5 ? MqttReasonCode.TopicFilterInvalid : MqttReasonCode.UnspecifiedError;
        }

        if (_authorizer is not null && !_authorizer.MaySubscribe(identity, inner))
        {
            Metrics.Denied("subscribe");
            LogSubscribeDenied(identity.Name, LogText.Safe(session.ClientId), LogText.Safe(filter));
            return v5 ? MqttReasonCode.NotAuthorized : MqttReasonCode.UnspecifiedError;
        }

        var subscriber = new Subscriber(session, subscription.QoS, subscription.NoLocal, subscription.RetainAsPublished, subscriptionId);
        lock (session.Sync)
        {
            if (session.Subscriptions.Count >= Options.MaxSubscriptionsPerSession && !session.Subscriptions.ContainsKey(filter))
            {
                Metrics.LimitHit(nameof(MqttBrokerOptions.MaxSubscriptionsPerSession));
                return v5 ? MqttReasonCode.QuotaExceeded : MqttReasonCode.UnspecifiedError;
            }

            isNew = _tree.Add(inner, group, subscriber);
            session.Subscriptions[filter] = new SessionSubscription(subscription, subscriptionId, group, inner);
        }

        return (MqttReasonCode)subscription.QoS;
    }

    internal bool Unsubscribe(MqttSession session, string filter)
    {
        lock (session.Sync)
        {
            if (!session.Subscriptions.Remove(filter, out var subscription))
            {
                return false;
            }

            _tree.Remove(subscription.Filter, subscription.ShareGroup, session);
            return true;
        }
    }

    /// <summary>Queues the retained messages matching a new subscription (<see cref="MqttRetainedMessageStore.ForSubscription"/>).</summary>
    internal void EnqueueRetained(MqttSession session, MqttSubscription subscription, uint subscriptionId)
    {
        foreach (var outbound in _retained.ForSubscription(subscription, subscriptionId))
        {
            Enqueue(session, outbound);
        }
    }

    // ------------------------------------------------------------ routing

    /// <summary>Stores a retained message and hands the message to every matching session's queue.</summary>
    internal void Route(MqttMessage message, long now)
    {
        Metrics.MessageReceived();
        if (message.Retain && _retained.Store(message) is { } limit)
        {
            ReportRetainedNotKept(limit, message.Topic);
        }

        var matches = t_matches ??= [];
        matches.Clear();
        _tree.Match(message.Topic, matches);
        if (matches.Count == 1)
        {
            var only = matches[0];
            if (!(only.NoLocal && ReferenceEquals(only.Session, message.Sender)))
            {
                Deliver(message, only.Session, only.QoS, only.RetainAsPublished, only.SubscriptionId == 0 ? null : [only.SubscriptionId]);
            }
        }
        else if (matches.Count > 1)
        {
            RouteToMany(message, matches);
        }

        matches.Clear();
    }

    /// <summary>Overlapping subscriptions of one session: one delivery, the highest QoS, every subscription id [MQTT-3.3.5-1].</summary>
    private void RouteToMany(MqttMessage message, List<Subscriber> matches)
    {
        var bySession = new Dictionary<MqttSession, (MqttQoS QoS, bool Rap, List<uint>? Ids)>(ReferenceEqualityComparer.Instance);
        foreach (var s in matches)
        {
            if (s.NoLocal && ReferenceEquals(s.Session, message.Sender))
            {
                continue;
            }

            bySession.TryGetValue(s.Session, out var current);
            var ids = current.Ids;
            if (s.SubscriptionId != 0)
            {
                (ids ??= []).Add(s.SubscriptionId);
            }

            bySession[s.Session] = ((MqttQoS)Math.Max((int)current.QoS, (int)s.QoS), current.Rap || s.RetainAsPublished, ids);
        }

        foreach (var (session, (qos, rap, ids)) in bySession)
        {
            Deliver(message, session, qos, rap, ids?.ToArray());
        }
    }

    private void Deliver(MqttMessage message, MqttSession session, MqttQoS subscriptionQoS, bool retainAsPublished, uint[]? ids)
    {
        var qos = (MqttQoS)Math.Min((int)message.QoS, (int)subscriptionQoS);

        // QoS 0 is not queued for a disconnected session (as Mosquitto does by default).
        if (qos == MqttQoS.AtMostOnce && session.Connection is null)
        {
            return;
        }

        Enqueue(session, new OutboundMessage(message, qos, retainAsPublished && message.Retain, ids));
    }

    /// <summary>
    /// Queues a message for a session. A full queue (<see cref="MqttBrokerOptions.MaxQueuedMessages"/> or
    /// <see cref="MqttBrokerOptions.MaxQueuedBytesPerSession"/>) drops the new message: counted per cause and per session
    /// (<c>saito.mqtt.subscriber.dropped</c>), and logged at most once per <see cref="DropLogInterval"/> per session.
    /// The publisher is never held back by a subscriber (docs/mqtt.md, "A slow subscriber").
    /// </summary>
    private void Enqueue(MqttSession session, OutboundMessage outbound)
    {
        long size = MqttSession.QueuedSize(outbound.Message);
        long droppedSinceLog;
        long droppedTotal;
        lock (session.Sync)
        {
            bool bytesFull = session.QueuedBytes > 0 && session.QueuedBytes + size > Options.MaxQueuedBytesPerSession;
            if (session.QueuedCount < Options.MaxQueuedMessages && !bytesFull)
            {
                session.EnqueueQueued(outbound);
                droppedSinceLog = 0;
                droppedTotal = 0;
            }
            else
            {
                Metrics.Dropped(bytesFull ? "queue_bytes_full" : "queue_full");
                droppedSinceLog = session.RecordDrop(Environment.TickCount64, (long)DropLogInterval.TotalMilliseconds);
                droppedTotal = session.Dropped;
                if (droppedSinceLog == 0)
                {
                    return;
                }
            }
        }

        if (droppedTotal > 0)
        {
            LogQueueFull(LogText.Safe(session.ClientId), Options.MaxQueuedMessages, Options.MaxQueuedBytesPerSession, droppedSinceLog, droppedTotal);
            return;
        }

        session.Connection?.Signal();
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
                // A packet begun and not finished in time: its sender trickles or stopped, and holds what it sent so far.
                Metrics.LimitHit(nameof(MqttBrokerOptions.PacketReadTimeoutSeconds));
                if (_packetTimeoutReports.Due(++_packetTimeouts) is > 0 and var closed)
                {
                    LogPacketTimeout(connection.Info.RemoteEndPoint?.ToString() ?? connection.Info.Transport, LogText.Safe(connection.ClientId),
                        Options.PacketReadTimeoutSeconds, closed, _packetTimeouts);
                }

                connection.Close(MqttReasonCode.KeepAliveTimeout);
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

    /// <summary>
    /// Logs a retained message that a limit kept out: the first, then at most once per <see cref="DropLogInterval"/> with
    /// how many since the last report, so a client that floods new retained topics cannot flood the log.
    /// </summary>
    private void ReportRetainedNotKept(string limit, string topic)
    {
        long total = Interlocked.Increment(ref _retainedNotKept);
        if (_retainedNotKeptReports.Due(total) is not (> 0 and var since))
        {
            return;
        }

        LogRetainedNotKept(LogText.Safe(topic), limit, limit == nameof(MqttBrokerOptions.MaxRetainedMessages) ? Options.MaxRetainedMessages : Options.MaxRetainedBytes,
            since, total);
    }

    [LoggerMessage(1024, LogLevel.Warning,
        "Retained message on {Topic} not kept: Mqtt:{Limit} ({LimitValue}) reached; {NotKept} not kept since the last report, {Total} in all. " +
        "They were still delivered to current subscribers and acknowledged; later subscribers get the topic's previous retained message, if it had one")]
    private partial void LogRetainedNotKept(string topic, string limit, long limitValue, long notKept, long total);

    [LoggerMessage(1012, LogLevel.Warning,
        "Queue of {ClientId} is full (Mqtt:MaxQueuedMessages {Limit}, Mqtt:MaxQueuedBytesPerSession {LimitBytes}): {Dropped} new messages for it dropped since the last report, {Total} in all; it reads slower than messages arrive")]
    private partial void LogQueueFull(string clientId, int limit, long limitBytes, long dropped, long total);

    [LoggerMessage(1021, LogLevel.Information, "MQTT connections are served now: start-up work ({Work}) done after {Milliseconds} ms")]
    private partial void LogGatesOpened(string work, long milliseconds);

    [LoggerMessage(1022, LogLevel.Warning,
        "MQTT connections are served now although start-up work ({Work}) is not done after {Seconds} s (Mqtt:StartupWaitSeconds)")]
    private partial void LogGatesTimedOut(string work, int seconds);

    [LoggerMessage(1023, LogLevel.Error, "Waiting for start-up work ({Work}) failed; MQTT connections are served now")]
    private partial void LogGateFailed(Exception exception, string work);

    [LoggerMessage(1013, LogLevel.Information, "Connection from {Remote} sent no CONNECT in time; closed")]
    private partial void LogConnectTimeout(string? remote);

    [LoggerMessage(1014, LogLevel.Information, "{ClientId} silent for 1.5 x its keep-alive of {KeepAlive} s; closed")]
    private partial void LogKeepAliveTimeout(string clientId, long keepAlive);

    [LoggerMessage(1017, LogLevel.Warning, "Denied: {Identity} (client {ClientId}) may not subscribe to {Filter}")]
    private partial void LogSubscribeDenied(string identity, string clientId, string filter);

    [LoggerMessage(1027, LogLevel.Warning,
        "Connection from {Remote} (client '{ClientId}') did not finish a packet within {Seconds} s (Mqtt:PacketReadTimeoutSeconds); closed. " +
        "{Closed} closed since the last report, {Total} in all")]
    private partial void LogPacketTimeout(string remote, string clientId, int seconds, long closed, long total);

    [LoggerMessage(1028, LogLevel.Warning,
        "Connection from {Remote} (client '{ClientId}') closed: its packet, unfinished the longest, held {Bytes} bytes while packets not yet received " +
        "whole held more than Mqtt:MaxUnfinishedPacketBytes ({Limit}); {Closed} closed since the last report, {Total} in all")]
    private partial void LogUnfinishedShed(string remote, string clientId, long bytes, long limit, long closed, long total);

    [LoggerMessage(1026, LogLevel.Warning,
        "Connection from {Remote}, which sent no CONNECT yet, closed for a newer one: Mqtt:{Limit} reached ({Evicted} closed so far, logged one in a thousand)")]
    private partial void LogPendingEvicted(string remote, string limit, long evicted);

    [LoggerMessage(1016, LogLevel.Warning, "Connection from {Remote} closed at once: {Limit} reached ({Refused} refused so far)")]
    private partial void LogAdmissionRefused(string remote, string limit, long refused);

    /// <summary>Whether the topic ACL lets <paramref name="identity"/> publish to <paramref name="topic"/>.</summary>
    internal bool MayPublish(MqttClientIdentity identity, string topic) => _authorizer is null || _authorizer.MayPublish(identity, topic);
}

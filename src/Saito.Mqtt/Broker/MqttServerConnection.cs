using System.Buffers;
using System.IO.Pipelines;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// One client connection on the broker: a read loop that decodes and handles packets, and a send loop
/// that is the only writer to the transport. Everything the send loop writes comes from three places:
/// control packets (bounded channel), acknowledgements of inbound publishes (ordered, released by the
/// publish hook), and the session's queue of outbound messages (bounded, inflight window).
/// </summary>
internal sealed partial class MqttServerConnection
{
    private const int ControlCapacity = 1024;
    private const int MaxMessagesPerFlush = 256;

    private readonly MqttBroker _broker;
    private readonly IDuplexPipe _transport;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _closed;
    private readonly Channel<MqttPacket> _control = Channel.CreateBounded<MqttPacket>(new BoundedChannelOptions(ControlCapacity) { SingleReader = true });
    private readonly Channel<bool> _signal = Channel.CreateBounded<bool>(new BoundedChannelOptions(1) { FullMode = BoundedChannelFullMode.DropWrite, SingleReader = true });
    private readonly Queue<PendingAck> _acks = new();
    private readonly Lock _ackLock = new();
    private readonly MqttProperties _scratch = new();
    private readonly List<uint> _scratchIds = [];

    private Task? _sendLoop;
    private int _pendingAcks;
    private long _pendingBytes;
    private int _leftPending;
    private double _tokens;
    private long _tokensAt;
    private TaskCompletionSource? _ackSpace;
    private Dictionary<ushort, string>? _inboundAliases;
    private Dictionary<string, ushort>? _outboundAliases;
    private int _clientMaxPacketSize = int.MaxValue;
    private int _outboundInflightLimit;
    private int _clientTopicAliasMaximum;
    private bool _resendInflight;
    private MqttWill? _will;
    private bool _publishWill = true;
    private volatile bool _connected;
    private int _closing;

    public MqttServerConnection(MqttBroker broker, IDuplexPipe transport, MqttConnectionInfo info, ILogger logger, CancellationToken serverStopping)
    {
        _broker = broker;
        _transport = transport;
        Info = info;
        _logger = logger;
        _closed = CancellationTokenSource.CreateLinkedTokenSource(serverStopping);
        LastReceived = Environment.TickCount64;
        _tokensAt = LastReceived;
        _tokens = broker.Options.MaxMessagesPerSecondPerClient;
        ConnectDeadline = LastReceived + (broker.Options.ConnectTimeoutSeconds * 1000L);
    }

    public MqttConnectionInfo Info { get; }
    public MqttProtocolVersion Version { get; private set; } = MqttProtocolVersion.V311;
    public string ClientId { get; private set; } = string.Empty;
    public string? UserName { get; private set; }

    /// <summary>Who the client authenticated as (anonymous until CONNECT is accepted).</summary>
    public MqttClientIdentity Identity { get; private set; } = MqttClientIdentity.Anonymous;
    public MqttSession? Session { get; private set; }
    public bool IsConnected => _connected;

    /// <summary>Environment.TickCount64 of the last bytes received (keep-alive).</summary>
    public long LastReceived { get; private set; }

    public long ConnectDeadline { get; }

    /// <summary>Keep-alive in milliseconds; 0 means none.</summary>
    public long KeepAliveMs { get; private set; }

    /// <summary>True when this connection's session was taken over by a newer connection with the same client id.</summary>
    public bool TakenOver { get; private set; }

    public async Task RunAsync()
    {
        _sendLoop = SendLoopAsync();
        MqttReasonCode? closeReason = null;
        try
        {
            await ReadLoopAsync();
        }
        catch (MqttUnsupportedProtocolException ex)
        {
            Log.UnsupportedProtocol(_logger, RemoteName, ex.ProtocolName, ex.Level);
            _broker.Metrics.ProtocolError(ex.ReasonCode);

            // 3.1.1 servers answer an unknown level with return code 1 in a 3.1.1 CONNACK; a 5.0 server with 0x84.
            var refusal = ex.Level > (byte)MqttProtocolVersion.V500
                ? (ConnAck: new ConnAckPacket { ReasonCode = (byte)MqttReasonCode.UnsupportedProtocolVersion }, Version: MqttProtocolVersion.V500)
                : (ConnAck: new ConnAckPacket { ReasonCode = (byte)MqttConnectReturnCode.UnacceptableProtocolVersion }, Version: MqttProtocolVersion.V311);
            Version = refusal.Version;
            _control.Writer.TryWrite(refusal.ConnAck);
        }
        catch (MqttPublishRefusedException ex)
        {
            Log.PublishRefusedClosed(_logger, RemoteName, LogId, ex.ReasonCode, ex.Message);
        }
        catch (MqttProtocolException ex)
        {
            Log.ProtocolViolation(_logger, RemoteName, LogId, ex.ReasonCode, ex.Message);
            _broker.Metrics.ProtocolError(ex.ReasonCode);
            closeReason = ex.ReasonCode;
        }
        catch (OperationCanceledException) when (_closed.IsCancellationRequested)
        {
            // Closed by keep-alive, takeover, shutdown or an abort: already logged where it was decided.
        }
        catch (Exception ex) when (ex is IOException or ConnectionAbortedException or ObjectDisposedException or InvalidOperationException)
        {
            Log.TransportFailed(_logger, RemoteName, LogId, ex.Message);
        }

        await CloseAsync(closeReason);
    }

    private string RemoteName => Info.RemoteEndPoint?.ToString() ?? Info.Transport;

    /// <summary>The client id as a log line may carry it (see <see cref="LogText"/>).</summary>
    private string LogId => LogText.Safe(ClientId);

    /// <summary>Stops counting this connection as one that has not sent CONNECT (once).</summary>
    public void LeavePending()
    {
        if (Interlocked.Exchange(ref _leftPending, 1) == 0)
        {
            _broker.LeftPending();
        }
    }

    /// <summary>Wakes the send loop: something was queued for it.</summary>
    public void Signal() => _signal.Writer.TryWrite(true);

    /// <summary>Closes the connection from outside (keep-alive, takeover, shutdown), telling a 5.0 client why.</summary>
    public void Close(MqttReasonCode reason, bool takenOver = false)
    {
        if (Interlocked.Exchange(ref _closing, 1) != 0)
        {
            return;
        }

        TakenOver = takenOver;
        if (_connected && Version == MqttProtocolVersion.V500)
        {
            _control.Writer.TryWrite(new DisconnectPacket { ReasonCode = reason });
        }

        _control.Writer.TryComplete();
        Signal();

        // Give the send loop a moment to get the DISCONNECT out, then stop reading.
        _closed.CancelAfter(TimeSpan.FromMilliseconds(500));
    }

    private async Task CloseAsync(MqttReasonCode? protocolError)
    {
        var sender = _sendLoop!;
        bool first = Interlocked.Exchange(ref _closing, 1) == 0;

        // Only a connected 5.0 client is told why; before CONNACK the standard wants a plain close.
        if (first && protocolError is { } reason && _connected && Version == MqttProtocolVersion.V500)
        {
            _control.Writer.TryWrite(new DisconnectPacket { ReasonCode = reason });
        }

        _control.Writer.TryComplete();
        Signal();
        try
        {
            await sender.WaitAsync(TimeSpan.FromSeconds(2));
        }
        catch (TimeoutException)
        {
            // The peer stopped reading and the last packets cannot get out: drop the connection hard (RST).
            Log.SendStuck(_logger, RemoteName, LogId);
            Info.Abort?.Invoke();
        }

        // Otherwise completing the pipes lets the transport close in order (FIN): aborting would send RST, which
        // makes the peer's kernel throw away what it has not read yet, our last acknowledgements included.
        await _closed.CancelAsync();
        await sender.ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
        await _transport.Input.CompleteAsync();
        await _transport.Output.CompleteAsync();
        lock (_ackLock)
        {
            _ackSpace?.TrySetResult();
        }

        if (_connected)
        {
            _connected = false;
            _broker.OnConnectionClosed(this, _publishWill ? _will : null);
            Log.Disconnected(_logger, LogId, RemoteName);
        }

        _broker.Unregister(this);
        _closed.Dispose();
    }

    // ---------------------------------------------------------------- read side

    private async Task ReadLoopAsync()
    {
        var input = _transport.Input;
        int maxPacketSize = _broker.Options.MaxPacketSize;
        var token = _closed.Token;
        while (true)
        {
            var result = await input.ReadAsync(token);
            var buffer = result.Buffer;
            try
            {
                while (MqttFrameReader.TryRead(ref buffer, maxPacketSize, out var frame))
                {
                    // Keep-alive counts whole control packets [MQTT-3.1.2-24]: a trickle of bytes does not keep a connection alive.
                    LastReceived = Environment.TickCount64;
                    _broker.Metrics.PacketReceived(frame.Size);
                    if (!await HandleAsync(frame, token))
                    {
                        return;
                    }
                }
            }
            finally
            {
                input.AdvanceTo(buffer.Start, buffer.End);
            }

            if (result.IsCompleted || result.IsCanceled)
            {
                return;
            }
        }
    }

    /// <summary>Handles one packet; false ends the read loop (DISCONNECT).</summary>
    private async ValueTask<bool> HandleAsync(MqttFrame frame, CancellationToken token)
    {
        if (!_connected)
        {
            if (frame.Type != MqttPacketType.Connect)
            {
                throw MqttProtocolException.Protocol($"{frame.Type} before CONNECT");
            }

            return await HandleConnectAsync(MqttPacketDecoder.DecodeConnect(frame), token);
        }

        switch (frame.Type)
        {
            case MqttPacketType.Publish:
                await HandlePublishAsync(frame, token);
                return true;
            case MqttPacketType.PubAck:
            case MqttPacketType.PubRec:
            case MqttPacketType.PubRel:
            case MqttPacketType.PubComp:
                await HandleAckAsync((PublishAckPacket)MqttPacketDecoder.Decode(frame, Version), token);
                return true;
            case MqttPacketType.Subscribe:
                await HandleSubscribeAsync((SubscribePacket)MqttPacketDecoder.Decode(frame, Version), token);
                return true;
            case MqttPacketType.Unsubscribe:
                await HandleUnsubscribeAsync((UnsubscribePacket)MqttPacketDecoder.Decode(frame, Version), token);
                return true;
            case MqttPacketType.PingReq:
                MqttPacketDecoder.Decode(frame, Version);
                await SendControlAsync(PingRespPacket.Instance, token);
                return true;
            case MqttPacketType.Disconnect:
                HandleDisconnect((DisconnectPacket)MqttPacketDecoder.Decode(frame, Version));
                return false;
            case MqttPacketType.Connect:
                throw MqttProtocolException.Protocol("Second CONNECT on one connection");
            case MqttPacketType.Auth:
                MqttPacketDecoder.Decode(frame, Version);
                throw MqttProtocolException.Protocol("AUTH without an authentication method");
            default:
                throw MqttProtocolException.Protocol($"A client does not send {frame.Type}");
        }
    }

    private async ValueTask<bool> HandleConnectAsync(ConnectPacket connect, CancellationToken token)
    {
        LeavePending();
        Version = connect.ProtocolVersion;
        var options = _broker.Options;
        bool v5 = Version == MqttProtocolVersion.V500;
        string clientId = connect.ClientId;
        string? assignedId = null;
        if (clientId.Length == 0)
        {
            if (!v5 && !connect.CleanStart)
            {
                return await RefuseAsync(MqttConnectReturnCode.IdentifierRejected, MqttReasonCode.ClientIdentifierNotValid,
                    "empty client id with a persistent session", token);
            }

            clientId = assignedId = "saito-" + Guid.NewGuid().ToString("N");
        }

        ClientId = clientId;
        UserName = connect.UserName;
        if (clientId.Length > options.MaxClientIdLength || LogText.HasControlCharacters(clientId))
        {
            if (clientId.Length > options.MaxClientIdLength)
            {
                _broker.Metrics.LimitHit(nameof(MqttBrokerOptions.MaxClientIdLength));
            }

            return await RefuseAsync(MqttConnectReturnCode.IdentifierRejected, MqttReasonCode.ClientIdentifierNotValid,
                clientId.Length > options.MaxClientIdLength
                    ? $"client id of {clientId.Length} characters (Mqtt:MaxClientIdLength is {options.MaxClientIdLength})"
                    : "client id with control characters", token);
        }

        if (connect.Properties?.AuthenticationMethod is not null)
        {
            return await RefuseAsync(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.BadAuthenticationMethod,
                "enhanced authentication is not supported", token);
        }

        if (!_broker.TryReserveConnectionSlot())
        {
            return await RefuseAsync(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.ServerBusy,
                $"connection limit of {options.MaxConnections} reached", token);
        }

        var outcome = await _broker.AuthenticateAsync(this, connect, token);
        var auth = outcome.Result;
        if (auth != MqttAuthenticationResult.Success || outcome.Identity is null)
        {
            _broker.ReleaseConnectionSlot();
            return auth == MqttAuthenticationResult.BadUserNameOrPassword
                ? await RefuseAsync(MqttConnectReturnCode.BadUserNameOrPassword, MqttReasonCode.BadUserNameOrPassword, "bad user name or password", token)
                : await RefuseAsync(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized, "not authorized", token);
        }

        var p = connect.Properties;
        _outboundInflightLimit = Math.Min(options.MaxInflightMessages, p?.ReceiveMaximum ?? ushort.MaxValue);
        _clientMaxPacketSize = (int)Math.Min(p?.MaximumPacketSize ?? int.MaxValue, int.MaxValue);
        _clientTopicAliasMaximum = p?.TopicAliasMaximum ?? 0;
        uint requestedExpiry = v5 ? p?.SessionExpiryInterval ?? 0 : connect.CleanStart ? 0 : uint.MaxValue;
        uint expiry = Math.Min(requestedExpiry, options.MaxSessionExpirySeconds);
        int keepAlive = connect.KeepAliveSeconds;
        if (options.ServerKeepAliveSeconds is { } serverKeepAlive)
        {
            keepAlive = v5 || keepAlive == 0 || keepAlive > serverKeepAlive ? serverKeepAlive : keepAlive;
        }

        KeepAliveMs = keepAlive * 1000L;
        _will = connect.Will;

        Identity = outcome.Identity;
        if (_broker.AttachSession(this, clientId, connect.CleanStart, expiry) is not var (session, present))
        {
            _broker.ReleaseConnectionSlot();
            return await RefuseAsync(MqttConnectReturnCode.ServerUnavailable, MqttReasonCode.QuotaExceeded,
                $"session limit of {options.MaxSessions} reached (Mqtt:MaxSessions)", token);
        }

        Session = session;

        var connAck = new ConnAckPacket { SessionPresent = present, ReasonCode = 0 };
        if (v5)
        {
            var props = new MqttProperties
            {
                ReceiveMaximum = options.ReceiveMaximum == ushort.MaxValue ? null : (ushort)options.ReceiveMaximum,
                MaximumPacketSize = (uint)options.MaxPacketSize,
                TopicAliasMaximum = options.TopicAliasMaximum == 0 ? null : (ushort)options.TopicAliasMaximum,
                AssignedClientIdentifier = assignedId,
                SessionExpiryInterval = expiry != requestedExpiry ? expiry : null,
                ServerKeepAlive = options.ServerKeepAliveSeconds is { } ska ? (ushort)ska : null,
            };
            connAck.Properties = props;
        }

        _resendInflight = present;
        await SendControlAsync(connAck, token);
        _connected = true;
        Log.Connected(_logger, LogId, Identity.Name, RemoteName, Info.Transport, Version, present);
        Signal();
        return true;
    }

    private async ValueTask<bool> RefuseAsync(MqttConnectReturnCode code311, MqttReasonCode code5, string why, CancellationToken token)
    {
        Log.ConnectRefused(_logger, LogId, RemoteName, why);
        _broker.Metrics.ConnectRefused();
        byte code = Version == MqttProtocolVersion.V500 ? (byte)code5 : (byte)code311;
        await SendControlAsync(new ConnAckPacket { ReasonCode = code }, token);
        return false;
    }

    private async ValueTask HandlePublishAsync(MqttFrame frame, CancellationToken token)
    {
        await ThrottleAsync(token);
        var publish = MqttPacketDecoder.DecodePublish(frame, Version, _broker.TopicCache);
        var properties = publish.Properties;
        string topic = ResolveTopicAlias(publish.Topic, properties);
        if (properties?.SubscriptionIdentifiers is not null)
        {
            throw MqttProtocolException.Protocol("A client PUBLISH carries a subscription identifier");
        }

        var options = _broker.Options;
        if (!MqttTopic.IsWithinLimits(topic, options.MaxTopicLength, options.MaxTopicLevels))
        {
            string limit = topic.Length > options.MaxTopicLength ? nameof(MqttBrokerOptions.MaxTopicLength) : nameof(MqttBrokerOptions.MaxTopicLevels);
            _broker.Metrics.LimitHit(limit);
            await RefusePublishAsync(publish, MqttReasonCode.TopicNameInvalid, $"topic over Mqtt:{limit}", token);
            return;
        }

        if (!_broker.MayPublish(Identity, topic))
        {
            _broker.Metrics.Denied("publish");
            Log.PublishDenied(_logger, Identity.Name, LogId, LogText.Safe(topic));
            await RefusePublishAsync(publish, MqttReasonCode.NotAuthorized, "not authorized for this topic", token);
            return;
        }

        var session = Session!;
        if (publish.QoS == MqttQoS.ExactlyOnce)
        {
            bool duplicate;
            int awaitingRelease;
            PendingAck? original;
            lock (session.Sync)
            {
                duplicate = !session.InboundQoS2.Add(publish.PacketId);
                awaitingRelease = session.InboundQoS2.Count;
                session.InboundQoS2Pending.TryGetValue(publish.PacketId, out original);
            }

            if (duplicate && original is { Completion: { } first } && !first.Task.IsCompleted)
            {
                // The first copy (on this or an earlier connection of the session) still waits for its commit: the
                // PUBREC for this copy goes out with that verdict, in order, never before the data is safe.
                var follower = new PendingAck(publish.PacketId, publish.QoS, 0);
                await EnqueueAckAsync(follower, token);
                _broker.Track(FollowAsync(first.Task, follower));
                return;
            }

            if (duplicate)
            {
                // Method A: routed once already; the client resent before it saw PUBREC. Acknowledge again, in order.
                await EnqueueAckAsync(new PendingAck(publish.PacketId, publish.QoS, 0) { Verdict = MqttPublishVerdict.Accepted, Done = true }, token);
                Signal();
                return;
            }

            if (Version == MqttProtocolVersion.V500 && awaitingRelease + _pendingAcks > _broker.Options.ReceiveMaximum)
            {
                throw new MqttProtocolException(MqttReasonCode.ReceiveMaximumExceeded, "More unacknowledged QoS 2 publishes than the receive maximum");
            }
        }

        long now = Environment.TickCount64;
        byte[] payload = publish.Payload.ToArray();
        var message = MqttMessage.Create(topic, payload, publish.QoS, publish.Retain, properties, session, now);
        _broker.Route(message, now);

        var pending = new PendingAck(publish.PacketId, publish.QoS, payload.Length)
        {
            Completion = publish.QoS == MqttQoS.ExactlyOnce ? new TaskCompletionSource<MqttPublishVerdict>(TaskCreationOptions.RunContinuationsAsynchronously) : null,
        };
        if (pending.Completion is not null)
        {
            lock (session.Sync)
            {
                session.InboundQoS2Pending[publish.PacketId] = pending;
            }
        }

        await EnqueueAckAsync(pending, token);
        var hook = _broker.PublishHook;
        if (hook is null)
        {
            Complete(pending, MqttPublishVerdict.Accepted);
            return;
        }

        var inbound = new MqttInboundPublish
        {
            ClientId = ClientId,
            UserName = UserName,
            Topic = topic,
            Payload = payload,
            QoS = publish.QoS,
            Retain = publish.Retain,
            Properties = message.Properties,
            ProtocolVersion = Version,
            ReceivedAt = DateTimeOffset.UtcNow,
        };
        ValueTask<MqttPublishVerdict> verdict;
        try
        {
            verdict = hook.OnPublishAsync(inbound, _broker.StoppingToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            Log.HookFailed(_logger, LogId, LogText.Safe(topic), ex);
            Complete(pending, MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError, "publish hook failed"));
            return;
        }

        if (verdict.IsCompletedSuccessfully)
        {
            Complete(pending, verdict.Result);
        }
        else
        {
            _broker.Track(AwaitVerdictAsync(verdict, pending, topic));
        }
    }

    private async Task AwaitVerdictAsync(ValueTask<MqttPublishVerdict> verdict, PendingAck pending, string topic)
    {
        MqttPublishVerdict result;
        try
        {
            result = await verdict;
        }
        catch (Exception ex)
        {
            Log.HookFailed(_logger, LogId, LogText.Safe(topic), ex);
            result = MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError, "publish hook failed");
        }

        Complete(pending, result);
    }

    private void Complete(PendingAck pending, MqttPublishVerdict verdict)
    {
        pending.Verdict = verdict;
        pending.Done = true;
        if (pending.Completion is { } completion && Session is { } session)
        {
            lock (session.Sync)
            {
                if (session.InboundQoS2Pending.TryGetValue(pending.PacketId, out var current) && ReferenceEquals(current, pending))
                {
                    session.InboundQoS2Pending.Remove(pending.PacketId);
                }

                if (!verdict.IsSuccess)
                {
                    // Not stored: a copy sent again must be handled afresh, not acknowledged as a duplicate.
                    session.InboundQoS2.Remove(pending.PacketId);
                }
            }

            completion.TrySetResult(verdict);
        }

        Signal();
    }

    /// <summary>Completes <paramref name="follower"/> with the first copy's verdict when it lands (a completion source never faults here).</summary>
    private Task FollowAsync(Task<MqttPublishVerdict> first, PendingAck follower) =>
        first.ContinueWith(t => Complete(follower, t.Result), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    /// <summary>
    /// A publish the broker refuses before routing (topic over a limit, denied by the ACL). 5.0: a negative
    /// acknowledgement for QoS 1 and 2 (in order with the others), nothing for QoS 0. 3.1.1 has no negative
    /// acknowledgement: the connection is closed, unacknowledged.
    /// </summary>
    private async ValueTask RefusePublishAsync(PublishFrame publish, MqttReasonCode code, string why, CancellationToken token)
    {
        if (Version == MqttProtocolVersion.V311)
        {
            throw new MqttPublishRefusedException(code, why);
        }

        if (publish.QoS == MqttQoS.AtMostOnce)
        {
            _broker.Metrics.Dropped("refused");
            return;
        }

        await EnqueueAckAsync(new PendingAck(publish.PacketId, publish.QoS, 0) { Verdict = MqttPublishVerdict.Failed(code, why), Done = true }, token);
        Signal();
    }

    /// <summary>
    /// Mqtt:MaxMessagesPerSecondPerClient as a token bucket (a burst of one second's worth): when it is empty the read
    /// loop waits, so TCP pushes back on the client. Nothing is dropped.
    /// </summary>
    private async ValueTask ThrottleAsync(CancellationToken token)
    {
        int rate = _broker.Options.MaxMessagesPerSecondPerClient;
        if (rate == 0)
        {
            return;
        }

        long now = Environment.TickCount64;
        _tokens = Math.Min(rate, _tokens + ((now - _tokensAt) * rate / 1000.0));
        _tokensAt = now;
        if (_tokens < 1)
        {
            _broker.Metrics.LimitHit(nameof(MqttBrokerOptions.MaxMessagesPerSecondPerClient));
            int waitMs = (int)Math.Ceiling((1 - _tokens) * 1000.0 / rate);
            await Task.Delay(Math.Max(1, waitMs), token);
            now = Environment.TickCount64;
            _tokens = Math.Min(rate, _tokens + ((now - _tokensAt) * rate / 1000.0));
            _tokensAt = now;
        }

        _tokens--;
    }

    private async ValueTask EnqueueAckAsync(PendingAck pending, CancellationToken token)
    {
        while (true)
        {
            Task? wait = null;
            lock (_ackLock)
            {
                // Bytes too: a client may hold at most MaxPendingBytesPerClient of payload waiting for the commit
                // (one publish always fits, so a single large one is not stuck).
                bool bytesFit = _pendingBytes == 0 || _pendingBytes + pending.Size <= _broker.Options.MaxPendingBytesPerClient;
                if (_pendingAcks < _broker.Options.ReceiveMaximum && bytesFit)
                {
                    _pendingAcks++;
                    _pendingBytes += pending.Size;
                    _acks.Enqueue(pending);
                    return;
                }

                if (!bytesFit)
                {
                    _broker.Metrics.LimitHit(nameof(MqttBrokerOptions.MaxPendingBytesPerClient));
                }

                // Flow control: stop reading until the hook releases an acknowledgement.
                _ackSpace ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                wait = _ackSpace.Task;
            }

            await wait.WaitAsync(token);
        }
    }

    private string ResolveTopicAlias(string topic, MqttProperties? properties)
    {
        if (properties?.TopicAlias is not { } alias)
        {
            if (topic.Length == 0)
            {
                throw MqttProtocolException.Protocol("PUBLISH with an empty topic and no topic alias");
            }

            return topic;
        }

        if (alias == 0 || alias > _broker.Options.TopicAliasMaximum)
        {
            throw new MqttProtocolException(MqttReasonCode.TopicAliasInvalid, $"Topic alias {alias} is outside 1..{_broker.Options.TopicAliasMaximum}");
        }

        _inboundAliases ??= [];
        if (topic.Length > 0)
        {
            _inboundAliases[alias] = topic;
            return topic;
        }

        return _inboundAliases.TryGetValue(alias, out var known)
            ? known
            : throw MqttProtocolException.Protocol($"Topic alias {alias} used before it was set");
    }

    private async ValueTask HandleAckAsync(PublishAckPacket ack, CancellationToken token)
    {
        var session = Session!;
        switch (ack.Type)
        {
            case MqttPacketType.PubAck:
                lock (session.Sync)
                {
                    if (session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Outbound.QoS == MqttQoS.AtLeastOnce)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                }

                Signal();
                break;
            case MqttPacketType.PubRec:
                bool known;
                lock (session.Sync)
                {
                    known = session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Outbound.QoS == MqttQoS.ExactlyOnce;
                    if (known && (byte)ack.ReasonCode >= 0x80)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                    else if (known)
                    {
                        inflight!.Released = true;
                    }
                }

                if ((byte)ack.ReasonCode < 0x80)
                {
                    await SendControlAsync(new PublishAckPacket(MqttPacketType.PubRel)
                    {
                        PacketId = ack.PacketId,
                        ReasonCode = known ? MqttReasonCode.Success : MqttReasonCode.PacketIdentifierNotFound,
                    }, token);
                }
                else
                {
                    Signal();
                }

                break;
            case MqttPacketType.PubRel:
                bool had;
                lock (session.Sync)
                {
                    had = session.InboundQoS2.Remove(ack.PacketId);
                }

                await SendControlAsync(new PublishAckPacket(MqttPacketType.PubComp)
                {
                    PacketId = ack.PacketId,
                    ReasonCode = had ? MqttReasonCode.Success : MqttReasonCode.PacketIdentifierNotFound,
                }, token);
                break;
            case MqttPacketType.PubComp:
                lock (session.Sync)
                {
                    if (session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Released)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                }

                Signal();
                break;
        }
    }

    private async ValueTask HandleSubscribeAsync(SubscribePacket subscribe, CancellationToken token)
    {
        await ThrottleAsync(token);
        uint subscriptionId = 0;
        if (subscribe.Properties?.SubscriptionIdentifiers is [var requestedId, ..])
        {
            subscriptionId = requestedId;
        }

        var codes = new List<MqttReasonCode>(subscribe.Subscriptions.Count);
        var retainedToSend = new List<(MqttSubscription Options, uint Id)>();
        foreach (var s in subscribe.Subscriptions)
        {
            var code = _broker.Subscribe(Session!, Identity, s, subscriptionId, Version, out bool isNew);
            codes.Add(code);
            if ((byte)code < 0x80 && !MqttTopic.TryParseShared(s.TopicFilter, out _, out _, out _) &&
                (s.RetainHandling == MqttRetainHandling.SendAtSubscribe || (s.RetainHandling == MqttRetainHandling.SendAtSubscribeIfNew && isNew)))
            {
                retainedToSend.Add((s, subscriptionId));
            }

            Log.Subscribed(_logger, LogId, LogText.Safe(s.TopicFilter), (byte)code);
        }

        await SendControlAsync(new SubAckPacket { PacketId = subscribe.PacketId, ReasonCodes = codes }, token);
        foreach (var (options, id) in retainedToSend)
        {
            _broker.EnqueueRetained(Session!, options, id);
        }
    }

    private async ValueTask HandleUnsubscribeAsync(UnsubscribePacket unsubscribe, CancellationToken token)
    {
        var codes = new List<MqttReasonCode>(unsubscribe.TopicFilters.Count);
        foreach (var filter in unsubscribe.TopicFilters)
        {
            codes.Add(_broker.Unsubscribe(Session!, filter) ? MqttReasonCode.Success : MqttReasonCode.NoSubscriptionExisted);
        }

        await SendControlAsync(new UnsubAckPacket { PacketId = unsubscribe.PacketId, ReasonCodes = codes }, token);
    }

    private void HandleDisconnect(DisconnectPacket disconnect)
    {
        if (disconnect.Properties?.SessionExpiryInterval is { } expiry)
        {
            var session = Session!;
            if (session.ExpiryInterval == 0 && expiry != 0)
            {
                throw MqttProtocolException.Protocol("DISCONNECT sets a session expiry on a session that had none");
            }

            session.ExpiryInterval = Math.Min(expiry, _broker.Options.MaxSessionExpirySeconds);
        }

        // A normal DISCONNECT discards the will; 0x04 asks for it to be sent anyway.
        _publishWill = disconnect.ReasonCode == MqttReasonCode.DisconnectWithWillMessage;
        Interlocked.Exchange(ref _closing, 1);
    }

    private async ValueTask SendControlAsync(MqttPacket packet, CancellationToken token)
    {
        await _control.Writer.WriteAsync(packet, token);
        Signal();
    }

    // ---------------------------------------------------------------- send side

    private async Task SendLoopAsync()
    {
        await Task.Yield();
        var output = _transport.Output;
        var token = _closed.Token;
        try
        {
            while (true)
            {
                bool wrote = false;
                bool finished = false;
                while (_control.Reader.TryRead(out var packet))
                {
                    int size = MqttPacketEncoder.Encode(output, packet, Version);
                    _broker.Metrics.PacketSent(size);
                    wrote = true;
                    if (packet is DisconnectPacket || (packet is ConnAckPacket { ReasonCode: not 0 }))
                    {
                        finished = true;
                        break;
                    }
                }

                if (!finished && _connected && Volatile.Read(ref _closing) == 0)
                {
                    if (!WriteReadyAcks(output, ref wrote))
                    {
                        finished = true;
                    }

                    wrote |= _resendInflight && ResendInflight(output);
                    wrote |= WriteQueuedMessages(output);
                }

                if (wrote)
                {
                    var flush = await output.FlushAsync(token);
                    if (flush.IsCompleted || flush.IsCanceled)
                    {
                        return;
                    }
                }

                if (finished || (_control.Reader.Completion.IsCompleted && Volatile.Read(ref _closing) != 0))
                {
                    // Everything owed is written (a DISCONNECT or refusing CONNACK included): stop reading too.
                    await _closed.CancelAsync();
                    return;
                }

                if (!wrote)
                {
                    await _signal.Reader.ReadAsync(token);
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Closing.
        }
        catch (Exception ex) when (ex is IOException or ConnectionAbortedException or ObjectDisposedException or InvalidOperationException)
        {
            Log.TransportFailed(_logger, RemoteName, LogId, ex.Message);
            await _closed.CancelAsync();
        }
    }

    /// <summary>Writes acknowledgements whose verdicts are in, in arrival order. False when a 3.1.1 client must be dropped.</summary>
    private bool WriteReadyAcks(PipeWriter output, ref bool wrote)
    {
        while (true)
        {
            PendingAck ack;
            lock (_ackLock)
            {
                if (_acks.Count == 0 || !_acks.Peek().Done)
                {
                    return true;
                }

                ack = _acks.Dequeue();
                _pendingAcks--;
                _pendingBytes -= ack.Size;
                if (_ackSpace is { } space)
                {
                    _ackSpace = null;
                    space.TrySetResult();
                }
            }

            if (ack.QoS == MqttQoS.AtMostOnce)
            {
                continue;
            }

            var verdict = ack.Verdict;
            if (!verdict.IsSuccess)
            {
                _broker.Metrics.PublishRefused();
                Log.PublishRefused(_logger, LogId, ack.PacketId, verdict.ReasonCode, verdict.ReasonString);
                if (ack.QoS == MqttQoS.ExactlyOnce)
                {
                    lock (Session!.Sync)
                    {
                        Session.InboundQoS2.Remove(ack.PacketId);
                    }
                }

                if (Version == MqttProtocolVersion.V311)
                {
                    // 3.1.1 has no way to say "not stored": drop the connection unacknowledged so the client resends.
                    _closed.Cancel();
                    return false;
                }
            }

            var properties = verdict.ReasonString is null || verdict.IsSuccess ? null : new MqttProperties { ReasonString = verdict.ReasonString };
            int size = MqttPacketEncoder.EncodePublishAck(output, ack.QoS == MqttQoS.AtLeastOnce ? MqttPacketType.PubAck : MqttPacketType.PubRec,
                ack.PacketId, verdict.ReasonCode, properties, Version);
            _broker.Metrics.PacketSent(size);
            wrote = true;
        }
    }

    /// <summary>After a session resumes: PUBLISH again with DUP what was not acknowledged, PUBREL what was released, in original order.</summary>
    private bool ResendInflight(PipeWriter output)
    {
        _resendInflight = false;
        var session = Session!;
        bool wrote = false;
        lock (session.Sync)
        {
            foreach (var (packetId, inflight) in session.Inflight)
            {
                if (inflight.Released)
                {
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubRel, packetId, MqttReasonCode.Success, null, Version);
                }
                else
                {
                    WritePublish(output, inflight.Outbound, packetId, dup: true, Environment.TickCount64);
                }

                wrote = true;
            }
        }

        return wrote;
    }

    private bool WriteQueuedMessages(PipeWriter output)
    {
        var session = Session!;
        bool wrote = false;
        long now = Environment.TickCount64;
        lock (session.Sync)
        {
            for (int i = 0; i < MaxMessagesPerFlush && session.Queue.TryPeek(out var next); i++)
            {
                if (next.QoS != MqttQoS.AtMostOnce && session.Inflight.Count >= _outboundInflightLimit)
                {
                    break;
                }

                session.Queue.Dequeue();
                session.QueuedBytes -= next.Message.Payload.Length;
                if (next.Message.IsExpired(now))
                {
                    _broker.Metrics.Dropped("expired");
                    continue;
                }

                ushort packetId = 0;
                if (next.QoS != MqttQoS.AtMostOnce)
                {
                    packetId = session.NextPacketId();
                    session.Inflight.Add(packetId, new InflightMessage { Outbound = next, PacketId = packetId });
                }

                if (WritePublish(output, next, packetId, dup: false, now))
                {
                    wrote = true;
                }
                else if (packetId != 0)
                {
                    session.Inflight.Remove(packetId);
                }
            }
        }

        return wrote;
    }

    /// <summary>Encodes one outbound PUBLISH; false when it is too large for the client (dropped, as the standard says).</summary>
    private bool WritePublish(PipeWriter output, in OutboundMessage outbound, ushort packetId, bool dup, long now)
    {
        var message = outbound.Message;
        string topic = message.Topic;
        MqttProperties? properties = null;
        if (Version == MqttProtocolVersion.V500)
        {
            properties = OutboundProperties(outbound, now, ref topic);
        }

        if (_clientMaxPacketSize != int.MaxValue &&
            MqttPacketEncoder.PublishSize(Version, topic, message.Payload.Length, outbound.QoS, properties) > _clientMaxPacketSize)
        {
            _broker.Metrics.Dropped("too_large_for_client");
            return false;
        }

        int size = MqttPacketEncoder.EncodePublish(output, Version, topic, new ReadOnlySequence<byte>(message.Payload), outbound.QoS,
            outbound.Retain, dup, packetId, properties);
        _broker.Metrics.MessageSent(size);
        return true;
    }

    /// <summary>The properties of one outbound 5.0 PUBLISH, built in a reused object (encoding is synchronous).</summary>
    private MqttProperties? OutboundProperties(in OutboundMessage outbound, long now, ref string topic)
    {
        var source = outbound.Message.Properties;
        bool alias = _clientTopicAliasMaximum > 0;
        if (source is null && outbound.SubscriptionIds is null && !alias)
        {
            return null;
        }

        var p = _scratch;
        p.PayloadFormatIndicator = source?.PayloadFormatIndicator;
        p.ContentType = source?.ContentType;
        p.ResponseTopic = source?.ResponseTopic;
        p.CorrelationData = source?.CorrelationData;
        p.UserProperties = source?.UserProperties;
        p.MessageExpiryInterval = outbound.Message.ExpiresAt is { } at ? (uint)Math.Max(0, (at - now + 999) / 1000) : null;
        p.TopicAlias = null;
        if (outbound.SubscriptionIds is { } ids)
        {
            _scratchIds.Clear();
            _scratchIds.AddRange(ids);
            p.SubscriptionIdentifiers = _scratchIds;
        }
        else
        {
            p.SubscriptionIdentifiers = null;
        }

        if (alias)
        {
            _outboundAliases ??= new Dictionary<string, ushort>(StringComparer.Ordinal);
            if (_outboundAliases.TryGetValue(topic, out ushort existing))
            {
                p.TopicAlias = existing;
                topic = string.Empty;
            }
            else if (_outboundAliases.Count < _clientTopicAliasMaximum)
            {
                ushort next = (ushort)(_outboundAliases.Count + 1);
                _outboundAliases[topic] = next;
                p.TopicAlias = next;
            }
        }

        return p;
    }
}

using System.Text;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>
/// An MQTT 3.1.1 / 5.0 client: what Saito uses to run behind an external broker (Mosquitto, EMQX), several
/// instances sharing one stream through a shared subscription.
/// <list type="bullet">
/// <item><see cref="ConnectAsync"/> once; from then on the client reconnects by itself (exponential backoff with
/// jitter), resubscribes when the broker lost the session, and resends unacknowledged QoS 1/2 PUBLISH (DUP set)
/// and PUBREL when it kept it. <see cref="Connected"/> and <see cref="Disconnected"/> report each change.</item>
/// <item>Inbound messages arrive on <see cref="Messages"/>, one channel for the client's whole life, and are
/// acknowledged only by <see cref="MqttReceivedMessage.AcknowledgeAsync"/>.</item>
/// <item><see cref="PublishAsync(MqttApplicationMessage, CancellationToken)"/> completes when the QoS flow does.</item>
/// </list>
/// Every member is safe to call from several threads.
/// </summary>
public sealed partial class MqttClient : IAsyncDisposable
{
    private readonly MqttClientOptions _options;
    private readonly ILogger _logger;
    private readonly Channel<MqttReceivedMessage> _messages;
    private readonly Lock _sync = new();
    private ClientState _state;
    private MqttClientConnection? _current;
    private TaskCompletionSource _connectedSignal = NewSignal();
    private CancellationTokenSource? _supervisorStop;
    private Task? _supervisor;
    private string _clientId;

    public MqttClient(MqttClientOptions options, ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.ThrowIfInvalid();
        _options = options;
        _logger = logger ?? NullLogger.Instance;
        _clientId = options.ClientId;
        _messages = Channel.CreateBounded<MqttReceivedMessage>(new BoundedChannelOptions(options.ReceiveMaximum)
        {
            SingleWriter = true,
            FullMode = BoundedChannelFullMode.Wait,
        });
        _outboundQuota = new AsyncLimiter(MaxOutboundInFlight);
    }

    private enum ClientState
    {
        Idle,
        Connecting,
        Connected,
        Disconnecting,
        Disposed,
    }

    /// <summary>Raised after each successful CONNACK (and resubscription), the first one included.</summary>
    public event EventHandler<MqttClientConnectedEventArgs>? Connected;

    /// <summary>Raised when a connection ends, whoever ended it; says whether the client will reconnect.</summary>
    public event EventHandler<MqttClientDisconnectedEventArgs>? Disconnected;

    /// <summary>
    /// Every inbound PUBLISH, in arrival order, across reconnects. Bounded by
    /// <see cref="MqttClientOptions.ReceiveMaximum"/>: when the application falls behind, the client stops
    /// reading the socket and TCP pushes back on the broker. Completed by <see cref="DisposeAsync"/>.
    /// </summary>
    public ChannelReader<MqttReceivedMessage> Messages => _messages.Reader;

    public bool IsConnected
    {
        get
        {
            lock (_sync)
            {
                return _current is { IsClosed: false };
            }
        }
    }

    /// <summary>The identifier in use (a 5.0 broker may have assigned it).</summary>
    public string ClientId
    {
        get
        {
            lock (_sync)
            {
                return _clientId;
            }
        }
    }

    /// <summary>
    /// Connects (one attempt, bounded by <see cref="MqttClientOptions.ConnectTimeout"/>) and, on success, keeps the
    /// client connected until <see cref="DisconnectAsync"/>. Throws <see cref="MqttConnectException"/> carrying the
    /// CONNACK code when the broker refuses, <see cref="TimeoutException"/> when it does not answer in time,
    /// and the socket or TLS exception when it cannot be reached.
    /// </summary>
    public async Task<MqttConnectResult> ConnectAsync(CancellationToken cancellationToken = default)
    {
        lock (_sync)
        {
            ObjectDisposedException.ThrowIf(_state == ClientState.Disposed, this);
            if (_state != ClientState.Idle)
            {
                throw new InvalidOperationException($"The client is already {_state.ToString().ToLowerInvariant()}.");
            }

            _state = ClientState.Connecting;
            _outboundQuota.Reset();
        }

        try
        {
            var (connection, result) = await EstablishAsync(isReconnect: false, attempts: 1, cancellationToken);
            bool disposedMeanwhile;
            lock (_sync)
            {
                disposedMeanwhile = _state != ClientState.Connecting;
                if (!disposedMeanwhile)
                {
                    _state = ClientState.Connected;
                    _supervisorStop = new CancellationTokenSource();
                    _supervisor = SuperviseAsync(connection, _supervisorStop.Token);
                }
            }

            if (disposedMeanwhile)
            {
                await connection.DisposeAsync();
                ObjectDisposedException.ThrowIf(true, this);
            }

            return result;
        }
        catch (Exception ex)
        {
            lock (_sync)
            {
                if (_state == ClientState.Connecting)
                {
                    _state = ClientState.Idle;
                }

                EnterIdle(new MqttClientDisconnectedException("The connection attempt failed.", ex));
            }

            throw;
        }
    }

    /// <summary>
    /// Sends DISCONNECT (normal disconnection: the will is not published) and closes. Stops reconnecting.
    /// QoS 1/2 publishes still in flight fail with <see cref="MqttClientDisconnectedException"/>; a persistent
    /// session keeps them on the broker's side. <see cref="ConnectAsync"/> may be called again afterwards.
    /// </summary>
    public async Task DisconnectAsync(CancellationToken cancellationToken = default)
    {
        MqttClientConnection? connection;
        Task? supervisor;
        CancellationTokenSource? stop;
        lock (_sync)
        {
            if (_state != ClientState.Connected)
            {
                return;
            }

            _state = ClientState.Disconnecting;
            connection = _current;
            supervisor = _supervisor;
            stop = _supervisorStop;
        }

        try
        {
            await (stop?.CancelAsync() ?? Task.CompletedTask);
            if (connection is not null)
            {
                await connection.CloseAsync(new DisconnectPacket { ReasonCode = MqttReasonCode.NormalDisconnection },
                    _options.ConnectTimeout, cancellationToken);
            }

            if (supervisor is not null)
            {
                await supervisor;
            }
        }
        finally
        {
            lock (_sync)
            {
                _state = ClientState.Idle;
                _current = null;
                _supervisor = null;
                _supervisorStop = null;
                EnterIdle(new MqttClientDisconnectedException("The application disconnected the client."));
            }

            stop?.Dispose();
            MqttClientLog.Disconnected(_logger, _options.Host, _options.Port);
        }
    }

    /// <summary>Disconnects if connected and completes <see cref="Messages"/> (messages already in it can still be read).</summary>
    public async ValueTask DisposeAsync()
    {
        lock (_sync)
        {
            if (_state == ClientState.Disposed)
            {
                return;
            }
        }

        await DisconnectAsync(CancellationToken.None);
        lock (_sync)
        {
            _state = ClientState.Disposed;
            EnterIdle(new ObjectDisposedException(nameof(MqttClient)));
        }

        _outboundQuota.Close(new ObjectDisposedException(nameof(MqttClient)));
        _messages.Writer.TryComplete();
    }

    /// <summary>For tests: drops the network connection as a pulled cable would (no DISCONNECT), so the client reconnects.</summary>
    internal void AbortConnection()
    {
        MqttClientConnection? connection;
        lock (_sync)
        {
            connection = _current;
        }

        connection?.Abort(new MqttClientDisconnectedException("Connection aborted for a test."));
    }

    private static TaskCompletionSource NewSignal() => new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>One connection: TCP/TLS, CONNECT/CONNACK, session bookkeeping, loops started, resubscription.</summary>
    private async Task<(MqttClientConnection Connection, MqttConnectResult Result)> EstablishAsync(bool isReconnect, int attempts,
        CancellationToken cancellationToken)
    {
        ConnectPacket connect;
        lock (_sync)
        {
            connect = BuildConnectPacket(isReconnect);
        }

        MqttClientLog.Connecting(_logger, _options.Host, _options.Port, _options.ProtocolVersion, _options.Tls.Enabled, connect.ClientId);
        MqttClientConnection connection;
        ConnAckPacket connAck;
        using (var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken))
        {
            timeout.CancelAfter(_options.ConnectTimeout);
            try
            {
                (connection, connAck) = await MqttClientConnection.OpenAsync(_options, connect, _logger, timeout.Token);
            }
            catch (OperationCanceledException ex) when (!cancellationToken.IsCancellationRequested)
            {
                throw new TimeoutException($"No CONNACK from {_options.Host}:{_options.Port} within {_options.ConnectTimeout}.", ex);
            }
        }

        bool sessionPresent = connAck.SessionPresent;
        List<MqttSubscription>? resubscribe = null;
        MqttConnectResult result;
        int resentPublishes = 0;
        int resentReleases = 0;
        lock (_sync)
        {
            if (cancellationToken.IsCancellationRequested || _state is ClientState.Disconnecting or ClientState.Disposed)
            {
                connection.Abort(null);
            }
            else
            {
                if (connAck.Properties?.AssignedClientIdentifier is { Length: > 0 } assigned)
                {
                    _clientId = assigned;
                }

                ApplyServerLimits(connAck.Properties);
                if (!sessionPresent)
                {
                    // A new session: packet identifiers of the old one mean nothing any more.
                    _sessionEpoch++;
                    _inboundQoS2Released.Clear();
                }

                if (_subscriptions.Count > 0 && (!sessionPresent || (isReconnect && _options.AlwaysResubscribe)))
                {
                    resubscribe = [.. _subscriptions.Values];
                }

                _current = connection;
                (resentPublishes, resentReleases) = ResendInFlight(connection, sessionPresent);
                _connectedSignal.TrySetResult();
            }

            result = new MqttConnectResult(connAck, _clientId);
        }

        if (connection.IsClosed)
        {
            await connection.DisposeAsync();
            cancellationToken.ThrowIfCancellationRequested();
            throw new OperationCanceledException("The client was disconnected while connecting.");
        }

        connection.Start(HandleFrameAsync);
        if (isReconnect)
        {
            MqttClientLog.Reconnected(_logger, _options.Host, _options.Port, attempts, sessionPresent);
        }
        else
        {
            MqttClientLog.Connected(_logger, _options.Host, _options.Port, result.ClientId, sessionPresent);
        }

        if (resentPublishes + resentReleases > 0)
        {
            MqttClientLog.ResentInflight(_logger, resentPublishes, resentReleases);
        }

        if (resubscribe is not null)
        {
            await ResubscribeAsync(connection, resubscribe, cancellationToken);
        }

        Raise(Connected, new MqttClientConnectedEventArgs(result, isReconnect), nameof(Connected));
        return (connection, result);
    }

    /// <summary>Waits for each connection to end, then reconnects with backoff until stopped.</summary>
    private async Task SuperviseAsync(MqttClientConnection first, CancellationToken stop)
    {
        var connection = first;
        while (true)
        {
#pragma warning disable VSTHRD003 // VSTHRD003: no synchronization context in this library (sockets and thread pool only), so awaiting a task started elsewhere cannot deadlock.
            await connection.Completion;
#pragma warning restore VSTHRD003
            bool clientInitiated = stop.IsCancellationRequested;
            bool willReconnect = !clientInitiated && _options.Reconnect.Enabled;
            OnConnectionLost(connection, clientInitiated, willReconnect);
            if (!willReconnect)
            {
                return;
            }

            for (int attempt = 1; ; attempt++)
            {
                var delay = Backoff(attempt);
                MqttClientLog.ReconnectScheduled(_logger, attempt, _options.Host, _options.Port, delay);
                try
                {
                    await Task.Delay(delay, stop);
                    (connection, _) = await EstablishAsync(isReconnect: true, attempt, stop);
                    break;
                }
                catch (OperationCanceledException) when (stop.IsCancellationRequested)
                {
                    return;
                }
                catch (Exception ex)
                {
                    // Broker still down, refusing, or unreachable: logged, and the next attempt waits longer.
                    MqttClientLog.ConnectFailed(_logger, _options.Host, _options.Port, ex);
                }
            }
        }
    }

    private void OnConnectionLost(MqttClientConnection connection, bool clientInitiated, bool willReconnect)
    {
        var error = connection.Error;
        List<PendingRequest> orphaned;
        lock (_sync)
        {
            if (_current == connection)
            {
                _current = null;
            }

            if (_connectedSignal.Task.IsCompleted)
            {
                _connectedSignal = NewSignal();
            }

            orphaned = TakeRequests(connection);
            if (!clientInitiated && !willReconnect)
            {
                _state = ClientState.Idle;
                EnterIdle(new MqttClientDisconnectedException("The connection was lost and reconnecting is off.", error ?? new IOException()));
            }
        }

        var lost = new MqttClientDisconnectedException("The connection closed before the broker answered.");
        foreach (var request in orphaned)
        {
            request.Completion.TrySetException(lost);
        }

        if (!clientInitiated)
        {
            MqttClientLog.ConnectionLost(_logger, _options.Host, _options.Port, willReconnect, error);
        }

        Raise(Disconnected, new MqttClientDisconnectedEventArgs(clientInitiated ? null : error, clientInitiated, willReconnect), nameof(Disconnected));
    }

    /// <summary>Under the lock: nothing will connect any more until ConnectAsync; fail whoever waits.</summary>
    private void EnterIdle(Exception reason)
    {
        _connectedSignal.TrySetException(reason);
        _connectedSignal = NewSignal();
        FailOutbound(reason);
        foreach (var request in _requests.Values)
        {
            request.Completion.TrySetException(reason);
        }

        _requests.Clear();
    }

    /// <summary>The live connection, waiting through a reconnect if need be.</summary>
    private async Task<MqttClientConnection> WaitForConnectionAsync(CancellationToken cancellationToken)
    {
        while (true)
        {
            Task signal;
            lock (_sync)
            {
                ObjectDisposedException.ThrowIf(_state == ClientState.Disposed, this);
                if (_state is ClientState.Idle or ClientState.Disconnecting)
                {
                    throw new InvalidOperationException("The client is not connected: call ConnectAsync first.");
                }

                if (_current is { IsClosed: false } connection)
                {
                    return connection;
                }

                signal = _connectedSignal.Task;
            }

            await signal.WaitAsync(cancellationToken);
        }
    }

    private ConnectPacket BuildConnectPacket(bool isReconnect)
    {
        bool v5 = _options.ProtocolVersion == MqttProtocolVersion.V500;
        bool cleanStart = _options.CleanStart;
        if (isReconnect && v5 && _options.SessionExpiry != TimeSpan.Zero)
        {
            cleanStart = false;
        }

        MqttProperties? properties = null;
        if (v5)
        {
            properties = new MqttProperties();
            if (_options.SessionExpiry != TimeSpan.Zero)
            {
                properties.SessionExpiryInterval = _options.SessionExpiry == Timeout.InfiniteTimeSpan
                    ? uint.MaxValue
                    : (uint)_options.SessionExpiry.TotalSeconds;
            }

            if (_options.ReceiveMaximum != ushort.MaxValue)
            {
                properties.ReceiveMaximum = (ushort)_options.ReceiveMaximum;
            }

            if (_options.MaxPacketSize < MqttClientOptions.MaxPossiblePacketSize)
            {
                properties.MaximumPacketSize = (uint)_options.MaxPacketSize;
            }

            if (properties.IsEmpty)
            {
                properties = null;
            }
        }

        return new ConnectPacket
        {
            ProtocolVersion = _options.ProtocolVersion,
            CleanStart = cleanStart,
            KeepAliveSeconds = (ushort)_options.KeepAlive.TotalSeconds,
            ClientId = _clientId,
            UserName = _options.UserName,
            // Typed on purpose: a null byte[] would convert to an empty, non-null password (and set the flag).
            Password = _options.Password is null ? (ReadOnlyMemory<byte>?)null : Encoding.UTF8.GetBytes(_options.Password),
            Will = _options.Will,
            Properties = properties,
        };
    }

    private TimeSpan Backoff(int attempt)
    {
        var reconnect = _options.Reconnect;
        double ms = reconnect.InitialDelay.TotalMilliseconds * Math.Pow(2, Math.Min(attempt - 1, 30));
        ms = Math.Min(ms, reconnect.MaxDelay.TotalMilliseconds);
#pragma warning disable CA5394 // Jitter spreads reconnects; it protects nothing, so a predictable generator is fine.
        ms *= 1 + (reconnect.Jitter * ((2 * Random.Shared.NextDouble()) - 1));
#pragma warning restore CA5394
        return TimeSpan.FromMilliseconds(Math.Max(ms, 1));
    }

    private void Raise<T>(EventHandler<T>? handler, T args, string name)
        where T : EventArgs
    {
        try
        {
            handler?.Invoke(this, args);
        }
        catch (Exception ex)
        {
            // A faulty handler must not stop reconnecting; it is reported, not hidden.
            MqttClientLog.EventHandlerFailed(_logger, name, ex);
        }
    }
}

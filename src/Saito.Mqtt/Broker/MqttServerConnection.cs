using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// One client connection on the broker: a read loop that decodes and handles packets, and a send loop
/// that is the only writer to the transport. Everything the send loop writes comes from three places:
/// control packets (bounded channel), acknowledgements of inbound publishes (ordered, released by the
/// publish hook), and the session's queue of outbound messages (bounded, inflight window).
/// This file holds the state, the lifetime and the read loop's dispatch; each concern has a partial file of its own:
/// <c>.Connect</c> (CONNECT, deciding through <see cref="ConnectNegotiation"/>), <c>.Publish</c> (inbound PUBLISH, the
/// wait for the hook, QoS 1 and 2 acknowledgements), <c>.Subscribe</c>, <c>.Send</c> (the send loop) and <c>.Log</c>.
/// </summary>
[System.Diagnostics.CodeAnalysis.SuppressMessage("Design", "CA1001", Justification = "_closed is disposed at the end of CloseAsync, which RunAsync always reaches")]
internal sealed partial class MqttServerConnection
{
    private const int MaxMessagesPerFlush = 256;

    private readonly MqttBroker _broker;
    private readonly IDuplexPipe _transport;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _closed;
    private readonly IPAddress? _address;
    private readonly SendQueue _send = new();
    private readonly Queue<PendingAck> _acks = new();
    private readonly Lock _ackLock = new();

    // For outbound 5.0 properties; made on first use (most connections never need them: memory per idle connection).
    private MqttProperties? _scratch;
    private List<uint>? _scratchIds;

    private Task? _sendLoop;
    private int _pendingAcks;
    private long _pendingBytes;
    private double _tokens;
    private long _tokensAt;
    private TaskCompletionSource? _ackSpace;
    private Dictionary<ushort, string>? _inboundAliases;
    private Dictionary<string, ushort>? _outboundAliases;
    private int _clientMaxPacketSize = int.MaxValue;
    private int _outboundInflightLimit;
    private int _clientTopicAliasMaximum;
    private bool _resendInflight;

    /// <summary>Set by the read loop when a packet it handled made something sendable (an acknowledgement, room in the window).</summary>
    private bool _sendWanted;

    /// <summary>1 while someone writes to the transport: the send loop, or the read loop writing inline (<c>WriteInlineAsync</c>).</summary>
    private int _writing;
    private MqttWill? _will;
    private bool _publishWill = true;
    private volatile bool _connected;
    private int _closing;
    private long _unfinishedSince;
    private long _unfinishedCounted;

    public MqttServerConnection(MqttBroker broker, IDuplexPipe transport, MqttConnectionInfo info, ILogger logger, IPAddress? address)
    {
        _broker = broker;
        _address = address;
        _transport = transport;
        Info = info;
        _logger = logger;
        // Not linked to the server's stopping token (a linked source is three objects more per connection): the broker
        // cancels each connection itself when it stops (CancelNow).
        _closed = new CancellationTokenSource();
        _closed.Token.UnsafeRegister(static send => ((SendQueue)send!).Signal(), _send);
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

    /// <summary>Environment.TickCount64 when the packet now partly received began to arrive; 0 when none is.</summary>
    public long UnfinishedSince
    {
        get => Volatile.Read(ref _unfinishedSince);
        private set => Volatile.Write(ref _unfinishedSince, value);
    }

    /// <summary>Bytes of the packet now partly received that count against <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/>.</summary>
    public long UnfinishedCounted => Volatile.Read(ref _unfinishedCounted);

    /// <summary>An unfinished packet counts against the broker's budget once it holds more than this (the socket listener's read size).</summary>
    internal const int UnfinishedCountedFrom = 8 * 1024;

    /// <summary>Bytes of <see cref="UnfinishedCounted"/> the broker already gave up (it is closing this connection for the budget).</summary>
    internal long ShedBytes { get; set; }

    /// <summary>The connection ended and gave its counted bytes back (<see cref="MqttBroker.Released"/>, under its lock).</summary>
    internal void ForgetUnfinished()
    {
        _unfinishedCounted = 0;
        ShedBytes = 0;
    }

    /// <summary>Keep-alive in milliseconds; 0 means none.</summary>
    public long KeepAliveMs { get; private set; }

    /// <summary>True when this connection's session was taken over by a newer connection with the same client id.</summary>
    public bool TakenOver { get; private set; }

    /// <summary>Serves the connection until it closes, then releases its admission with the broker.</summary>
    public async Task RunAsync()
    {
        try
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
                _broker.Connections.Refused(nameof(MqttReasonCode.UnsupportedProtocolVersion));

                (Version, byte code) = ConnectNegotiation.UnsupportedProtocolLevel(ex.Level);
                _send.TryWrite(new ConnAckPacket { ReasonCode = code });
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
        catch (Exception ex)
        {
            // A bug, not the peer: say so, and end this connection only (never the listener or the server).
            Log.Unexpected(_logger, RemoteName, LogId, ex);
            Info.Abort?.Invoke();
        }
        finally
        {
            _broker.Released(this, _address);
        }
    }

    private string RemoteName => Info.RemoteEndPoint?.ToString() ?? Info.Transport;

    /// <summary>The client id as a log line may carry it (see <see cref="LogText"/>).</summary>
    private string LogId => LogText.Safe(ClientId);

    /// <summary>Its places in <see cref="PendingConnections"/> while it has not sent CONNECT (null after).</summary>
    internal LinkedListNode<MqttServerConnection>? PendingNode { get; set; }

    internal LinkedListNode<MqttServerConnection>? PendingNetworkNode { get; set; }

    internal IPAddress? PendingNetwork { get; set; }

    /// <summary>Cancelled when the connection is closed from outside (<see cref="CancelNow"/>, <see cref="Close"/>).</summary>
    public CancellationToken ClosedToken => _closed.Token;

    /// <summary>Wakes the send loop: something was queued for it.</summary>
    public void Signal() => _send.Signal();

    /// <summary>Stops the connection at once (the broker stopping): what a linked server-stopping token did before.</summary>
    public void CancelNow()
    {
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
            // Closed already.
        }
    }

    /// <summary>Closes the connection from outside (keep-alive, takeover, shutdown), telling a 5.0 client why.</summary>
    /// <summary>True once a close has begun (the connection stays listed until it has ended).</summary>
    internal bool IsClosing => Volatile.Read(ref _closing) != 0;

    public void Close(MqttReasonCode reason, bool takenOver = false)
    {
        if (Interlocked.Exchange(ref _closing, 1) != 0)
        {
            return;
        }

        TakenOver = takenOver;
        StopSending(reason);

        // Give the send loop a moment to get the DISCONNECT out, then stop reading. Completing the send queue above can
        // let a read loop that ended at the same moment (the peer left) run CloseAsync to its end and dispose _closed
        // before this line: that connection is closed already, which is all this asked for.
        try
        {
            _closed.CancelAfter(TimeSpan.FromMilliseconds(500));
        }
        catch (ObjectDisposedException)
        {
            // Closed already.
        }
    }

    /// <summary>
    /// Lets the send loop write what is queued and end. A connected 5.0 client is told <paramref name="reason"/> in a
    /// DISCONNECT; before CONNACK the standard wants a plain close.
    /// </summary>
    private void StopSending(MqttReasonCode? reason)
    {
        if (reason is { } code && _connected && Version == MqttProtocolVersion.V500)
        {
            _send.TryWrite(new DisconnectPacket { ReasonCode = code });
        }

        _send.Complete();
    }

    private async Task CloseAsync(MqttReasonCode? protocolError)
    {
        var sender = _sendLoop!;
        bool first = Interlocked.Exchange(ref _closing, 1) == 0;
        StopSending(first ? protocolError : null);
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

        // The session is detached before the transport closes: a client that sees the close and connects again at once
        // must find a session that ended with its connection gone (3.1.1 clean session: Session Present 0).
        if (_connected)
        {
            _connected = false;
            _broker.OnConnectionClosed(this, _publishWill ? _will : null);
            _broker.Connections.Disconnected(TakenOver);
            Log.Disconnected(_logger, LogId, RemoteName);
        }

        await _transport.Input.CompleteAsync();
        await _transport.Output.CompleteAsync();
        lock (_ackLock)
        {
            _ackSpace?.TrySetResult();
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
                bool packetsEnded = false;
                while (MqttFrameReader.TryRead(ref buffer, maxPacketSize, out var frame))
                {
                    // Keep-alive counts whole control packets [MQTT-3.1.2-24]: a trickle of bytes does not keep a connection alive.
                    LastReceived = Environment.TickCount64;
                    packetsEnded = true;
                    _broker.Metrics.PacketReceived(frame.Size);
                    if (!await HandleAsync(frame, token))
                    {
                        return;
                    }
                }

                if (buffer.Length != 0 || UnfinishedSince != 0)
                {
                    TrackUnfinished(buffer.Length, packetsEnded);
                }
            }
            finally
            {
                input.AdvanceTo(buffer.Start, buffer.End);
            }

            await WriteInlineAsync(token);

            if (result.IsCompleted || result.IsCanceled)
            {
                return;
            }
        }
    }

    /// <summary>
    /// The read ended inside a packet (<paramref name="held"/> bytes of it are in, <paramref name="packetsEnded"/>: a new
    /// one began in this read) or just finished one. The packet's first bytes start its clock
    /// (<see cref="MqttBrokerOptions.PacketReadTimeoutSeconds"/>, checked in the broker's housekeeping), and what it holds
    /// past <see cref="UnfinishedCountedFrom"/> counts against <see cref="MqttBrokerOptions.MaxUnfinishedPacketBytes"/>.
    /// Keep-alive cannot do this: it counts whole packets, and a client may ask for none (issue 32: 1,800 connections
    /// that each sent most of a 260 KiB PUBLISH and stopped held 470 MiB for good).
    /// </summary>
    private void TrackUnfinished(long held, bool packetsEnded)
    {
        if (held == 0)
        {
            UnfinishedSince = 0;
        }
        else if (packetsEnded || UnfinishedSince == 0)
        {
            UnfinishedSince = Environment.TickCount64;
        }

        // Small remainders are not counted: every busy connection holds its read buffer anyway, and a hub's readings are
        // often split across reads under load; not counting them keeps the shared counter off the publish path.
        long counted = held > UnfinishedCountedFrom ? held : 0;
        if (counted != _unfinishedCounted)
        {
            long change = counted - _unfinishedCounted;
            _unfinishedCounted = counted;
            _broker.HoldUnfinished(this, change);
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
}

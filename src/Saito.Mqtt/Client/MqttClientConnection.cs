using System.IO.Pipelines;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>
/// One network connection to the broker, from CONNECT to close: a socket (and TLS stream), a
/// <see cref="PipeReader"/> read by one loop, a <see cref="PipeWriter"/> written by one loop fed by a
/// channel (so writes never interleave and acknowledgements keep the order they were queued in), and a
/// keep-alive loop. It never reconnects; <see cref="MqttClient"/> makes a new one. The per-connection
/// inbound state (acknowledgement order, QoS 2 messages awaiting the application) lives here because
/// packet identifiers mean nothing once the connection is gone; <see cref="MqttClient"/> guards it with its lock.
/// </summary>
internal sealed class MqttClientConnection : IAsyncDisposable
{
    private const int FlushThreshold = 64 * 1024;

    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly PipeReader _reader;
    private readonly PipeWriter _writer;
    private readonly X509Certificate2? _clientCertificate;
    private readonly ILogger _logger;
    private readonly int _maxPacketSize;
    private readonly Channel<Outbound> _writes = Channel.CreateUnbounded<Outbound>(new UnboundedChannelOptions { SingleReader = true });
    private readonly CancellationTokenSource _abort = new();
    private readonly Lock _stateLock = new();
    private Task _completion = Task.CompletedTask;
    private Task _readLoop = Task.CompletedTask;
    private Exception? _error;
    private bool _aborted;
    private bool _started;
    private long _lastSentMs;
    private long _pingDeadlineMs;
    private bool _pingOutstanding;
    private bool _readPaused;

    private MqttClientConnection(Socket socket, Stream stream, PipeReader reader, PipeWriter writer, X509Certificate2? clientCertificate,
        MqttProtocolVersion version, ushort keepAliveSeconds, int maxPacketSize, int receiveMaximum, ILogger logger)
    {
        _socket = socket;
        _stream = stream;
        _reader = reader;
        _writer = writer;
        _clientCertificate = clientCertificate;
        Version = version;
        KeepAlive = TimeSpan.FromSeconds(keepAliveSeconds);
        _maxPacketSize = maxPacketSize;
        _logger = logger;
        InboundSlots = new AsyncLimiter(receiveMaximum);
        _lastSentMs = Environment.TickCount64;
    }

    public MqttProtocolVersion Version { get; }

    /// <summary>The keep-alive in force: ours, or the broker's Server Keep Alive.</summary>
    public TimeSpan KeepAlive { get; private set; }

    /// <summary>Cancelled when the connection closes; every wait on behalf of this connection uses it.</summary>
    public CancellationToken Closing => _abort.Token;

    /// <summary>Completes (never faults) once every loop has stopped and the socket is closed.</summary>
#pragma warning disable VSTHRD003 // VSTHRD003: no synchronization context in this library (sockets and thread pool only), so awaiting a task started elsewhere cannot deadlock.
    public Task Completion => _completion;
#pragma warning restore VSTHRD003

    /// <summary>Why the connection ended; null when the client closed it on purpose.</summary>
    public Exception? Error
    {
        get
        {
            lock (_stateLock)
            {
                return _error;
            }
        }
    }

    public bool IsClosed
    {
        get
        {
            lock (_stateLock)
            {
                return _aborted;
            }
        }
    }

    /// <summary>Inbound QoS 1/2 messages delivered and not yet acknowledged (the receive maximum).</summary>
    public AsyncLimiter InboundSlots { get; }

    /// <summary>Acknowledgements not yet sent, in the order their PUBLISH arrived. Guarded by the client's lock.</summary>
    public Queue<PendingAck> AckOrder { get; } = new();

    /// <summary>QoS 2 messages delivered to the application whose PUBREC is not sent yet. Guarded by the client's lock.</summary>
    public Dictionary<ushort, MqttReceivedMessage> PendingQoS2 { get; } = [];

    /// <summary>
    /// Opens TCP (and TLS), sends CONNECT and reads CONNACK. Returns the connection, not started, with the
    /// CONNACK; throws <see cref="MqttConnectException"/> when the broker refused.
    /// </summary>
    public static async Task<(MqttClientConnection Connection, ConnAckPacket ConnAck)> OpenAsync(
        MqttClientOptions options, ConnectPacket connect, ILogger logger, CancellationToken cancellationToken)
    {
        var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        Stream? stream = null;
        X509Certificate2? clientCertificate = null;
        PipeReader? reader = null;
        PipeWriter? writer = null;
        try
        {
            await socket.ConnectAsync(options.Host, options.Port, cancellationToken);
            stream = new NetworkStream(socket, ownsSocket: true);
            if (options.Tls.Enabled)
            {
                clientCertificate = LoadClientCertificate(options.Tls);
                var ssl = new SslStream(stream, leaveInnerStreamOpen: false);
                stream = ssl;
                await AuthenticateAsync(ssl, options, clientCertificate, cancellationToken);
            }

            reader = PipeReader.Create(stream, new StreamPipeReaderOptions(leaveOpen: true));
            writer = PipeWriter.Create(stream, new StreamPipeWriterOptions(leaveOpen: true));
            MqttPacketEncoder.Encode(writer, connect, connect.ProtocolVersion);
            await writer.FlushAsync(cancellationToken);

            var connAck = await ReadConnAckAsync(reader, connect.ProtocolVersion, options.MaxPacketSize, cancellationToken);
            if (connAck.ReasonCode != 0)
            {
                throw new MqttConnectException(connect.ProtocolVersion, connAck.ReasonCode, connAck.Properties?.ReasonString);
            }

            ushort keepAlive = connAck.Properties?.ServerKeepAlive ?? connect.KeepAliveSeconds;
            var connection = new MqttClientConnection(socket, stream, reader, writer, clientCertificate, connect.ProtocolVersion, keepAlive,
                options.MaxPacketSize, options.ReceiveMaximum, logger);
            return (connection, connAck);
        }
        catch
        {
            if (reader is not null)
            {
                await reader.CompleteAsync();
            }

            if (writer is not null)
            {
                await writer.CompleteAsync();
            }

            if (stream is not null)
            {
                await stream.DisposeAsync();
            }

            socket.Dispose();
            clientCertificate?.Dispose();
            throw;
        }
    }

    /// <summary>Starts the read, write and keep-alive loops. <paramref name="handler"/> sees every packet after CONNACK, in order.</summary>
    public void Start(Func<MqttClientConnection, MqttFrame, ValueTask> handler)
    {
        lock (_stateLock)
        {
            if (_started)
            {
                throw new InvalidOperationException("The connection has already been started or disposed.");
            }

            _started = true;
        }

        var read = Task.Run(() => ReadLoopAsync(handler));
        _readLoop = read;
        var write = Task.Run(WriteLoopAsync);
        var ping = Task.Run(KeepAliveLoopAsync);
        _completion = FinishAsync(read, write, ping);
    }

    /// <summary>Queues a packet for the writer loop. False when the connection has closed (the packet is dropped).</summary>
    public bool TryEnqueue(MqttPacket packet, TaskCompletionSource? written = null)
    {
        if (_writes.Writer.TryWrite(new Outbound(packet, written)))
        {
            return true;
        }

        written?.TrySetException(new MqttClientDisconnectedException());
        return false;
    }

    public void SetReadPaused(bool paused)
    {
        lock (_stateLock)
        {
            _readPaused = paused;
            if (!paused && _pingOutstanding)
            {
                // The PINGRESP may have sat unread while we waited for the application: give it time to be read.
                _pingDeadlineMs = Math.Max(_pingDeadlineMs, Environment.TickCount64 + (long)KeepAlive.TotalMilliseconds);
            }
        }
    }

    public void OnPingResponse()
    {
        lock (_stateLock)
        {
            _pingOutstanding = false;
        }
    }

    /// <summary>Closes the connection at once. <paramref name="error"/> null means on purpose. Only the first reason is kept.</summary>
    public void Abort(Exception? error)
    {
        lock (_stateLock)
        {
            if (_aborted)
            {
                return;
            }

            _aborted = true;
            _error = error;
        }

        _writes.Writer.TryComplete();
        _abort.Cancel();

        // A read blocked in the kernel returns once the socket is gone, whatever the stream does with the token.
        _socket.Dispose();
    }

    /// <summary>Sends <paramref name="farewell"/> (DISCONNECT) if it can within <paramref name="timeout"/>, then closes.</summary>
    public async Task CloseAsync(MqttPacket? farewell, TimeSpan timeout, CancellationToken cancellationToken)
    {
        if (farewell is not null && await SendFarewellAsync(farewell, timeout, cancellationToken))
        {
            // Close TCP the orderly way: FIN after the DISCONNECT, then let the broker close its end. Disposing at once
            // (with bytes unread on our side) sends RST, and a RST makes the broker's kernel drop what it has not read
            // yet, acknowledgements written just before the DISCONNECT included.
            try
            {
                _socket.Shutdown(SocketShutdown.Send);
                // A broker closes at once after DISCONNECT; one that does not is not waited for long.
                var linger = timeout < TimeSpan.FromSeconds(1) ? timeout : TimeSpan.FromSeconds(1);
                await _readLoop.WaitAsync(linger, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                // Already gone.
            }
        }

        Abort(null);
        await DisposeAsync();
    }

    public async ValueTask DisposeAsync()
    {
        Abort(null);
        bool started;
        lock (_stateLock)
        {
            started = _started;
            _started = true;
        }

        if (!started)
        {
            // Opened but never started (the client was disconnected meanwhile): release the socket here.
            _completion = FinishAsync(Task.CompletedTask, Task.CompletedTask, Task.CompletedTask);
        }

        await _completion;
    }

    /// <summary>Writes the farewell packet; true when it reached the socket.</summary>
    private async Task<bool> SendFarewellAsync(MqttPacket farewell, TimeSpan timeout, CancellationToken cancellationToken)
    {
        var written = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (!TryEnqueue(farewell, written))
        {
            return false;
        }

        try
        {
            await written.Task.WaitAsync(timeout, cancellationToken);
            return true;
        }
        catch (Exception ex) when (ex is TimeoutException or MqttClientDisconnectedException)
        {
            // The connection is closing anyway; the broker sees the socket close instead of DISCONNECT.
            MqttClientLog.CloseFailed(_logger, ex);
            return false;
        }
    }

    private static async Task<ConnAckPacket> ReadConnAckAsync(PipeReader reader, MqttProtocolVersion version, int maxPacketSize, CancellationToken cancellationToken)
    {
        while (true)
        {
            var result = await reader.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            if (MqttFrameReader.TryRead(ref buffer, maxPacketSize, out var frame))
            {
                try
                {
                    if (frame.Type != MqttPacketType.ConnAck)
                    {
                        throw new MqttProtocolException(MqttReasonCode.ProtocolError, $"The broker sent {frame.Type} before CONNACK");
                    }

                    return (ConnAckPacket)MqttPacketDecoder.Decode(frame, version);
                }
                finally
                {
                    // Whatever follows CONNACK stays in the pipe for the read loop.
                    reader.AdvanceTo(buffer.Start);
                }
            }

            if (result.IsCompleted)
            {
                throw new MqttClientDisconnectedException("The broker closed the connection before sending CONNACK.");
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
        }
    }

    private static async Task AuthenticateAsync(SslStream ssl, MqttClientOptions options, X509Certificate2? clientCertificate, CancellationToken cancellationToken)
    {
        var tls = options.Tls;
        X509Certificate2Collection? trustedRoots = null;
        try
        {
            RemoteCertificateValidationCallback? validation = tls.ServerCertificateValidation;
            if (validation is null && tls.CaCertificatePath is not null)
            {
                // Read at each connect, so a rotated CA file is picked up on the next reconnect.
                trustedRoots = [];
                trustedRoots.ImportFromPemFile(tls.CaCertificatePath);
                var roots = trustedRoots;
                validation = (_, certificate, _, errors) => ValidateAgainstRoots(certificate, errors, roots);
            }

            var sslOptions = new SslClientAuthenticationOptions
            {
                TargetHost = tls.TargetHost ?? options.Host,
                RemoteCertificateValidationCallback = validation,
                ClientCertificates = clientCertificate is null ? null : new X509CertificateCollection { clientCertificate },
            };
            await ssl.AuthenticateAsClientAsync(sslOptions, cancellationToken);
        }
        finally
        {
            if (trustedRoots is not null)
            {
                foreach (var root in trustedRoots)
                {
                    root.Dispose();
                }
            }
        }
    }

    /// <summary>The broker's certificate must chain to one of <paramref name="roots"/> (and only those) and match the target host.</summary>
    private static bool ValidateAgainstRoots(X509Certificate? certificate, SslPolicyErrors errors, X509Certificate2Collection roots)
    {
        if (certificate is not X509Certificate2 serverCertificate)
        {
            return false;
        }

        // Name mismatch or no certificate: never acceptable. Chain errors are judged again below, against our roots.
        if ((errors & ~SslPolicyErrors.RemoteCertificateChainErrors) != SslPolicyErrors.None)
        {
            return false;
        }

        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.CustomTrustStore.AddRange(roots);
        return chain.Build(serverCertificate);
    }

    private static X509Certificate2? LoadClientCertificate(MqttClientTlsOptions tls)
    {
        if (tls.ClientCertificatePath is null)
        {
            // Owned by the caller's options: not disposed here, so copied.
            return tls.ClientCertificate is null ? null : new X509Certificate2(tls.ClientCertificate);
        }

        return X509Certificate2.CreateFromPemFile(tls.ClientCertificatePath, tls.ClientKeyPath);
    }

    private async Task ReadLoopAsync(Func<MqttClientConnection, MqttFrame, ValueTask> handler)
    {
        var cancellationToken = _abort.Token;
        try
        {
            while (true)
            {
                var result = await _reader.ReadAsync(cancellationToken);
                var buffer = result.Buffer;
                try
                {
                    while (MqttFrameReader.TryRead(ref buffer, _maxPacketSize, out var frame))
                    {
                        await handler(this, frame);
                    }

                    if (result.IsCompleted)
                    {
                        Abort(new MqttClientDisconnectedException(buffer.IsEmpty
                            ? "The broker closed the connection."
                            : "The broker closed the connection in the middle of a packet."));
                        return;
                    }
                }
                finally
                {
                    _reader.AdvanceTo(buffer.Start, buffer.End);
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Closed by Abort: its reason is already recorded.
        }
        catch (MqttProtocolException ex)
        {
            MqttClientLog.ProtocolViolation(_logger, ex.Message);
            if (Version == MqttProtocolVersion.V500)
            {
                // Tell a 5.0 broker why (the writer loop is still running); never wait on our own completion here.
                await SendFarewellAsync(new DisconnectPacket { ReasonCode = ex.ReasonCode }, TimeSpan.FromSeconds(1), CancellationToken.None);
            }

            Abort(ex);
        }
        catch (Exception ex)
        {
            Abort(ex);
        }
    }

    private async Task WriteLoopAsync()
    {
        var cancellationToken = _abort.Token;
        var written = new List<TaskCompletionSource>();
        try
        {
            while (await _writes.Reader.WaitToReadAsync(cancellationToken))
            {
                while (_writer.UnflushedBytes < FlushThreshold && _writes.Reader.TryRead(out var item))
                {
                    MqttPacketEncoder.Encode(_writer, item.Packet, Version);
                    if (item.Written is not null)
                    {
                        written.Add(item.Written);
                    }
                }

                var flush = await _writer.FlushAsync(cancellationToken);
                Volatile.Write(ref _lastSentMs, Environment.TickCount64);
                foreach (var done in written)
                {
                    done.TrySetResult();
                }

                written.Clear();
                if (flush.IsCompleted)
                {
                    Abort(new MqttClientDisconnectedException("The connection stopped accepting writes."));
                    return;
                }
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
        catch (Exception ex)
        {
            Abort(ex);
        }
        finally
        {
            var lost = new MqttClientDisconnectedException();
            foreach (var done in written)
            {
                done.TrySetException(lost);
            }

            _writes.Writer.TryComplete();
            while (_writes.Reader.TryRead(out var item))
            {
                item.Written?.TrySetException(lost);
            }
        }
    }

    /// <summary>
    /// Sends PINGREQ when nothing was sent for a keep-alive period (the broker closes a silent client at 1.5
    /// times it), and closes the connection when a PINGRESP does not come back within a keep-alive period
    /// (unless the read loop is held up by the application, in which case the answer is waiting unread).
    /// </summary>
    private async Task KeepAliveLoopAsync()
    {
        if (KeepAlive == TimeSpan.Zero)
        {
            return;
        }

        var cancellationToken = _abort.Token;
        long keepAliveMs = (long)KeepAlive.TotalMilliseconds;
        try
        {
            while (true)
            {
                long now = Environment.TickCount64;
                long wait;
                bool send = false;
                lock (_stateLock)
                {
                    if (_pingOutstanding && now >= _pingDeadlineMs && !_readPaused)
                    {
                        MqttClientLog.PingTimeout(_logger, KeepAlive);
                        wait = -1;
                    }
                    else
                    {
                        long idle = now - Volatile.Read(ref _lastSentMs);
                        if (idle >= keepAliveMs)
                        {
                            send = true;
                            if (!_pingOutstanding)
                            {
                                _pingOutstanding = true;
                                _pingDeadlineMs = now + keepAliveMs;
                            }

                            // Counts as sent now; the writer loop stamps the real time after the flush.
                            Volatile.Write(ref _lastSentMs, now);
                            idle = 0;
                        }

                        wait = keepAliveMs - idle;

                        // While the read loop is held up the deadline does not apply (SetReadPaused moves it on resume).
                        if (_pingOutstanding && !_readPaused)
                        {
                            wait = Math.Min(wait, Math.Max(_pingDeadlineMs - now, 0));
                        }
                    }
                }

                if (wait < 0)
                {
                    Abort(new TimeoutException($"No PINGRESP within {KeepAlive}."));
                    return;
                }

                if (send)
                {
                    TryEnqueue(PingReqPacket.Instance);
                }

                await Task.Delay(TimeSpan.FromMilliseconds(Math.Max(wait, 10)), cancellationToken);
            }
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
        }
    }

    private async Task FinishAsync(Task read, Task write, Task ping)
    {
        // The loops catch what a dying connection throws; anything else is a bug and must not vanish.
        try
        {
#pragma warning disable VSTHRD003 // VSTHRD003: no synchronization context in this library (sockets and thread pool only), so awaiting a task started elsewhere cannot deadlock.
            await Task.WhenAll(read, write, ping);
#pragma warning restore VSTHRD003
        }
        catch (Exception ex)
        {
            MqttClientLog.CloseFailed(_logger, ex);
            lock (_stateLock)
            {
                _error ??= ex;
            }
        }

        Abort(null);
        try
        {
            await _reader.CompleteAsync();
            await _writer.CompleteAsync();
            await _stream.DisposeAsync();
        }
        catch (Exception ex)
        {
            MqttClientLog.CloseFailed(_logger, ex);
        }
        finally
        {
            // _abort is not disposed: it has no timer to free, and tokens handed out must stay usable.
            _clientCertificate?.Dispose();
        }
    }


    private readonly record struct Outbound(MqttPacket Packet, TaskCompletionSource? Written);
}

/// <summary>An acknowledgement waiting for its turn: PUBACK or PUBREC go out in the order their PUBLISH arrived.</summary>
internal sealed class PendingAck(MqttPacketType type, ushort packetId, MqttReceivedMessage? message)
{
    public MqttPacketType Type { get; } = type;

    public ushort PacketId { get; } = packetId;

    /// <summary>Null for a repeated PUBREC answering a duplicate QoS 2 PUBLISH (no application involved).</summary>
    public MqttReceivedMessage? Message { get; } = message;

    public bool Ready { get; set; }

    public MqttReasonCode ReasonCode { get; set; }
}

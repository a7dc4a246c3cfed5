using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text;
using System.Threading.Channels;
using Saito.Mqtt.Packets;

namespace Saito.Testing;

/// <summary>
/// A deliberately dumb MQTT client for broker behaviour tests: one TCP connection, packets sent
/// through <see cref="MqttPacketEncoder"/> or as raw bytes, and every packet the broker sends
/// queued for the test to expect, with timeouts. It never answers anything by itself: no
/// PUBACK, PUBREC, PUBREL, PUBCOMP or PINGREQ goes out unless the test sends it.
/// </summary>
/// <remarks>
/// Frames are decoded when the test takes them (not when they arrive), with <see cref="Version"/>
/// as it is then, so a test can switch how it reads a reply. While a test waits for a control
/// packet through <see cref="ExpectSkippingPublishesAsync{TPacket}"/>, PUBLISH packets that
/// arrive first are kept, in order, for the next <see cref="ExpectAsync{TPacket}"/>: the standard
/// lets a broker send retained messages before the SUBACK, and a client that subscribes to its
/// own topic sees its message before its PUBACK.
/// </remarks>
public sealed class RawMqttConnection : IAsyncDisposable
{
    /// <summary>
    /// How long a test waits for a packet it expects. A wait ends as soon as the packet comes, so this costs only a test
    /// that fails; 2 s was too short on CI's busy two cores (a broker answer under parallel builds took longer once).
    /// </summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(10);
    public static readonly TimeSpan DefaultQuietPeriod = TimeSpan.FromMilliseconds(300);

    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;
    private readonly Channel<Incoming> _incoming = Channel.CreateUnbounded<Incoming>(new UnboundedChannelOptions { SingleReader = true, SingleWriter = true });
    private readonly Queue<Incoming> _kept = new();
    private readonly CancellationTokenSource _stop;
    private readonly Task _receiving;
    private ushort _lastPacketId;
    private bool _closedSeen;

    private RawMqttConnection(TcpClient tcp, string name, CancellationToken testCancellation)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
        Name = name;
        _stop = CancellationTokenSource.CreateLinkedTokenSource(testCancellation);
        _receiving = ReceiveAsync(_stop.Token);
    }

    /// <summary>How frames are decoded and packets encoded; set by <see cref="ConnectAsync"/>.</summary>
    public MqttProtocolVersion Version { get; set; } = MqttProtocolVersion.V500;

    /// <summary>For failure messages: the client id once connected, else "connection".</summary>
    public string Name { get; private set; }

    /// <summary>Opens the TCP connection; nothing is sent yet.</summary>
    public static async Task<RawMqttConnection> OpenAsync(BrokerEndpoint endpoint, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        var tcp = new TcpClient { NoDelay = true };
        try
        {
            await tcp.ConnectAsync(endpoint.Host, endpoint.Port, cancellationToken);
        }
        catch
        {
            tcp.Dispose();
            throw;
        }

        return new RawMqttConnection(tcp, "connection", cancellationToken);
    }

    /// <summary>A fresh packet identifier, 1, 2, 3, … (never 0).</summary>
    public ushort NextPacketId()
    {
        _lastPacketId = _lastPacketId == ushort.MaxValue ? (ushort)1 : (ushort)(_lastPacketId + 1);
        return _lastPacketId;
    }

    /// <summary>
    /// Sends CONNECT and returns the CONNACK, whatever its code; the test asserts on it.
    /// </summary>
    public async Task<ConnAckPacket> ConnectAsync(
        MqttProtocolVersion version,
        string clientId,
        bool cleanStart = true,
        ushort keepAliveSeconds = 0,
        MqttProperties? properties = null,
        MqttWill? will = null,
        string? userName = null)
    {
        Version = version;
        Name = clientId.Length == 0 ? "(empty client id)" : clientId;
        await SendAsync(new ConnectPacket
        {
            ProtocolVersion = version,
            ClientId = clientId,
            CleanStart = cleanStart,
            KeepAliveSeconds = keepAliveSeconds,
            Properties = properties,
            Will = will,
            UserName = userName,
        });
        return await ExpectAsync<ConnAckPacket>();
    }

    public async Task SendAsync(MqttPacket packet)
    {
        var buffer = new ArrayBufferWriter<byte>();
        MqttPacketEncoder.Encode(buffer, packet, Version);
        await SendRawAsync(buffer.WrittenMemory);
    }

    /// <summary>The bytes <see cref="SendAsync"/> would write for <paramref name="packet"/>, for tests that corrupt them.</summary>
    public byte[] Encode(MqttPacket packet)
    {
        var buffer = new ArrayBufferWriter<byte>();
        MqttPacketEncoder.Encode(buffer, packet, Version);
        return buffer.WrittenSpan.ToArray();
    }

    public async Task SendRawAsync(ReadOnlyMemory<byte> bytes)
    {
        await _stream.WriteAsync(bytes, _stop.Token);
        await _stream.FlushAsync(_stop.Token);
    }

    /// <summary>
    /// Sends bytes to a broker that may already have closed the connection (a broker may refuse
    /// an oversize packet as soon as its fixed header arrives). Returns false when the write failed.
    /// </summary>
    public async Task<bool> TrySendRawAsync(ReadOnlyMemory<byte> bytes)
    {
        try
        {
            await SendRawAsync(bytes);
            return true;
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>Sends DISCONNECT (5.0: with <paramref name="reason"/>) and closes the socket.</summary>
    /// <remarks>
    /// Waits until the broker has closed its side too, so a test that reconnects with the same
    /// client id next finds the DISCONNECT processed. Packets that arrive meanwhile are dropped.
    /// </remarks>
    public async Task DisconnectAsync(MqttReasonCode reason = MqttReasonCode.NormalDisconnection, MqttProperties? properties = null)
    {
        await SendAsync(new DisconnectPacket { ReasonCode = reason, Properties = properties });
        try
        {
            _tcp.Client.Shutdown(SocketShutdown.Send);
        }
        catch (SocketException)
        {
            // The broker closed first; the wait below sees it.
        }

        _kept.Clear();
        var deadline = DateTime.UtcNow + DefaultTimeout;
        for (var left = DefaultTimeout; left > TimeSpan.Zero; left = deadline - DateTime.UtcNow)
        {
            var item = await NextItemAsync(left);
            if (item is null || !item.Value.IsPacket)
            {
                return;
            }
        }
    }

    /// <summary>Drops the connection without DISCONNECT, as a crash or a pulled cable would (TCP reset).</summary>
    public void Abort()
    {
        _tcp.Client.LingerState = new LingerOption(true, 0);
        _tcp.Client.Close();
    }

    /// <summary>The next packet, which must be a <typeparamref name="TPacket"/>.</summary>
    public async Task<TPacket> ExpectAsync<TPacket>(TimeSpan? timeout = null)
        where TPacket : MqttPacket
    {
        var packet = await NextPacketAsync(timeout ?? DefaultTimeout, typeof(TPacket).Name);
        return packet as TPacket
            ?? throw Fail($"{Name}: expected {typeof(TPacket).Name} but received {Describe(packet)}");
    }

    /// <summary>
    /// The next packet that is not a PUBLISH, which must be a <typeparamref name="TPacket"/>;
    /// PUBLISH packets before it are kept, in order, for later expectations.
    /// </summary>
    public async Task<TPacket> ExpectSkippingPublishesAsync<TPacket>(TimeSpan? timeout = null)
        where TPacket : MqttPacket
    {
        var deadline = DateTime.UtcNow + (timeout ?? DefaultTimeout);
        var skipped = new List<Incoming>();
        try
        {
            while (true)
            {
                var remaining = deadline - DateTime.UtcNow;
                var item = await NextItemAsync(remaining < TimeSpan.Zero ? TimeSpan.Zero : remaining)
                    ?? throw Fail($"{Name}: expected {typeof(TPacket).Name} within {timeout ?? DefaultTimeout} but nothing came");
                if (item.IsPacket && (MqttPacketType)(item.Header >> 4) == MqttPacketType.Publish && typeof(TPacket) != typeof(PublishPacket))
                {
                    skipped.Add(item);
                    continue;
                }

                var packet = Decode(item, typeof(TPacket).Name);
                return packet as TPacket
                    ?? throw Fail($"{Name}: expected {typeof(TPacket).Name} but received {Describe(packet)}");
            }
        }
        finally
        {
            // Put the skipped PUBLISH packets back in front of anything kept before.
            var rest = _kept.ToArray();
            _kept.Clear();
            foreach (var item in skipped.Concat(rest))
            {
                _kept.Enqueue(item);
            }
        }
    }

    /// <summary>The next frame as bytes: the fixed header's first byte and the body after the remaining length.</summary>
    public async Task<(byte Header, byte[] Body)> ExpectFrameAsync(TimeSpan? timeout = null)
    {
        var item = await NextItemAsync(timeout ?? DefaultTimeout)
            ?? throw Fail($"{Name}: expected a packet within {timeout ?? DefaultTimeout} but nothing came");
        if (!item.IsPacket)
        {
            throw Fail($"{Name}: expected a packet but {item.Describe()}");
        }

        return (item.Header, item.Body!);
    }

    /// <summary>Nothing arrives, and the connection stays open, for <paramref name="duration"/>.</summary>
    public async Task ExpectNothingAsync(TimeSpan? duration = null)
    {
        var item = await NextItemAsync(duration ?? DefaultQuietPeriod);
        if (item is { } received)
        {
            throw Fail($"{Name}: expected nothing for {duration ?? DefaultQuietPeriod} but {DescribeItem(received)}");
        }
    }

    /// <summary>
    /// The broker closes the connection within <paramref name="timeout"/>. Returns the reason code
    /// of the DISCONNECT it sent first, or null when it closed without one. Any other packet fails.
    /// </summary>
    public async Task<MqttReasonCode?> ExpectClosedAsync(TimeSpan? timeout = null)
    {
        var limit = timeout ?? DefaultTimeout;
        var deadline = DateTime.UtcNow + limit;
        MqttReasonCode? reason = null;
        while (true)
        {
            var remaining = deadline - DateTime.UtcNow;
            var item = await NextItemAsync(remaining < TimeSpan.Zero ? TimeSpan.Zero : remaining)
                ?? throw Fail($"{Name}: expected the broker to close the connection within {limit} but it is still open");
            if (!item.IsPacket)
            {
                if (item.Error is MqttProtocolException malformed)
                {
                    throw Fail($"{Name}: the broker sent malformed bytes before closing: {malformed.Message}");
                }

                return reason;
            }

            var packet = Decode(item, "the connection to close");
            if (packet is DisconnectPacket disconnect && reason is null)
            {
                reason = disconnect.ReasonCode;
                continue;
            }

            throw Fail($"{Name}: expected the connection to close but received {Describe(packet)}");
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _stop.CancelAsync();
        _tcp.Dispose();
        try
        {
#pragma warning disable VSTHRD003 // The receive loop is this object's own, started in its constructor; there is no UI context to deadlock.
            await _receiving;
#pragma warning restore VSTHRD003
        }
        catch (OperationCanceledException)
        {
            // Stopping is what we asked for.
        }

        _stop.Dispose();
    }

    /// <summary>A short description of a packet for failure messages.</summary>
    public static string Describe(MqttPacket packet) => packet switch
    {
        PublishPacket p => $"PUBLISH(topic '{p.Topic}', QoS {(int)p.QoS}, id {p.PacketId}, dup {p.Dup}, retain {p.Retain}, payload '{Encoding.UTF8.GetString(p.Payload.Span)}')",
        PublishAckPacket a => $"{a.Type.ToString().ToUpperInvariant()}(id {a.PacketId}, reason 0x{(byte)a.ReasonCode:X2})",
        ConnAckPacket c => $"CONNACK(code 0x{c.ReasonCode:X2}, session present {c.SessionPresent})",
        SubAckPacket s => $"SUBACK(id {s.PacketId}, codes {string.Join(",", s.ReasonCodes.Select(r => $"0x{(byte)r:X2}"))})",
        UnsubAckPacket u => $"UNSUBACK(id {u.PacketId})",
        DisconnectPacket d => $"DISCONNECT(reason 0x{(byte)d.ReasonCode:X2})",
        _ => packet.Type.ToString().ToUpperInvariant(),
    };

    private static ShouldAssertException Fail(string message) => new ShouldAssertException(message);

    private async Task<MqttPacket> NextPacketAsync(TimeSpan timeout, string expected)
    {
        var item = await NextItemAsync(timeout)
            ?? throw Fail($"{Name}: expected {expected} within {timeout} but nothing came");
        return Decode(item, expected);
    }

    private MqttPacket Decode(Incoming item, string expected)
    {
        if (!item.IsPacket)
        {
            throw Fail($"{Name}: expected {expected} but {item.Describe()}");
        }

        var frame = item.ToFrame();
        try
        {
            return MqttPacketDecoder.Decode(frame, Version);
        }
        catch (MqttProtocolException e)
        {
            throw Fail($"{Name}: expected {expected} but the broker sent a packet that does not decode as MQTT {(Version == MqttProtocolVersion.V500 ? "5.0" : "3.1.1")}: {e.Message} (header 0x{item.Header:X2}, body {Convert.ToHexString(item.Body!)})");
        }
    }

    private string DescribeItem(Incoming item)
    {
        if (!item.IsPacket)
        {
            return item.Describe();
        }

        try
        {
            var frame = item.ToFrame();
            return "received " + Describe(MqttPacketDecoder.Decode(frame, Version));
        }
        catch (MqttProtocolException)
        {
            return $"received a packet with header 0x{item.Header:X2}";
        }
    }

    /// <summary>The next kept or received item, or null after <paramref name="timeout"/>.</summary>
    private async Task<Incoming?> NextItemAsync(TimeSpan timeout)
    {
        if (_kept.Count > 0)
        {
            return _kept.Dequeue();
        }

        if (_closedSeen)
        {
            // Closing is reported once by the receive loop; later expectations see it again.
            return Incoming.Closed(null);
        }

        using var timer = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
        timer.CancelAfter(timeout);
        try
        {
            var item = await _incoming.Reader.ReadAsync(timer.Token);
            _closedSeen |= !item.IsPacket;
            return item;
        }
        catch (OperationCanceledException) when (!_stop.IsCancellationRequested)
        {
            return null;
        }
        catch (ChannelClosedException)
        {
            _closedSeen = true;
            return Incoming.Closed(null);
        }
    }

    private async Task ReceiveAsync(CancellationToken cancellationToken)
    {
        // Let the constructor return before the first read.
        await Task.Yield();
        var reader = PipeReader.Create(_stream, new StreamPipeReaderOptions(leaveOpen: true));
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync(cancellationToken);
                var buffer = result.Buffer;
                while (MqttFrameReader.TryRead(ref buffer, int.MaxValue, out var frame))
                {
                    _incoming.Writer.TryWrite(Incoming.Packet(frame.Header, frame.Body.ToArray()));
                }

                if (result.IsCompleted)
                {
                    _incoming.Writer.TryWrite(Incoming.Closed(buffer.IsEmpty ? null : new IOException($"connection closed inside a packet ({buffer.Length} bytes left)")));
                    return;
                }

                reader.AdvanceTo(buffer.Start, buffer.End);
            }
        }
        catch (MqttProtocolException e)
        {
            _incoming.Writer.TryWrite(Incoming.Closed(e));
        }
        catch (Exception e) when (e is IOException or SocketException or ObjectDisposedException && !cancellationToken.IsCancellationRequested)
        {
            // A reset is a close, as far as MQTT is concerned.
            _incoming.Writer.TryWrite(Incoming.Closed(e));
        }
        catch (OperationCanceledException) when (cancellationToken.IsCancellationRequested)
        {
            // Disposed.
        }
        catch (Exception) when (cancellationToken.IsCancellationRequested)
        {
            // Disposed while reading: the socket errors that follow are ours.
        }
        finally
        {
            _incoming.Writer.TryComplete();
            await reader.CompleteAsync();
        }
    }

    /// <summary>A packet as received (header byte and body), or the end of the connection.</summary>
    private readonly record struct Incoming(byte Header, byte[]? Body, Exception? Error)
    {
        public bool IsPacket => Body is not null;

        public static Incoming Packet(byte header, byte[] body) => new(header, body, null);

        public static Incoming Closed(Exception? error) => new(0, null, error);

        public MqttFrame ToFrame() =>
            new(Header, new ReadOnlySequence<byte>(Body!), 1 + RemainingLengthSize(Body!.Length) + Body.Length);

        // The bytes of MQTT's variable byte integer for the remaining length (MqttPacketEncoder's is internal to Saito.Mqtt).
        private static int RemainingLengthSize(int length) => length < 128 ? 1 : length < 16_384 ? 2 : length < 2_097_152 ? 3 : 4;

        public string Describe() => Error switch
        {
            null => "the broker closed the connection",
            MqttProtocolException e => $"the broker sent bytes that are not an MQTT packet: {e.Message}",
            _ => $"the connection ended ({Error.GetType().Name}: {Error.Message})",
        };
    }
}

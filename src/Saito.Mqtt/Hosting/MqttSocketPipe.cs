using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// One plain TCP MQTT connection on Saito's own socket listener (<see cref="MqttSocketListener"/>), as the
/// <see cref="IDuplexPipe"/> the broker reads and writes. It exists for memory per idle connection (issue 15): Kestrel
/// gives every connection two <see cref="Pipe"/>s, a send and a receive loop and its connection bookkeeping, about
/// 3 KB of objects whatever the connection does. Here an idle connection holds the socket and this object (with its
/// writer); it holds no buffer: it waits for data with a zero-byte receive, rents a buffer only when bytes are there
/// and gives it back as soon as they are consumed; the writer rents one per flush.
/// <para>
/// It is a pipe for exactly one reader (the connection's read loop) and one writer at a time (the send loop or the
/// read loop writing inline, which the connection already serialises). The reader hands out one contiguous buffer, so
/// a packet is always a single segment when it is handed out whole. A packet larger than the read buffer is gathered
/// in read-sized pieces while it arrives (handed out as a sequence of them), and joined into one buffer of its size
/// once its last byte is in: a packet begun and left unfinished holds what it sent, rounded up to one piece, never a
/// buffer grown for the size it announced (issue 32: buffers that doubled held 512 KiB for 250 KiB sent and left the
/// large object heap fragmented). The broker's frame reader refuses a packet past <c>Mqtt:MaxPacketSize</c> as soon as
/// its fixed header is in.
/// </para>
/// <para>
/// Errors read as Kestrel's did: a reset or abort while reading is an <see cref="IOException"/>; a failed send
/// completes the writer (<see cref="FlushResult.IsCompleted"/>), the reader then sees the connection end.
/// </para>
/// </summary>
internal sealed class MqttSocketPipe : PipeReader, IDuplexPipe
{
    /// <summary>What a read rents when bytes arrive: most packets of a classroom fit, several at once at load.</summary>
    internal const int ReceiveSize = 8 * 1024;

    /// <summary>Buffers for reads and writes; more per bucket than the shared pool keeps, for hundreds of busy hubs.</summary>
    internal static readonly ArrayPool<byte> Buffers = ArrayPool<byte>.Create(maxArrayLength: 1024 * 1024, maxArraysPerBucket: 1024);

    /// <summary>
    /// Buffers a large packet is joined into once whole: a pool that keeps few. A pool never gives memory back, and the
    /// shared one above keeps 1,024 arrays of each size.
    /// </summary>
    internal static readonly ArrayPool<byte> LargeReads = ArrayPool<byte>.Create(maxArrayLength: 1024 * 1024, maxArraysPerBucket: 16);

    /// <summary>
    /// The pieces a large packet is gathered in while it arrives, kept for reuse up to what
    /// <c>Mqtt:MaxUnfinishedPacketBytes</c> allows by default: under a flood of slow packets the pieces of the connections
    /// closed for the budget are what the others grow into, not garbage.
    /// </summary>
    internal static readonly ArrayPool<byte> Pieces = ArrayPool<byte>.Create(maxArrayLength: ReceiveSize, maxArraysPerBucket: 4096);

    private readonly Socket _socket;
    private readonly Writer _writer;
    private byte[]? _in;
    private int _start;
    private int _end;
    private bool _examinedAll = true;
    private bool _ended;
    private bool _readerDone;

    // A packet larger than the read buffer, while it arrives: its pieces, the bytes in them and the packet's size.
    private Piece? _first;
    private Piece? _last;
    private long _gathered;
    private long _packetSize;
    private int _halvesDone;

    public MqttSocketPipe(Socket socket)
    {
        _socket = socket;
        _writer = new Writer(this);
    }

    /// <summary>Whether a read buffer is rented now (none while the connection is idle).</summary>
    internal bool HoldsBuffer => _in is not null || _first is not null;

    /// <summary>Bytes of read buffers rented now: what a packet that is still arriving costs.</summary>
    internal long BufferBytes
    {
        get
        {
            long bytes = _in?.Length ?? 0;
            for (var piece = _first; piece is not null; piece = (Piece?)piece.Next)
            {
                bytes += piece.Array.Length;
            }

            return bytes;
        }
    }

    public PipeReader Input => this;

    public PipeWriter Output => _writer;

    /// <summary>Closes at once with a reset (RST), whatever is unsent: for a peer that stopped reading.</summary>
    public void Abort()
    {
        try
        {
            _socket.LingerState = new LingerOption(true, 0);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // Gone already.
        }

        _socket.Dispose();
    }

    public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_readerDone, this);
        if (HasUnexamined || _ended)
        {
            return new ValueTask<ReadResult>(Buffered());
        }

        return ReceiveAsync(cancellationToken);
    }

    private bool HasUnexamined => !_examinedAll && (_first is not null || (_in is not null && _end > _start));

    private ReadResult Buffered() => new(
        _first is not null ? new ReadOnlySequence<byte>(_first, 0, _last!, _last!.Memory.Length)
        : _in is null ? ReadOnlySequence<byte>.Empty
        : new ReadOnlySequence<byte>(_in, _start, _end - _start),
        isCanceled: false, isCompleted: _ended);

    private async ValueTask<ReadResult> ReceiveAsync(CancellationToken cancellationToken)
    {
        try
        {
            if (_first is null && _in is not null && _end == _in.Length)
            {
                MakeRoom();
            }

            if (_first is not null)
            {
                return await GatherAsync(cancellationToken);
            }

            if (_in is null)
            {
                // Wait for data without a buffer: an idle connection holds none.
                await _socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None, cancellationToken);
                _in = Buffers.Rent(ReceiveSize);
                _start = _end = 0;
            }

            int received = await _socket.ReceiveAsync(_in.AsMemory(_end), SocketFlags.None, cancellationToken);
            if (received == 0)
            {
                _ended = true;
            }

            _end += received;
            _examinedAll = false;
            return Buffered();
        }
        catch (SocketException e)
        {
            throw new IOException($"Receiving from the client failed: {e.Message}", e);
        }
    }

    /// <summary>
    /// The buffer is full and its last packet unfinished: move that packet to the front when it fits, or else gather it
    /// in pieces from here on, this buffer the first of them.
    /// </summary>
    private void MakeRoom()
    {
        var current = _in!;
        int length = _end - _start;
        long size = MqttFrameReader.PacketSize(current.AsSpan(_start, length));
        if (_start > 0 && size <= current.Length)
        {
            Buffer.BlockCopy(current, _start, current, 0, length);
            _start = 0;
            _end = length;
            return;
        }

        // A size of 0 (a header not yet whole cannot fill the buffer) or one already here (not MQTT): gather, never join.
        _packetSize = size > length ? size : long.MaxValue;
        _first = _last = new Piece(current, _start, _end, runningIndex: 0);
        _gathered = length;
        _in = null;
        _start = _end = 0;
    }

    /// <summary>One read into the last piece (a new one when it is full); the packet joined into one buffer once whole.</summary>
    private async ValueTask<ReadResult> GatherAsync(CancellationToken cancellationToken)
    {
        var last = _last!;
        if (last.End == last.Array.Length)
        {
            last = _last = last.Append(Pieces.Rent(ReceiveSize));
        }

        int received = await _socket.ReceiveAsync(last.Array.AsMemory(last.End), SocketFlags.None, cancellationToken);
        if (received == 0)
        {
            _ended = true;
        }

        last.Grow(received);
        _gathered += received;
        _examinedAll = false;
        if (_gathered >= _packetSize)
        {
            Join();
        }

        return Buffered();
    }

    /// <summary>The gathered packet (and any bytes after it) into one buffer of its size; the pieces go back.</summary>
    private void Join()
    {
        var joined = LargeReads.Rent((int)_gathered);
        int at = 0;
        for (var piece = _first; piece is not null; piece = (Piece?)piece.Next)
        {
            piece.Memory.Span.CopyTo(joined.AsSpan(at));
            at += piece.Memory.Length;
        }

        ReturnPieces();
        _in = joined;
        _start = 0;
        _end = at;
    }

    private void ReturnPieces()
    {
        for (var piece = _first; piece is not null; piece = (Piece?)piece.Next)
        {
            if (piece == _first)
            {
                ReturnRead(piece.Array);
            }
            else
            {
                Pieces.Return(piece.Array);
            }
        }

        _first = _last = null;
        _gathered = 0;
        _packetSize = 0;
    }

    public override bool TryRead(out ReadResult result)
    {
        ObjectDisposedException.ThrowIf(_readerDone, this);
        if (HasUnexamined || _ended)
        {
            result = Buffered();
            return true;
        }

        result = default;
        return false;
    }

    public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        if (_first is not null)
        {
            // Gathering: the packet at the front is not whole, so nothing of it can be consumed.
            if (consumed.GetObject() is { } segment && (segment != _first || consumed.GetInteger() != 0))
            {
                throw new InvalidOperationException("AdvanceTo past a packet not yet whole");
            }

            _examinedAll = examined.GetObject() == _last && examined.GetInteger() == _last!.Memory.Length;
            return;
        }

        if (_in is null)
        {
            return;
        }

        // Positions in a sequence over one array are indexes into that array.
        int consumedAt = consumed.GetObject() is null ? _start : consumed.GetInteger();
        int examinedAt = examined.GetObject() is null ? consumedAt : examined.GetInteger();
        if (consumedAt < _start || consumedAt > _end || examinedAt < consumedAt || examinedAt > _end)
        {
            throw new InvalidOperationException("AdvanceTo outside the data last read");
        }

        _start = consumedAt;
        _examinedAll = examinedAt == _end;
        if (_start == _end)
        {
            ReturnRead(_in);
            _in = null;
            _start = _end = 0;
            _examinedAll = true;
        }
    }

    /// <summary>Not used by the broker (it cancels reads with its token); a pipe that needs it runs on Kestrel.</summary>
    public override void CancelPendingRead() =>
        throw new NotSupportedException("MqttSocketPipe reads are cancelled with their CancellationToken");

    public override void Complete(Exception? exception = null)
    {
        if (_readerDone)
        {
            return;
        }

        _readerDone = true;
        if (_in is not null)
        {
            ReturnRead(_in);
            _in = null;
        }

        ReturnPieces();

        HalfDone();
    }

    private static void ReturnRead(byte[] buffer) => (buffer.Length > ReceiveSize ? LargeReads : Buffers).Return(buffer);

    /// <summary>Reader and writer both completed: the socket closes (after the writer's FIN, in order).</summary>
    private void HalfDone()
    {
        if (Interlocked.Increment(ref _halvesDone) == 2)
        {
            _socket.Dispose();
        }
    }

    /// <summary>One read-sized piece of a packet still arriving: its bytes are <c>Array[Start..End]</c>.</summary>
    private sealed class Piece : ReadOnlySequenceSegment<byte>
    {
        public Piece(byte[] array, int start, int end, long runningIndex)
        {
            Array = array;
            Start = start;
            End = end;
            RunningIndex = runningIndex;
            Memory = array.AsMemory(start, end - start);
        }

        public byte[] Array { get; }

        public int Start { get; }

        public int End { get; private set; }

        public void Grow(int count)
        {
            End += count;
            Memory = Array.AsMemory(Start, End - Start);
        }

        public Piece Append(byte[] array)
        {
            var next = new Piece(array, 0, 0, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }

    private sealed class Writer(MqttSocketPipe pipe) : PipeWriter
    {
        private byte[]? _out;
        private int _written;
        private bool _failed;
        private bool _done;

        public override void Advance(int bytes)
        {
            if (bytes < 0 || _out is null || _written + bytes > _out.Length)
            {
                throw new ArgumentOutOfRangeException(nameof(bytes), bytes, "Advanced past the memory handed out");
            }

            _written += bytes;
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_written);

        public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_written);

        private byte[] Reserve(int sizeHint)
        {
            ObjectDisposedException.ThrowIf(_done, this);
            int needed = _written + Math.Max(sizeHint, 1);
            if (_out is null)
            {
                _out = Buffers.Rent(Math.Max(needed, 4096));
            }
            else if (needed > _out.Length)
            {
                var larger = Buffers.Rent(Math.Max(needed, _out.Length * 2));
                Buffer.BlockCopy(_out, 0, larger, 0, _written);
                Buffers.Return(_out);
                _out = larger;
            }

            return _out;
        }

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            if (_failed || _done)
            {
                Discard();
                return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true));
            }

            if (_written == 0)
            {
                return new ValueTask<FlushResult>(default(FlushResult));
            }

            // Most sends fit in the socket's buffer and complete at once: no state machine then.
            try
            {
                var send = pipe._socket.SendAsync(_out.AsMemory(0, _written), SocketFlags.None, cancellationToken);
                if (!send.IsCompletedSuccessfully)
                {
                    return AwaitSendAsync(send, cancellationToken);
                }

#pragma warning disable VSTHRD103 // Completed already (checked above): reading it does not block.
                int sent = send.Result;
#pragma warning restore VSTHRD103
                if (sent == _written)
                {
                    Discard();
                    return new ValueTask<FlushResult>(default(FlushResult));
                }

                return SendRestAsync(sent, cancellationToken);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return new ValueTask<FlushResult>(Failed());
            }
        }

        private async ValueTask<FlushResult> AwaitSendAsync(ValueTask<int> send, CancellationToken cancellationToken)
        {
            int sent;
            try
            {
                sent = await send;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return Failed();
            }

            return await SendRestAsync(sent, cancellationToken);
        }

        /// <summary>A send took part of the bytes (the socket's buffer was full): the rest, as the peer reads.</summary>
        private async ValueTask<FlushResult> SendRestAsync(int sent, CancellationToken cancellationToken)
        {
            try
            {
                while (sent < _written)
                {
                    sent += await pipe._socket.SendAsync(_out.AsMemory(sent, _written - sent), SocketFlags.None, cancellationToken);
                }

                Discard();
                return default;
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                return Failed();
            }
        }

        /// <summary>The peer is gone (reset, or the socket was aborted): like Kestrel, the writer reports itself completed.</summary>
        private FlushResult Failed()
        {
            _failed = true;
            Discard();
            return new FlushResult(isCanceled: false, isCompleted: true);
        }

        private void Discard()
        {
            if (_out is not null)
            {
                Buffers.Return(_out);
                _out = null;
            }

            _written = 0;
        }

        /// <summary>Not used by the broker; see <see cref="MqttSocketPipe.CancelPendingRead"/>.</summary>
        public override void CancelPendingFlush() =>
            throw new NotSupportedException("MqttSocketPipe sends are cancelled with their CancellationToken");

        /// <summary>No more writes: bytes advanced but not flushed are dropped (the broker flushes first); the peer gets a FIN.</summary>
        public override void Complete(Exception? exception = null)
        {
            if (_done)
            {
                return;
            }

            _done = true;
            Discard();
            try
            {
                pipe._socket.Shutdown(SocketShutdown.Send);
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                // Reset or aborted already: nothing to end in order.
            }

            pipe.HalfDone();
        }
    }
}

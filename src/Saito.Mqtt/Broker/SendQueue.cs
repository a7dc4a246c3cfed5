using System.Threading.Tasks.Sources;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

/// <summary>
/// What wakes a connection's send loop, and the control packets (CONNACK, SUBACK, PINGRESP, DISCONNECT, ...) it
/// writes in order. It replaces two bounded channels that were about 1.1 KB per connection while the connection is
/// idle (issue 15: memory per idle connection); here an idle connection holds this one object, and the queue
/// exists only once a control packet was queued.
/// <para>
/// The wake-up is an auto-reset signal with one waiter (the send loop): <see cref="Signal"/> from any thread sets it,
/// <see cref="WaitAsync"/> completes at once when it is set and resets it. The waiter's continuation runs on the
/// thread pool, never inline in whoever signalled (a writer thread completing a batch, a publisher routing).
/// </para>
/// <para>
/// The control queue is bounded: past <see cref="Capacity"/> packets the reader waits for room, so a client that
/// floods PINGREQ or SUBSCRIBE without reading its answers is held back by TCP, as before.
/// </para>
/// </summary>
internal sealed class SendQueue : IValueTaskSource
{
    public const int Capacity = 1024;

    private const int Idle = 0;
    private const int Set = 1;
    private const int Waiting = 2;

    private readonly Lock _lock = new();
    private ManualResetValueTaskSourceCore<bool> _wake = new() { RunContinuationsAsynchronously = true };
    private int _state;
    private Queue<MqttPacket>? _control;
    private TaskCompletionSource? _room;
    private bool _completed;

    /// <summary>Control packets queued and not yet taken by the send loop.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _control?.Count ?? 0;
            }
        }
    }

    /// <summary>True once <see cref="Complete"/> was called and every queued control packet was taken.</summary>
    public bool IsDrained
    {
        get
        {
            lock (_lock)
            {
                return _completed && (_control is null || _control.Count == 0);
            }
        }
    }

    /// <summary>Wakes the send loop (or makes its next wait return at once).</summary>
    public void Signal()
    {
        while (true)
        {
            switch (Volatile.Read(ref _state))
            {
                case Set:
                    return;
                case Idle:
                    if (Interlocked.CompareExchange(ref _state, Set, Idle) == Idle)
                    {
                        return;
                    }

                    break;
                default:
                    if (Interlocked.CompareExchange(ref _state, Idle, Waiting) == Waiting)
                    {
                        _wake.SetResult(true);
                        return;
                    }

                    break;
            }
        }
    }

    /// <summary>Completes when signalled; one waiter at a time (the send loop). Cancelling the connection signals it too.</summary>
    public ValueTask WaitAsync()
    {
        if (Interlocked.CompareExchange(ref _state, Idle, Set) == Set)
        {
            return ValueTask.CompletedTask;
        }

        _wake.Reset();
        if (Interlocked.CompareExchange(ref _state, Waiting, Idle) != Idle)
        {
            // Signalled between the two steps: take it.
            Volatile.Write(ref _state, Idle);
            return ValueTask.CompletedTask;
        }

        return new ValueTask(this, _wake.Version);
    }

    /// <summary>Queues a control packet; false once the queue is completed (the connection is closing: nothing more goes out).</summary>
    public bool TryWrite(MqttPacket packet)
    {
        lock (_lock)
        {
            if (_completed)
            {
                return false;
            }

            (_control ??= new Queue<MqttPacket>(4)).Enqueue(packet);
        }

        Signal();
        return true;
    }

    /// <summary>Queues a control packet, waiting for room while <see cref="Capacity"/> are queued; dropped once completed.</summary>
    public async ValueTask WriteAsync(MqttPacket packet, CancellationToken token)
    {
        while (true)
        {
            Task room;
            lock (_lock)
            {
                if (_completed)
                {
                    return;
                }

                _control ??= new Queue<MqttPacket>(4);
                if (_control.Count < Capacity)
                {
                    _control.Enqueue(packet);
                    break;
                }

                room = (_room ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)).Task;
            }

            Signal();
            await room.WaitAsync(token);
        }

        Signal();
    }

    /// <summary>Takes the next control packet (the send loop only).</summary>
    public bool TryRead(out MqttPacket packet)
    {
        TaskCompletionSource? room = null;
        lock (_lock)
        {
            if (_control is null || !_control.TryDequeue(out packet!))
            {
                packet = null!;
                return false;
            }

            if (_room is not null && _control.Count < Capacity)
            {
                room = _room;
                _room = null;
            }
        }

        room?.TrySetResult();
        return true;
    }

    /// <summary>No more control packets: what is queued is still written, then the send loop ends.</summary>
    public void Complete()
    {
        TaskCompletionSource? room;
        lock (_lock)
        {
            _completed = true;
            room = _room;
            _room = null;
        }

        room?.TrySetResult();
        Signal();
    }

    void IValueTaskSource.GetResult(short token) => _wake.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource.GetStatus(short token) => _wake.GetStatus(token);

    void IValueTaskSource.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _wake.OnCompleted(continuation, state, token, flags);
}

namespace Saito.Mqtt.Client;

/// <summary>
/// A counting gate whose limit can change (a broker's Receive Maximum differs from one CONNACK to the
/// next). Waiters are served first come, first served; no thread blocks.
/// </summary>
internal sealed class AsyncLimiter
{
    private readonly Lock _lock = new();
    private readonly Queue<TaskCompletionSource> _waiters = new();
    private int _count;
    private int _limit;
    private Exception? _closed;

    public AsyncLimiter(int limit) => _limit = limit;

    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _count;
            }
        }
    }

    /// <summary>Takes a slot, waiting while <see cref="Count"/> is at the limit.</summary>
    public ValueTask WaitAsync(CancellationToken cancellationToken)
    {
        TaskCompletionSource waiter;
        lock (_lock)
        {
            if (_closed is not null)
            {
                return ValueTask.FromException(_closed);
            }

            if (_count < _limit && _waiters.Count == 0)
            {
                _count++;
                return ValueTask.CompletedTask;
            }

            waiter = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            _waiters.Enqueue(waiter);
        }

        return new ValueTask(WaitCoreAsync(waiter, cancellationToken));
    }

    /// <summary>True when a slot was free without waiting.</summary>
    public bool TryTake()
    {
        lock (_lock)
        {
            if (_closed is null && _count < _limit && _waiters.Count == 0)
            {
                _count++;
                return true;
            }

            return false;
        }
    }

    public void Release()
    {
        lock (_lock)
        {
            if (_count > 0)
            {
                _count--;
            }

            Grant();
        }
    }

    public void SetLimit(int limit)
    {
        lock (_lock)
        {
            _limit = limit;
            Grant();
        }
    }

    /// <summary>Fails every waiter, and every later wait, with <paramref name="reason"/>.</summary>
    public void Close(Exception reason)
    {
        lock (_lock)
        {
            _closed = reason;
            while (_waiters.TryDequeue(out var waiter))
            {
                waiter.TrySetException(reason);
            }
        }
    }

    /// <summary>Forgets every slot taken and opens a closed limiter again.</summary>
    public void Reset()
    {
        lock (_lock)
        {
            _count = 0;
            _closed = null;
            Grant();
        }
    }

    private async Task WaitCoreAsync(TaskCompletionSource waiter, CancellationToken cancellationToken)
    {
        await using (cancellationToken.Register(() =>
        {
            lock (_lock)
            {
                // Granted and cancelled at once: the grant wins, so the slot is not lost.
                waiter.TrySetCanceled(cancellationToken);
            }
        }))
        {
#pragma warning disable VSTHRD003 // VSTHRD003: no synchronization context in this library (sockets and thread pool only), so awaiting a task started elsewhere cannot deadlock.
            await waiter.Task;
#pragma warning restore VSTHRD003
        }
    }

    private void Grant()
    {
        while (_count < _limit && _waiters.TryDequeue(out var waiter))
        {
            if (waiter.TrySetResult())
            {
                _count++;
            }
        }
    }
}

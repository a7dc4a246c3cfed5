namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Bounds how many readings wait for a writer. <see cref="AcquireAsync"/> waits, first come first served, until
/// the amount fits; a request larger than the whole capacity is let through when the queue is empty, so one
/// huge message cannot wait forever. When it is full, publishers wait here (their acknowledgements are held),
/// which is how a slow database slows the hubs down instead of growing Saito's memory.
/// </summary>
internal sealed class CapacityGate
{
    private readonly object _lock = new();
    private readonly Queue<Waiter> _waiters = new();
    private readonly long _capacity;
    private long _used;

    public CapacityGate(long capacity)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(capacity, 1);
        _capacity = capacity;
    }

    public long Capacity => _capacity;

    public long Used
    {
        get
        {
            lock (_lock)
            {
                return _used;
            }
        }
    }

    public ValueTask AcquireAsync(long amount, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(amount, 1);
        lock (_lock)
        {
            if (_waiters.Count == 0 && Fits(amount))
            {
                _used += amount;
                return ValueTask.CompletedTask;
            }

            var waiter = new Waiter(amount);
            _waiters.Enqueue(waiter);
            if (cancellationToken.CanBeCanceled)
            {
                waiter.Registration = cancellationToken.Register(static state => ((Waiter)state!).Completion.TrySetCanceled(), waiter);
            }

            return new ValueTask(waiter.Completion.Task);
        }
    }

    public void Release(long amount)
    {
        List<Waiter>? granted = null;
        lock (_lock)
        {
            _used -= amount;
            if (_used < 0)
            {
                throw new InvalidOperationException("Released more than was acquired.");
            }

            while (_waiters.TryPeek(out var next))
            {
                if (next.Completion.Task.IsCompleted)
                {
                    _waiters.Dequeue(); // cancelled while waiting
                    continue;
                }

                if (!Fits(next.Amount))
                {
                    break;
                }

                _waiters.Dequeue();
                _used += next.Amount;
                (granted ??= []).Add(next);
            }
        }

        if (granted is null)
        {
            return;
        }

        foreach (var waiter in granted)
        {
            waiter.Registration.Dispose();
            if (!waiter.Completion.TrySetResult())
            {
                // Cancelled between the check and now: give its share back.
                Release(waiter.Amount);
            }
        }
    }

    private bool Fits(long amount) => _used + amount <= _capacity || _used == 0;

    private sealed class Waiter(long amount)
    {
        public long Amount { get; } = amount;
        public TaskCompletionSource Completion { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
        public CancellationTokenRegistration Registration { get; set; }
    }
}

namespace Saito.Server.Dashboard;

/// <summary>
/// "The registry changed": a check-in, a check-out or an assignment made through Saito. The live view reads the
/// registry again at once instead of at its next <see cref="DashboardOptions.RefreshSeconds"/>.
/// </summary>
public sealed class LiveSignal
{
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private int _pending;

    public void RegistryChanged()
    {
        Volatile.Write(ref _pending, 1);
        Volatile.Read(ref _changed).TrySetResult();
    }

    /// <summary>True once per change (or burst of changes).</summary>
    internal bool TakeChanged()
    {
        if (Interlocked.Exchange(ref _pending, 0) == 0)
        {
            return false;
        }

        // A change signalled after this point sets _pending again, so WaitAsync does not miss it.
        Interlocked.Exchange(ref _changed, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
        return true;
    }

    internal Task WaitAsync(CancellationToken cancellationToken) =>
        Volatile.Read(ref _pending) == 1 ? Task.CompletedTask : Volatile.Read(ref _changed).Task.WaitAsync(cancellationToken);
}

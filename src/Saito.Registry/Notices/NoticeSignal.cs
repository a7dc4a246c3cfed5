using System.Threading.Channels;

namespace Saito.Registry.Notices;

/// <summary>
/// Wakes the notice sender at once, so a check-in's email does not wait for the next poll. Call
/// <see cref="Notify"/> after the transaction that queued notices has committed; several calls before the sender
/// wakes count as one.
/// </summary>
public sealed class NoticeSignal
{
    private readonly Channel<bool> _wakeups = Channel.CreateBounded<bool>(new BoundedChannelOptions(1)
    {
        FullMode = BoundedChannelFullMode.DropWrite,
        SingleReader = true,
    });

    public void Notify() => _wakeups.Writer.TryWrite(true);

    /// <summary>Waits for <see cref="Notify"/> or <paramref name="timeout"/>, whichever comes first; true when notified.</summary>
    internal async Task<bool> WaitAsync(TimeSpan timeout, TimeProvider time, CancellationToken cancellationToken)
    {
        using var timer = new CancellationTokenSource(timeout, time);
        using var either = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken, timer.Token);
        try
        {
            await _wakeups.Reader.ReadAsync(either.Token);
            return true;
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            return false; // the poll interval passed: not an error
        }
    }
}

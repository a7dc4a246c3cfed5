using System.Diagnostics;
using Saito.Storage;

namespace Saito.Ingestion.Hosting;

/// <summary>What /health heard from the database: answered, failed (with why), or still waiting (for how long).</summary>
internal readonly record struct PingAnswer(PingState State, TimeSpan Waiting = default, string? Error = null);

internal enum PingState
{
    Answered,
    Failed,
    Waiting,
}

/// <summary>
/// The round trip /health makes to the database (so that a database that went away while no readings arrived shows),
/// one at a time and never waited on for long: a check waits at most its own short wait for the ping in flight and
/// otherwise reports how long that ping has been waiting. A database whose processes are frozen neither answers nor
/// fails; a check that awaited its ping would hang with it (issue 32: 2 s, once 15 s, while PostgreSQL was stopped
/// with SIGSTOP), and one ping per check would pile connections onto it. The ping itself gives up after
/// <see cref="Timeout"/>, and the next check starts a new one.
/// </summary>
internal sealed class DatabasePing(IReadingStore store)
{
    /// <summary>How long one ping may take before it counts as failed.</summary>
    public static TimeSpan Timeout { get; } = TimeSpan.FromSeconds(10);

    private readonly object _lock = new();
    private Task<string?> _current = Task.FromResult<string?>(null);
    private long _startedAt;

    /// <summary>Starts a ping unless one is in flight, and waits for it at most <paramref name="wait"/>.</summary>
    public async Task<PingAnswer> AskAsync(TimeSpan wait, CancellationToken cancellationToken)
    {
        Task<string?> ping;
        long startedAt;
        lock (_lock)
        {
            if (_current.IsCompleted)
            {
                _startedAt = Stopwatch.GetTimestamp();
                _current = PingAsync();
            }

            ping = _current;
            startedAt = _startedAt;
        }

        // The ping is this object's, shared by the checks; a server has no synchronization context to deadlock on.
        // A wait that ends first (or a cancelled check) leaves the ping running for the next check.
#pragma warning disable VSTHRD003
        await ((Task)ping).WaitAsync(wait, cancellationToken).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
#pragma warning restore VSTHRD003
        if (!ping.IsCompleted)
        {
            return new PingAnswer(PingState.Waiting, Stopwatch.GetElapsedTime(startedAt));
        }

        return await ping is { } error ? new PingAnswer(PingState.Failed, Error: error) : new PingAnswer(PingState.Answered);
    }

    /// <summary>Null when the database answered, else why not: a ping never faults, so nobody has to observe it.</summary>
    private async Task<string?> PingAsync()
    {
        using var timeout = new CancellationTokenSource(Timeout);
        try
        {
            await store.PingAsync(timeout.Token);
            return null;
        }
        catch (OperationCanceledException) when (timeout.IsCancellationRequested)
        {
            return $"no answer within {Timeout.TotalSeconds:F0} s";
        }
        catch (Exception e) when (e is not OutOfMemoryException)
        {
            return e.GetBaseException().Message;
        }
    }
}

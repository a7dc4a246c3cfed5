namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Whether the database is taking writes, as the writers last saw it: /health reports it, and it is why
/// acknowledgements are held (a database that stays down holds them all back until it returns).
/// </summary>
public sealed class StorageHealth
{
    private readonly object _lock = new();
    private DateTimeOffset? _failingSince;
    private string? _lastError;
    private DateTimeOffset? _lastCommit;

    /// <summary>A snapshot for the health check and logs.</summary>
    public (DateTimeOffset? FailingSince, string? LastError, DateTimeOffset? LastCommit) Snapshot()
    {
        lock (_lock)
        {
            return (_failingSince, _lastError, _lastCommit);
        }
    }

    /// <summary>The database was prepared (<see cref="StorageStartup"/>): the failures its retries met are over.</summary>
    public void MarkPrepared()
    {
        lock (_lock)
        {
            _failingSince = null;
            _lastError = null;
        }
    }

    /// <summary>A write went through; returns since when writes had been failing, or null when they were not.</summary>
    public DateTimeOffset? MarkSucceeded(DateTimeOffset now)
    {
        lock (_lock)
        {
            var failingSince = _failingSince;
            _failingSince = null;
            _lastError = null;
            _lastCommit = now;
            return failingSince;
        }
    }

    public void MarkFailing(DateTimeOffset now, string error)
    {
        lock (_lock)
        {
            _failingSince ??= now;
            _lastError = error;
        }
    }
}

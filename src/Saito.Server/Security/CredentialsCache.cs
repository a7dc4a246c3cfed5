namespace Saito.Server.Security;

/// <summary>
/// The credentials file as it is now, read again when its time stamp or length changes (a file that cannot be read
/// keeps the last good set): one per server, for the broker's logins and for the hubs' sites.
/// </summary>
internal sealed partial class CredentialsCache(string path, ILogger<CredentialsCache> logger)
{
    private readonly CredentialStore _store = new(path);
    private readonly Lock _reloadLock = new();
    private (DateTime Written, long Length) _stamp;
    private Dictionary<string, Credential> _clients = new(StringComparer.Ordinal);
    private long _checkedAt = long.MinValue / 2; // never: far enough back that the subtraction cannot overflow

    public string Path => _store.Path;

    /// <summary>
    /// The clients by name, the file's time stamp looked at no more than once per <paramref name="maxAge"/>: for a
    /// question asked per message (a roaming device's hub's site), where a stat per message would cost more than the answer.
    /// </summary>
    public IReadOnlyDictionary<string, Credential> Recent(TimeSpan maxAge) =>
        Environment.TickCount64 - Volatile.Read(ref _checkedAt) < (long)maxAge.TotalMilliseconds ? Volatile.Read(ref _clients) : Current();

    /// <summary>The clients by name, as the file says now (a stat per call: for a CONNECT).</summary>
    public IReadOnlyDictionary<string, Credential> Current()
    {
        Volatile.Write(ref _checkedAt, Environment.TickCount64);
        var info = new FileInfo(_store.Path);
        var stamp = info.Exists ? (info.LastWriteTimeUtc, info.Length) : (DateTime.MinValue, -1L);
        lock (_reloadLock)
        {
            if (stamp == _stamp)
            {
                return _clients;
            }

            try
            {
                _clients = _store.Load().ToDictionary(c => c.Name, StringComparer.Ordinal);
                _stamp = stamp;
                LogLoaded(_store.Path, _clients.Count);
            }
            catch (Exception ex) when (ex is IOException or System.Text.Json.JsonException or InvalidDataException or UnauthorizedAccessException)
            {
                LogUnreadable(_store.Path, ex.Message);
            }

            return _clients;
        }
    }

    [LoggerMessage(5102, LogLevel.Information, "Credentials file {Path}: {Count} client(s)")]
    private partial void LogLoaded(string path, int count);

    [LoggerMessage(5103, LogLevel.Error, "Credentials file {Path} cannot be read ({Detail}); keeping the clients read before")]
    private partial void LogUnreadable(string path, string detail);
}

/// <summary>
/// The hubs' sites from the credentials file (<c>saito hubs add hub-1 --site north</c>); whether any hub has one is
/// asked for every message, a hub's site only when a device's message comes through a hub other than its own; the file
/// is looked at once a second at most, so a change of site counts from the next second.
/// </summary>
internal sealed class CredentialHubSites(CredentialsCache credentials) : Saito.Ingestion.Pipeline.IHubSites
{
    private static readonly TimeSpan s_fresh = TimeSpan.FromSeconds(1);

    public string? SiteOf(string hub) =>
        credentials.Recent(s_fresh).TryGetValue(hub, out var client) && client.IsHub ? client.Site : null;

    public bool IsHub(string hub) => credentials.Recent(s_fresh).TryGetValue(hub, out var client) && client.IsHub;

    // Asked for every message: worked out once per reading of the file.
    private SitesInUse? _inUse;

    public bool Any
    {
        get
        {
            var clients = credentials.Recent(s_fresh);
            if (Volatile.Read(ref _inUse) is { } known && ReferenceEquals(known.Clients, clients))
            {
                return known.Any;
            }

            bool any = clients.Values.Any(c => c.IsHub && c.Site is not null);
            Volatile.Write(ref _inUse, new SitesInUse(clients, any));
            return any;
        }
    }

    private sealed record SitesInUse(IReadOnlyDictionary<string, Credential> Clients, bool Any);
}

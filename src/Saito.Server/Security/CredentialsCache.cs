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

    public string Path => _store.Path;

    /// <summary>The clients by name.</summary>
    public IReadOnlyDictionary<string, Credential> Current()
    {
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

    [LoggerMessage(4002, LogLevel.Information, "Credentials file {Path}: {Count} client(s)")]
    private partial void LogLoaded(string path, int count);

    [LoggerMessage(4003, LogLevel.Error, "Credentials file {Path} cannot be read ({Detail}); keeping the clients read before")]
    private partial void LogUnreadable(string path, string detail);
}

/// <summary>The hubs' sites from the credentials file (<c>saito hubs add hub-1 --site north</c>).</summary>
internal sealed class CredentialHubSites(CredentialsCache credentials) : Saito.Ingestion.Pipeline.IHubSites
{
    public string? SiteOf(string hub) =>
        credentials.Current().TryGetValue(hub, out var client) && client.IsHub ? client.Site : null;
}

using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.RegularExpressions;

namespace Saito.Server.Security;

/// <summary>One client Saito knows: a hub (role <c>hub</c>) or another client such as the dashboard.</summary>
public sealed class Credential
{
    public required string Name { get; init; }
    public List<string> Roles { get; init; } = [];

    /// <summary>The secret's hash (<see cref="SecretHash"/>); null for a client that signs in with a certificate only.</summary>
    public string? SecretHash { get; set; }

    /// <summary>
    /// A hub's site (<see cref="Saito.Ingestion.Pipeline.IHubSites"/>): devices bound to it may send only through hubs
    /// of the same site; null: none, its devices roam to every hub.
    /// </summary>
    public string? Site { get; set; }

    public bool Disabled { get; set; }
    public DateTimeOffset Created { get; init; }
    public DateTimeOffset? Rotated { get; set; }

    [JsonIgnore]
    public bool IsHub => Roles.Contains(CredentialStore.HubRole, StringComparer.Ordinal);
}

/// <summary>
/// The credentials file (<c>Security:CredentialsFile</c>): JSON, written whole to a temporary file, flushed and
/// renamed over the old one, so a reader (the running server) sees the old file or the new one, never half of one;
/// readable by its owner only (mode 0600).
/// </summary>
public sealed partial class CredentialStore
{
    public const string HubRole = "hub";

    private static readonly JsonSerializerOptions s_json = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    };

    public CredentialStore(string path) => Path = System.IO.Path.GetFullPath(path);

    public string Path { get; }

    /// <summary>Names (and sites) are topic levels and user names: letters, digits, '.', '_' and '-', 1 to 64 characters.</summary>
    public const string NamePatternText = "^[A-Za-z0-9._-]{1,64}$";

    /// <summary>Whether <paramref name="name"/> matches <see cref="NamePatternText"/>.</summary>
    public static bool IsValidName(string name) => NamePattern().IsMatch(name);

    /// <summary>
    /// Why the hub <paramref name="name"/> is not removed unless forced, or null when it may be (it is of no site). The
    /// site lives only in this file: without the hub, the devices bound to it would take messages from every hub.
    /// <paramref name="disable"/> and <paramref name="force"/> say how, in the caller's terms (a command or a request).
    /// </summary>
    public static string? RefuseRemoval(IEnumerable<Credential> clients, string name, string disable, string force) =>
        clients.FirstOrDefault(c => c.Name == name && c.IsHub) is { Site: { } site }
            ? $"Hub {name} is of site {site}: removed, the devices bound to it would belong to no site and take messages from every hub. " +
              $"Disable it instead ({disable}: it can no longer log in and its devices keep site {site}), " +
              $"move its devices to another hub first (POST /api/devices/{{id}}/move), or {force}."
            : null;

    /// <summary>The clients in the file; none when it does not exist yet.</summary>
    public IReadOnlyList<Credential> Load()
    {
        if (!File.Exists(Path))
        {
            return [];
        }

        using var stream = new FileStream(Path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
        var file = JsonSerializer.Deserialize<CredentialsFile>(stream, s_json)
            ?? throw new InvalidDataException($"{Path} is empty");
        return file.Clients;
    }

    public void Save(IReadOnlyList<Credential> clients)
    {
        ArgumentNullException.ThrowIfNull(clients);
        Write(Serialize(clients));
    }

    private static byte[] Serialize(IReadOnlyList<Credential> clients) =>
        JsonSerializer.SerializeToUtf8Bytes(new CredentialsFile { Clients = [.. clients] }, s_json);

    private void Write(byte[] content)
    {
        string directory = System.IO.Path.GetDirectoryName(Path)!;
        Directory.CreateDirectory(directory);
        string temporary = Path + ".tmp-" + Environment.ProcessId;
        var options = new FileStreamOptions { Mode = FileMode.Create, Access = FileAccess.Write, Options = FileOptions.WriteThrough };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }

        using (var stream = new FileStream(temporary, options))
        {
            stream.Write(content);
            stream.Flush(flushToDisk: true);
        }

        File.Move(temporary, Path, overwrite: true);
    }

    /// <summary>
    /// Loads, changes and saves the file in one step; <paramref name="change"/> returns what to tell the user. A change
    /// that changed nothing (refused: a name taken, a hub not found, a hub of a site kept) leaves the file as it was, so
    /// its time and the watchers that reload it do not move.
    /// </summary>
    public T Update<T>(Func<List<Credential>, T> change)
    {
        ArgumentNullException.ThrowIfNull(change);
        var clients = Load().ToList();
        byte[] before = Serialize(clients);
        var result = change(clients);
        byte[] after = Serialize(clients);
        if (!before.AsSpan().SequenceEqual(after))
        {
            Write(after);
        }

        return result;
    }

    [GeneratedRegex(NamePatternText)]
    private static partial Regex NamePattern();

    private sealed class CredentialsFile
    {
        public int Version { get; init; } = 1;
        public List<Credential> Clients { get; init; } = [];
    }
}

namespace Saito.Storage;

/// <summary>
/// Where Saito keeps its files when no setting names a path, the same for the server, the archiver and the command-line
/// tools whichever folder they are started from (<c>dotnet run --project</c> starts a program in its project folder):
/// <see cref="Key"/> if set; else systemd's <c>$STATE_DIRECTORY</c> (a unit with <c>StateDirectory=saito</c>); else
/// <c>$XDG_DATA_HOME/saito</c>, which is <c>~/.local/share/saito</c> unless set. In it: <c>hot/</c> and <c>archive/</c>
/// (SQLite's tiers), <c>credentials.json</c> (hub secrets) and <c>keys/</c> (sign-in keys). A path a setting names
/// itself (<c>--Storage:HotPath=...</c>) is taken as given, relative to the current folder like any command's argument.
/// </summary>
public static class DataPaths
{
    /// <summary>The setting: a folder.</summary>
    public const string Key = "Storage:DataPath";

    /// <summary>The folder as an absolute path: <paramref name="configured"/> if given, else the environment's default.</summary>
    public static string Resolve(string? configured, Func<string, string?>? environment = null)
    {
        environment ??= Environment.GetEnvironmentVariable;
        if (!string.IsNullOrWhiteSpace(configured))
        {
            return Path.GetFullPath(configured);
        }

        // systemd: StateDirectory=saito sets STATE_DIRECTORY=/var/lib/saito (several, colon-separated, when the unit names several).
        if (environment("STATE_DIRECTORY") is { Length: > 0 } state)
        {
            return Path.GetFullPath(state.Split(':')[0]);
        }

        if (environment("XDG_DATA_HOME") is { Length: > 0 } xdg && Path.IsPathRooted(xdg))
        {
            return Path.Combine(xdg, "saito");
        }

        if (environment("HOME") is { Length: > 0 } home && Path.IsPathRooted(home))
        {
            return Path.Combine(home, ".local", "share", "saito");
        }

        string local = Environment.GetFolderPath(Environment.SpecialFolder.LocalApplicationData);
        return local.Length > 0 ? Path.Combine(local, "saito") : Path.Combine(AppContext.BaseDirectory, "data");
    }

    /// <summary>The Storage settings' defaults under <paramref name="dataPath"/>, as configuration keys and values.</summary>
    public static IEnumerable<KeyValuePair<string, string?>> StorageDefaults(string dataPath) =>
    [
        new($"{StorageOptions.SectionName}:{nameof(StorageOptions.HotPath)}", Path.Combine(dataPath, "hot")),
        new($"{StorageOptions.SectionName}:{nameof(StorageOptions.ArchivePath)}", Path.Combine(dataPath, "archive")),
    ];

    /// <summary>
    /// Before Saito kept its files in <see cref="Resolve"/>'s folder, its defaults were <c>data/hot</c> and <c>data/archive</c>
    /// under the folder it ran in. The hot database found there when none is at <paramref name="hotPath"/>, to say so at start.
    /// </summary>
    public static string? EarlierHotDatabase(string hotPath, string currentDirectory)
    {
        string earlier = Path.GetFullPath(Path.Combine(currentDirectory, "data", "hot", Sqlite.SqliteSchema.HotFileName));
        string now = Path.GetFullPath(Path.Combine(hotPath, Sqlite.SqliteSchema.HotFileName));
        return !string.Equals(earlier, now, StringComparison.Ordinal) && File.Exists(earlier) && !File.Exists(now) ? earlier : null;
    }
}

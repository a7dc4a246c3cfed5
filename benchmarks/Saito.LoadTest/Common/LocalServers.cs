using System.Diagnostics;
using Saito.Storage;

namespace Saito.LoadTest.Common;

/// <summary>
/// What every server the tool starts needs: Saito.Server's build output, and Saito.Server started as a process
/// (Saito.Testing's <see cref="SaitoServerProcess"/>) storing readings, its output in a log file.
/// </summary>
internal static class LocalServers
{
    private static readonly string[] s_logLevels = ["--Logging:LogLevel:Default=Information", "--Logging:LogLevel:Microsoft=Warning"];

    /// <summary>
    /// Points <paramref name="storage"/> and the server's <paramref name="storageArgs"/> at SQLite files under
    /// <paramref name="workDirectory"/> (hot and archive), emptying it first so every run starts from no database.
    /// </summary>
    public static void UseFreshSqlite(StorageOptions storage, List<string> storageArgs, string workDirectory, SqliteSynchronous synchronous)
    {
        if (Directory.Exists(workDirectory))
        {
            Directory.Delete(workDirectory, recursive: true);
        }

        storage.HotPath = Path.Combine(workDirectory, "hot");
        storage.ArchivePath = Path.Combine(workDirectory, "archive");
        storage.Sqlite.Synchronous = synchronous;
        storageArgs.Add($"--Storage:HotPath={storage.HotPath}");
        storageArgs.Add($"--Storage:ArchivePath={storage.ArchivePath}");
        storageArgs.Add($"--Storage:Sqlite:Synchronous={synchronous.ToString().ToLowerInvariant()}");
    }

    /// <summary>
    /// Starts the server (<paramref name="serverDll"/>, or the repository's Release build) with <paramref name="storageArgs"/> (<c>--Storage:...=...</c>) and <paramref name="extraArgs"/>
    /// after the tool's own, so they win; <paramref name="environment"/> adds variables (e.g. for perf). Ready once it logs
    /// "See it stored" (its database is prepared) and its MQTT port accepts connections.
    /// </summary>
    public static Task<SaitoServerProcess> StartSaitoAsync(string? serverDll, IEnumerable<string> storageArgs, IEnumerable<string> extraArgs,
        IEnumerable<KeyValuePair<string, string>> environment, string logPath, TimeSpan readyTimeout, CancellationToken token) =>
        SaitoServerProcess.StartAsync(new SaitoServerStart
        {
            ServerDll = serverDll ?? SaitoServerDll(),
            Arguments = [.. s_logLevels, .. storageArgs, .. extraArgs],
            Environment = environment,
            LogPath = logPath,
            ReadyTimeout = readyTimeout,
        }, token);

    /// <summary>
    /// Starts the server in external mode (<c>Mqtt:Mode=external</c>): a client of the broker at
    /// <paramref name="brokerHost"/>:<paramref name="brokerPort"/> with no MQTT port of its own, ready once it logs that it
    /// has subscribed there (so nothing published after this returns is missed).
    /// </summary>
    public static Task<SaitoServerProcess> StartExternalSaitoAsync(string? serverDll, string brokerHost, int brokerPort, IEnumerable<string> storageArgs,
        IEnumerable<string> extraArgs, string logPath, TimeSpan readyTimeout, CancellationToken token) =>
        SaitoServerProcess.StartAsync(new SaitoServerStart
        {
            ServerDll = serverDll ?? SaitoServerDll(),
            Arguments =
            [
                .. s_logLevels, .. storageArgs,
                "--Mqtt:Mode=external", $"--Mqtt:External:Host={brokerHost}", $"--Mqtt:External:Port={brokerPort}", .. extraArgs,
            ],
            LogPath = logPath,
            ReadyTimeout = readyTimeout,
            ReadyLine = SaitoServerProcess.ExternalReadyLine,
            WaitForMqttPort = false,
        }, token);

    /// <summary>The repository the tool runs from: the folder above it that holds Saito.sln.</summary>
    public static string RepositoryRoot()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "Saito.sln")))
        {
            dir = dir.Parent;
        }

        return dir?.FullName ?? throw new InvalidOperationException("Run from inside the Saito repository (Saito.sln not found above the tool).");
    }

    /// <summary>src/Saito.Server/bin/Release/net10.0/Saito.Server.dll of the repository the tool runs from, built if missing.</summary>
    public static string SaitoServerDll()
    {
        string root = RepositoryRoot();
        string dll = Path.Combine(root, "src", "Saito.Server", "bin", "Release", "net10.0", "Saito.Server.dll");
        if (!File.Exists(dll))
        {
            using var build = Process.Start(new ProcessStartInfo("dotnet", ["build", "-c", "Release", Path.Combine(root, "src", "Saito.Server"), "--nologo", "-v", "q"])
                { UseShellExecute = false }) ?? throw new InvalidOperationException("Could not start dotnet build");
            build.WaitForExit();
            if (build.ExitCode != 0 || !File.Exists(dll))
            {
                throw new InvalidOperationException($"Could not build {dll}: dotnet build -c Release src/Saito.Server");
            }
        }

        return dll;
    }
}

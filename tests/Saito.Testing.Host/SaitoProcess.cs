namespace Saito.Testing;

/// <summary>Saito.Server (the build output beside the tests) as its own process, storing into a test's database.</summary>
public static class SaitoProcess
{
    /// <summary>Starts it on <paramref name="port"/> (for a restart on the same one), else on a free port.</summary>
    public static Task<SaitoServerProcess> StartAsync(TestStorage storage, int? port = null)
    {
        ArgumentNullException.ThrowIfNull(storage);
        return SaitoServerProcess.StartAsync(new SaitoServerStart
        {
            Port = port,
            Arguments = [.. storage.Settings.Select(s => "--" + s)],
            WorkingDirectory = AppContext.BaseDirectory,
        });
    }
}

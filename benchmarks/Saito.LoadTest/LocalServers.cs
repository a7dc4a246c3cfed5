using System.Diagnostics;
using System.Net;
using System.Net.Sockets;

namespace Saito.LoadTest;

/// <summary>What every server the tool starts needs: a free loopback port and Saito.Server's build output.</summary>
internal static class LocalServers
{
    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    /// <summary>src/Saito.Server/bin/Release/net10.0/Saito.Server.dll of the repository the tool runs from, built if missing.</summary>
    public static string SaitoServerDll()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "Saito.sln")))
        {
            dir = dir.Parent;
        }

        if (dir is null)
        {
            throw new InvalidOperationException("Run from inside the Saito repository (Saito.sln not found above the tool).");
        }

        string dll = Path.Combine(dir.FullName, "src", "Saito.Server", "bin", "Release", "net10.0", "Saito.Server.dll");
        if (!File.Exists(dll))
        {
            using var build = Process.Start(new ProcessStartInfo("dotnet", ["build", "-c", "Release", Path.Combine(dir.FullName, "src", "Saito.Server"), "--nologo", "-v", "q"])
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

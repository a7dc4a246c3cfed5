using System.Net;
using System.Net.Sockets;

namespace Saito.Mqtt.Tests.Infrastructure;

public static class FreePort
{
    /// <summary>A loopback TCP port that was free a moment ago (the OS picks it).</summary>
    public static int Next()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}

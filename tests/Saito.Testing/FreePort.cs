using System.Net;
using System.Net.Sockets;

namespace Saito.Testing;

public static class FreePort
{
    private static readonly HashSet<int> s_handedOut = [];

    /// <summary>
    /// A loopback TCP port that was free a moment ago (the OS picks it), never the same one twice in a test run:
    /// fixtures start in parallel, and the OS may offer a port it just gave another probe.
    /// </summary>
    public static int Next()
    {
        while (true)
        {
            using var listener = new TcpListener(IPAddress.Loopback, 0);
            listener.Start();
            int port = ((IPEndPoint)listener.LocalEndpoint).Port;
            lock (s_handedOut)
            {
                if (s_handedOut.Add(port))
                {
                    return port;
                }
            }
        }
    }

    /// <summary>Whether a start failed because a port was taken in the meantime (by another process).</summary>
    public static bool IsAddressInUse(Exception ex) =>
        ex is IOException { InnerException: SocketException { SocketErrorCode: SocketError.AddressAlreadyInUse } } ||
        ex.Message.Contains("address already in use", StringComparison.OrdinalIgnoreCase) ||
        ex.Message.Contains("Address in use", StringComparison.OrdinalIgnoreCase);
}

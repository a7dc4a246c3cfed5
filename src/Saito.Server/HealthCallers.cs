using System.Net;

namespace Saito.Server;

/// <summary>
/// Who may read /health's details (each check's description and figures, which can carry a database's error text,
/// device counts and timings): callers on this machine. Everybody else gets the overall status and the HTTP code.
/// </summary>
public static class HealthCallers
{
    /// <summary>
    /// A caller on this machine: the connection comes from a loopback address (<c>127.0.0.0/8</c>, <c>::1</c>, or
    /// <c>::ffff:127.0.0.1</c> on a dual-stack socket). An unknown address (a Unix socket, an in-memory test host)
    /// is not local.
    /// </summary>
    public static bool IsLoopback(IPAddress? remote)
    {
        if (remote is null)
        {
            return false;
        }

        if (remote.IsIPv4MappedToIPv6)
        {
            remote = remote.MapToIPv4();
        }

        return IPAddress.IsLoopback(remote);
    }

    /// <summary>
    /// The request comes from this machine and speaks for itself: from a loopback address and without the headers a
    /// reverse proxy adds (a proxy on this machine passing on a remote caller's request is not a local caller).
    /// Saito does not apply forwarded headers, so <see cref="ConnectionInfo.RemoteIpAddress"/> is the socket's peer.
    /// </summary>
    public static bool IsLocal(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return IsLoopback(context.Connection.RemoteIpAddress) && !Saito.Mqtt.Hosting.ForwardedRequests.IsForwarded(context);
    }
}

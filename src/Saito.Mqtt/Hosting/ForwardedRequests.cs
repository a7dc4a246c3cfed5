using Microsoft.AspNetCore.Http;

namespace Saito.Mqtt.Hosting;

/// <summary>
/// Requests a reverse proxy passed on for someone else: they carry a forwarding header, so their connection's address
/// (often loopback) says nothing about who sent them. The MQTT WebSocket's anonymous default and /health's, /metrics'
/// and the API description's "on this machine" all ask this.
/// </summary>
public static class ForwardedRequests
{
    private static readonly string[] s_headers = ["X-Forwarded-For", "Forwarded", "X-Real-IP"];

    public static bool IsForwarded(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return s_headers.Any(context.Request.Headers.ContainsKey);
    }
}

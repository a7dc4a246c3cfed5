using Saito.Mqtt.Broker;

namespace Saito.Server.Api;

/// <summary>
/// Refuses a state-changing request (anything but GET, HEAD, OPTIONS) that a browser sent from another origin. The
/// sign-in cookie is <c>SameSite=Strict</c>, but a "site" is the registrable domain: a page on a sibling subdomain or
/// another port of the same host still sends it. The pages' forms carry antiforgery tokens; the API's requests with no
/// body (disable, enable, reset-password, retire) did not, so such a page could make an admin's browser disable an
/// account. The same holds for opening the live dashboard's WebSocket (<c>/live/hub</c>), which CORS does not cover:
/// another origin's page could have read the vitals through it. The browser says where a request comes from: <c>Sec-Fetch-Site</c> (every current browser) must be
/// <c>same-origin</c> or <c>none</c> (typed by the user); without it, an <c>Origin</c> header must name this host.
/// Requests with neither (curl, scripts with a bearer token) carry no ambient credentials a page could borrow, and pass.
/// </summary>
internal static partial class CrossOriginGuard
{
    public static async Task InvokeAsync(HttpContext context, RequestDelegate next)
    {
        var request = context.Request;
        // CONNECT opens a WebSocket over HTTP/2 (RFC 8441); MQTT over WebSocket authenticates in MQTT, not with the cookie.
        bool socket = HttpMethods.IsConnect(request.Method)
            || (HttpMethods.IsGet(request.Method) && request.Headers.Upgrade.ToString().Contains("websocket", StringComparison.OrdinalIgnoreCase));
        bool changes = !socket && !HttpMethods.IsGet(request.Method) && !HttpMethods.IsHead(request.Method) && !HttpMethods.IsOptions(request.Method);
        // A WebSocket is not bound by CORS: another origin's page could read the live dashboard's vitals through one.
        bool liveSocket = socket && request.Path.StartsWithSegments(Dashboard.DashboardHosting.HubPath);
        if ((changes || liveSocket) && Refusal(request) is { } reason)
        {
            var logger = context.RequestServices.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(CrossOriginGuard));
            LogRefused(logger, LogText.Safe(request.Method), LogText.Safe(request.Path.Value ?? ""), LogText.Safe(reason));
            await Problems.Of(StatusCodes.Status403Forbidden, "Cross-origin request refused",
                $"A page from another origin may not change anything here ({reason}). Use Saito's own pages, or call the API with a bearer token.")
                .ExecuteAsync(context);
            return;
        }

        await next(context);
    }

    /// <summary>Why the request is refused, or null.</summary>
    internal static string? Refusal(HttpRequest request)
    {
        string site = request.Headers["Sec-Fetch-Site"].ToString();
        if (site.Length > 0)
        {
            return site is "same-origin" or "none" ? null : $"Sec-Fetch-Site: {site}";
        }

        string origin = request.Headers.Origin.ToString();
        if (origin.Length == 0)
        {
            return null;
        }

        return Uri.TryCreate(origin, UriKind.Absolute, out var uri)
            && string.Equals(uri.Scheme, request.Scheme, StringComparison.OrdinalIgnoreCase)
            && string.Equals(uri.Authority, request.Host.Value, StringComparison.OrdinalIgnoreCase)
            ? null
            : $"Origin: {origin}";
    }

    [LoggerMessage(5110, LogLevel.Warning, "Refused a cross-origin {Method} {Path} ({Reason})")]
    private static partial void LogRefused(ILogger logger, string method, string path, string reason);
}

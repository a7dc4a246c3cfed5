using System.Collections.Concurrent;
using Microsoft.Extensions.Options;
using Saito.Mqtt.Broker;
using Saito.Mqtt.Hosting;

namespace Saito.Server.Security;

/// <summary>
/// While every HTTP address is on loopback (the defaults), Saito answers only requests whose <c>Host</c> is a loopback name:
/// <c>localhost</c>, an address in 127.0.0.0/8, <c>[::1]</c>, or one of <see cref="SecurityOptions.AllowedHosts"/>. Any
/// other gets 400, WebSocket upgrades included. A page on <c>evil.example</c> whose DNS answer turns to 127.0.0.1 (DNS
/// rebinding) is same-origin with itself, so the browser lets it read the answers: without this it read /health's details,
/// /metrics and the API's description as "a caller on this machine", and over the MQTT WebSocket (whose Origin check
/// compares Origin with the request's own Host) subscribed to every reading.
/// </summary>
/// <remarks>
/// ASP.NET Core's own host filtering (the <c>AllowedHosts</c> setting) takes exact names and <c>*.</c> wildcards, not
/// 127.0.0.0/8, and a list an admin sets there would replace the loopback names rather than add to them; it stays in the
/// pipeline for the admin (default <c>*</c>) and is the tool once Saito listens on the network, where the names it is
/// reached by are the admin's to say (docs/security.md).
/// </remarks>
internal static partial class LoopbackHostNames
{
    private const int MaxNamesLogged = 64;

    /// <summary>Adds the filter at the front of the pipeline when every configured HTTP address is on loopback.</summary>
    public static WebApplication UseLoopbackHostNames(this WebApplication app)
    {
        ArgumentNullException.ThrowIfNull(app);
        if (!ListenerAddresses.HttpUrls(app.Configuration).All(ListenerAddresses.IsLoopbackUrl))
        {
            return app;
        }

        var allowed = new HashSet<string>(
            app.Services.GetRequiredService<IOptions<SecurityOptions>>().Value.AllowedHosts ?? [], StringComparer.OrdinalIgnoreCase);
        var logger = app.Services.GetRequiredService<ILoggerFactory>().CreateLogger(typeof(LoopbackHostNames));
        var logged = new ConcurrentDictionary<string, bool>(StringComparer.OrdinalIgnoreCase);
        app.Use(async (context, next) =>
        {
            var host = context.Request.Host;
            // A request a reverse proxy on this machine passes on (docs/metrics.md's nginx keeps the public Host) is let
            // through: it is not local for /health, /metrics, /openapi or anonymous MQTT (HealthCallers.IsLocal and the
            // WebSocket's forwarded check), so a rebinding page that adds such a header itself gains nothing by it.
            if (IsAllowed(host, allowed) || ForwardedRequests.IsForwarded(context))
            {
                await next(context);
                return;
            }

            // Once per name (and a bounded number of names), so a page retrying cannot fill the log.
            if (logged.Count < MaxNamesLogged && logged.TryAdd(host.Host, true))
            {
                LogRefused(logger, LogText.Safe(host.Value));
            }

            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            context.Response.ContentType = "text/plain; charset=utf-8";
            await context.Response.WriteAsync("Saito listens on loopback and answers to localhost, 127.0.0.1 and [::1] only " +
                "(or a name in Security:AllowedHosts).\n", context.RequestAborted);
        });
        return app;
    }

    /// <summary>
    /// A loopback name, or a configured one (port ignored). A request without a Host (HTTP/1.0) is allowed, as ASP.NET
    /// Core's filter allows it: a browser always sends one.
    /// </summary>
    internal static bool IsAllowed(HostString host, IReadOnlySet<string> allowed) =>
        !host.HasValue || ListenerAddresses.IsLoopbackHost(host.Host) || allowed.Contains(host.Host);

    [LoggerMessage(5120, LogLevel.Warning, "Refused requests for host '{Host}': Saito listens on loopback and answers to loopback names only; add the name to Security:AllowedHosts if it is yours")]
    private static partial void LogRefused(ILogger logger, string host);
}

using System.Security.Claims;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Options;
using Saito.Registry.Model;

namespace Saito.Server.Metrics;

/// <summary>
/// Who may read <c>/metrics</c>. Metrics carry no student's data (no owner, no serial: attributes are kinds, reasons
/// and causes), but nothing of Saito is readable anonymously off this machine. Allowed: signed-in staff in
/// <see cref="Roles"/> (bearer token or cookie); a request whose <c>Authorization: Bearer</c> is
/// <c>Metrics:ScrapeToken</c> (compared in constant time); an anonymous request from this machine
/// (<see cref="HealthCallers.IsLocal"/>: loopback, no forwarding headers) unless <c>Metrics:AllowLoopback</c> is false.
/// A request that brings credentials is judged by them, even on loopback: a wrong token is 401, a teacher 403.
/// </summary>
public static class MetricsAccess
{
    public const string Policy = "metrics.scrape";

    public static IReadOnlyList<string> Roles { get; } = [StaffRoles.Admin, StaffRoles.Ops];

    public static bool Allows(HttpContext http, ClaimsPrincipal user, MetricsOptions options)
    {
        ArgumentNullException.ThrowIfNull(http);
        ArgumentNullException.ThrowIfNull(user);
        ArgumentNullException.ThrowIfNull(options);
        if (user.Identity?.IsAuthenticated == true)
        {
            return Roles.Any(user.IsInRole);
        }

        string? authorization = http.Request.Headers.Authorization;
        if (!string.IsNullOrEmpty(authorization))
        {
            return IsScrapeToken(authorization, options.ScrapeToken);
        }

        return options.AllowLoopback && HealthCallers.IsLocal(http);
    }

    /// <summary>
    /// <paramref name="authorization"/> is <c>Bearer &lt;token&gt;</c> with the configured token. Both sides are hashed
    /// first so that the comparison takes the same time whatever the length or content of what was sent.
    /// </summary>
    public static bool IsScrapeToken(string authorization, string? expected)
    {
        ArgumentNullException.ThrowIfNull(authorization);
        const string Scheme = "Bearer ";
        if (string.IsNullOrEmpty(expected) || !authorization.StartsWith(Scheme, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        Span<byte> sent = stackalloc byte[SHA256.HashSizeInBytes];
        Span<byte> wanted = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(Encoding.UTF8.GetBytes(authorization[Scheme.Length..].Trim()), sent);
        SHA256.HashData(Encoding.UTF8.GetBytes(expected), wanted);
        return CryptographicOperations.FixedTimeEquals(sent, wanted);
    }

    internal static void AddPolicy(IServiceCollection services) =>
        services.AddAuthorizationBuilder().AddPolicy(Policy, p => p.RequireAssertion(context =>
            context.Resource is HttpContext http
            && Allows(http, context.User, http.RequestServices.GetRequiredService<IOptions<MetricsOptions>>().Value)));
}

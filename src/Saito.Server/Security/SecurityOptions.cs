using System.ComponentModel.DataAnnotations;

namespace Saito.Server.Security;

/// <summary>Who may connect and what they may do: the <c>Security</c> configuration section (docs/security.md).</summary>
public sealed class SecurityOptions
{
    public const string SectionName = "Security";

    /// <summary>
    /// The credentials file: hubs and other clients, their roles and their secrets' hashes (never the secrets). Relative
    /// paths are taken from the working directory, as <c>Storage:HotPath</c> is; default <c>credentials.json</c> in <c>Storage:DataPath</c>. Managed with <c>saito hubs ...</c> and
    /// <c>saito clients ...</c>; the server rereads it when it changes.
    /// </summary>
    [Required]
    public string CredentialsFile { get; set; } = "data/credentials.json";

    /// <summary>The roles that may subscribe to reading topics unless <see cref="SubscribeRoles"/> names others.</summary>
    public static readonly IReadOnlyList<string> DefaultSubscribeRoles = ["dashboard", "integration"];

    /// <summary>
    /// Roles whose clients may subscribe to reading topics (every hub's); unset, <see cref="DefaultSubscribeRoles"/>. A
    /// configured list replaces the default. (The default is not this list's first items: the configuration binder
    /// adds to a list that already holds items, so "dashboard" could then never be taken away.)
    /// </summary>
    public List<string>? SubscribeRoles { get; set; }

    /// <summary>The roles in effect: those configured, or the default.</summary>
    public IReadOnlyList<string> EffectiveSubscribeRoles => SubscribeRoles is { Count: > 0 } roles ? roles : DefaultSubscribeRoles;

    /// <summary>PBKDF2-SHA256 iterations for new secrets (existing hashes keep theirs). See docs/security.md for why this is enough for generated secrets.</summary>
    [Range(10_000, 10_000_000)]
    public int HashIterations { get; set; } = 20_000;

    /// <summary>
    /// Failed MQTT logins (unknown or disabled client, wrong secret) from one IP address within
    /// <see cref="FailedLoginWindowSeconds"/> after which that address's CONNECTs are refused at once, without checking a
    /// secret, until the window has passed. Secrets are checked one at a time (PBKDF2 is slow on purpose), so without it a
    /// few addresses sending wrong secrets kept every other hub waiting to log in.
    /// </summary>
    [Range(1, 1_000_000)]
    public int MaxFailedLoginsPerAddress { get; set; } = 10;

    /// <summary>
    /// Host names, besides <c>localhost</c>, 127.0.0.0/8 and <c>[::1]</c>, that Saito answers to while every HTTP address
    /// is on loopback (the defaults): a request whose <c>Host</c> names anything else gets 400, so a web page on a name that
    /// resolves to 127.0.0.1 (DNS rebinding) cannot read /health, /metrics, the API's description or readings over the MQTT
    /// WebSocket. Names only (no port, no wildcard), e.g. a name in /etc/hosts a local proxy uses. Not used once an HTTP
    /// address is on the network: then ASP.NET Core's own <c>AllowedHosts</c> setting (default <c>*</c>) is the admin's.
    /// </summary>
    public List<string>? AllowedHosts { get; set; }

    /// <summary>The window of <see cref="MaxFailedLoginsPerAddress"/>, in seconds, counted from an address's first failure in it.</summary>
    [Range(1, 86_400)]
    public int FailedLoginWindowSeconds { get; set; } = 60;
}

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
}

using System.ComponentModel.DataAnnotations;
using Microsoft.Extensions.Options;
using Saito.Server.Security;

namespace Saito.Server.Api;

/// <summary>A hub as the API shows it (never its secret).</summary>
/// <param name="Name">The hub's MQTT user name.</param>
/// <param name="Disabled">Whether its CONNECT is refused.</param>
/// <param name="Created">When it was added.</param>
/// <param name="Rotated">When its secret last changed, if ever.</param>
/// <param name="Site">The hub's site, or null: devices bound to a hub of a site send only through hubs of that site (docs/security.md).</param>
public sealed record HubView(string Name, bool Disabled, DateTimeOffset Created, DateTimeOffset? Rotated, string? Site)
{
    public static HubView Of(Credential c) => new(c.Name, c.Disabled, c.Created, c.Rotated, c.Site);
}

public sealed record NewHubRequest(
    [property: Required, RegularExpression(CredentialStore.NamePatternText, ErrorMessage = "a hub name is 1 to 64 letters, digits, '.', '_' or '-'")] string Name,
    [property: RegularExpression(CredentialStore.NamePatternText, ErrorMessage = "a site is 1 to 64 letters, digits, '.', '_' or '-'")] string? Site = null);

/// <summary>A hub's new site.</summary>
/// <param name="Site">The new site, or null for none (the devices bound to the hub then roam to every hub).</param>
public sealed record HubSiteRequest(
    [property: RegularExpression(CredentialStore.NamePatternText, ErrorMessage = "a site is 1 to 64 letters, digits, '.', '_' or '-'")] string? Site);

public sealed record HubSecret(HubView Hub, string Secret);

/// <summary>
/// MQTT hubs and their credentials, the same file the <c>saito hubs</c> command edits (<c>Security:CredentialsFile</c>).
/// A secret is in the answer once; only its hash is kept.
/// </summary>
internal static class HubEndpoints
{
    /// <summary>One change to the file at a time from this process (the file itself is replaced atomically).</summary>
    private static readonly Lock s_file = new();

    public static void MapHubEndpoints(this RouteGroupBuilder api)
    {
        var hubs = api.MapGroup("/hubs").WithTags("Hubs").RequireAuthorization(ApiPolicies.ManageHubs);
        hubs.MapGet("/", (IOptions<SecurityOptions> o) => TypedResults.Ok(Store(o).Load().Where(c => c.IsHub).OrderBy(c => c.Name, StringComparer.Ordinal).Select(HubView.Of).ToList()))
            .WithSummary("The hubs that may publish");
        hubs.MapPost("/", Add).WithSummary("Add a hub; its secret is in the answer, once");
        hubs.MapPost("/{name}/rotate", Rotate).WithSummary("A new secret (the old one stops working at the hub's next CONNECT)");
        hubs.MapPost("/{name}/disable", (string name, IOptions<SecurityOptions> o) => Change(o, name, c => c.Disabled = true)).WithSummary("Refuse the hub from its next CONNECT on");
        hubs.MapPost("/{name}/enable", (string name, IOptions<SecurityOptions> o) => Change(o, name, c => c.Disabled = false)).WithSummary("Accept the hub again");
        hubs.MapPut("/{name}/site", (string name, HubSiteRequest request, IOptions<SecurityOptions> o) => Change(o, name, c => c.Site = request.Site))
            .WithSummary("Set the hub's site, or none (null)");
        hubs.MapDelete("/{name}", Remove).WithSummary("Remove the hub (a hub of a site only with ?force=true)");
    }

    private static CredentialStore Store(IOptions<SecurityOptions> options) => new(options.Value.CredentialsFile);

    private static IResult Add(NewHubRequest request, IOptions<SecurityOptions> options, TimeProvider time)
    {
        string secret = SecretHash.NewSecret();
        var store = Store(options);
        lock (s_file)
        {
            return store.Update(clients =>
            {
                if (clients.Any(c => c.Name == request.Name))
                {
                    return Problems.Conflict($"{request.Name} exists already; rotate it for a new secret.");
                }

                var hub = new Credential
                {
                    Name = request.Name,
                    Roles = [CredentialStore.HubRole],
                    SecretHash = SecretHash.Hash(secret, options.Value.HashIterations),
                    Created = time.GetUtcNow(),
                    Site = request.Site,
                };
                clients.Add(hub);
                return TypedResults.Created($"/api/hubs/{hub.Name}", new HubSecret(HubView.Of(hub), secret));
            });
        }
    }

    private static IResult Rotate(string name, IOptions<SecurityOptions> options, TimeProvider time)
    {
        string secret = SecretHash.NewSecret();
        HubView? view = null;
        var result = Change(options, name, c =>
        {
            c.SecretHash = SecretHash.Hash(secret, options.Value.HashIterations);
            c.Rotated = time.GetUtcNow();
            view = HubView.Of(c);
        });
        return view is null ? result : TypedResults.Ok(new HubSecret(view, secret));
    }

    private static IResult Remove(string name, IOptions<SecurityOptions> options, bool force = false)
    {
        lock (s_file)
        {
            return Store(options).Update(clients =>
            {
                if (!force && CredentialStore.RefuseRemoval(clients, name, $"POST /api/hubs/{name}/disable", "remove it with ?force=true") is { } refusal)
                {
                    return Problems.Conflict(refusal);
                }

                return clients.RemoveAll(c => c.Name == name && c.IsHub) == 0 ? Problems.NotFound("hub", name) : TypedResults.NoContent();
            });
        }
    }

    private static IResult Change(IOptions<SecurityOptions> options, string name, Action<Credential> change)
    {
        lock (s_file)
        {
            return Store(options).Update(clients =>
            {
                if (clients.FirstOrDefault(c => c.Name == name && c.IsHub) is not { } hub)
                {
                    return Problems.NotFound("hub", name);
                }

                change(hub);
                return TypedResults.Ok(HubView.Of(hub));
            });
        }
    }
}

using System.Text;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Authorization;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Saito.Registry.Model;
using Saito.Server.Api;

namespace Saito.Server.Tests.Api;

/// <summary>
/// docs/api.md's table of who may call what is the truth: every /api endpoint is in it with exactly the roles its
/// policy admits, and calling each endpoint as every role and anonymously gives 401/403 exactly where the table says.
/// </summary>
public sealed partial class ApiAccessTests : IAsyncLifetime
{
    private SaitoHost _server = null!;

    public async ValueTask InitializeAsync() => _server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);

    public async ValueTask DisposeAsync() => await _server.DisposeAsync();

    [Fact]
    public void The_table_in_docs_api_md_lists_every_endpoint_with_the_roles_its_policy_admits()
    {
        var documented = DocumentedEndpoints();
        var actual = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var endpoint in _server.Services.GetRequiredService<EndpointDataSource>().Endpoints.OfType<RouteEndpoint>())
        {
            string? route = endpoint.RoutePattern.RawText;
            if (route is null || !route.StartsWith("/api/", StringComparison.Ordinal))
            {
                continue;
            }

            route = RouteConstraint().Replace(route.TrimEnd('/'), "{$1}");
            foreach (string method in endpoint.Metadata.GetMetadata<HttpMethodMetadata>()?.HttpMethods ?? [])
            {
                actual[$"{method} {route}"] = Who(endpoint);
            }
        }

        actual.Keys.Order().ShouldBe(documented.Keys.Order(), "endpoints in the code vs rows of docs/api.md");
        foreach (var (endpoint, who) in actual)
        {
            who.ShouldBe(documented[endpoint], endpoint);
        }
    }

    [Fact]
    public async Task Every_endpoint_refuses_anonymous_callers_and_every_role_the_table_leaves_out()
    {
        var failures = new List<string>();
        // Logging out revokes every token of the account (issue 32), so it is tried after the other endpoints.
        foreach (var (endpoint, who) in DocumentedEndpoints().OrderBy(e => e.Key.EndsWith("/api/auth/logout", StringComparison.Ordinal)))
        {
            string[] parts = endpoint.Split(' ');
            string path = RouteConstraint().Replace(parts[1].Replace("{name}", "no-such-hub", StringComparison.Ordinal), "999999");
            foreach (string? caller in StaffRoles.All.Prepend(null))
            {
                using var client = caller is null ? _server.Anonymous() : await _server.AsAsync(caller);
                using var request = new HttpRequestMessage(new HttpMethod(parts[0]), path);
                if (parts[0] is "POST" or "PUT")
                {
                    request.Content = new StringContent("{}", Encoding.UTF8, "application/json");
                }

                using var response = await client.SendAsync(request, TestContext.Current.CancellationToken);
                bool allowed = who == "anyone" || (caller is not null && (who == "signed in" || who.Split(", ").Contains(caller)));
                var expected = allowed ? (HttpStatusCode?)null : caller is null ? HttpStatusCode.Unauthorized : HttpStatusCode.Forbidden;
                bool refused = response.StatusCode is HttpStatusCode.Unauthorized or HttpStatusCode.Forbidden;
                if (expected is { } code ? response.StatusCode != code : refused)
                {
                    failures.Add($"{endpoint} as {caller ?? "anonymous"}: {(int)response.StatusCode}, expected {(expected is { } e ? ((int)e).ToString(System.Globalization.CultureInfo.InvariantCulture) : "neither 401 nor 403")}");
                }
            }
        }

        failures.ShouldBeEmpty();
    }

    private static string Who(RouteEndpoint endpoint)
    {
        if (endpoint.Metadata.GetMetadata<IAllowAnonymous>() is not null)
        {
            return "anyone";
        }

        var policies = endpoint.Metadata.GetOrderedMetadata<IAuthorizeData>().Select(a => a.Policy).Where(p => p is not null).Distinct().ToList();
        return policies.Count switch
        {
            0 when endpoint.Metadata.GetOrderedMetadata<IAuthorizeData>().Count > 0 => "signed in",
            1 => string.Join(", ", ApiPolicies.Roles[policies[0]!]),
            _ => "NOT PROTECTED: " + string.Join(", ", policies),
        };
    }

    private static Dictionary<string, string> DocumentedEndpoints()
    {
        string docs = File.ReadAllText(Path.Combine(RepositoryRoot.Path, "docs", "api.md"));
        var rows = TableRow().Matches(docs).ToDictionary(m => $"{m.Groups[1].Value} {m.Groups[2].Value}", m => m.Groups[3].Value.Trim(), StringComparer.Ordinal);
        rows.Count.ShouldBeGreaterThan(20, "docs/api.md's table was not found");
        return rows;
    }

    [GeneratedRegex(@"^\| `(GET|POST|PUT|DELETE|PATCH) (/api/[^`]*)` \| ([^|]+) \|$", RegexOptions.Multiline)]
    private static partial Regex TableRow();

    [GeneratedRegex(@"\{(\w+)(:[^}]*)?\}")]
    private static partial Regex RouteConstraint();
}

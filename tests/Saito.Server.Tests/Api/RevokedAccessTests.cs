
namespace Saito.Server.Tests.Api;

/// <summary>
/// Access ends when an admin takes it away, not when the sign-in expires: a bearer token or cookie issued before its
/// account's roles were replaced, or before it was disabled, is refused on its next request (from a review: Identity
/// checks a bearer token's account only on refresh, so a demoted account kept its roles for up to an hour).
/// </summary>
public sealed class RevokedAccessTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_bearer_token_issued_before_its_roles_were_replaced_is_refused(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        (await teacher.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);
        int teacherId = await SaitoHost.UserIdAsync(teacher);

        using (var demoted = await admin.PutAsJsonAsync($"/api/users/{teacherId}/roles", new { roles = new[] { "ops" } }, Ct))
        {
            demoted.StatusCode.ShouldBe(HttpStatusCode.OK, await demoted.Content.ReadAsStringAsync(Ct));
        }

        // The old token names the teacher role (which may read owners, where ops may not); it is no longer taken at all.
        // A new sign-in gets the roles as they are now.
        (await teacher.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
        (await teacher.GetAsync("/api/auth/me", Ct)).StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
        using var again = await SignInAsync(server, "teacher");
        var me = await again.GetFromJsonAsync<JsonElement>("/api/auth/me", Ct);
        me.GetProperty("roles").EnumerateArray().Select(r => r.GetString()).ShouldBe(["ops"]);

        // Others' tokens are untouched.
        (await admin.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_disabled_account_s_bearer_token_and_cookie_are_refused_at_once(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        using var aide = await server.AsAsync("aide");
        int aideId = await SaitoHost.UserIdAsync(aide);
        using var cookie = await CookieClientAsync(server, "aide");
        (await aide.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);
        (await cookie.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);

        using (var disabled = await admin.PostAsync($"/api/users/{aideId}/disable", null, Ct))
        {
            disabled.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        (await aide.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
        (await cookie.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.Unauthorized);

        // The list says so as read back from the database (its "disabled until" lost a tenth of a microsecond there, and
        // the list said "enabled, locked until 9999-12-31").
        var listed = (await admin.GetFromJsonAsync<JsonElement>("/api/users?limit=500", Ct)).GetProperty("items").EnumerateArray()
            .Single(u => u.GetProperty("id").GetInt32() == aideId);
        listed.GetProperty("disabled").GetBoolean().ShouldBeTrue();
        listed.GetProperty("lockedUntil").ValueKind.ShouldBe(JsonValueKind.Null);
        // A staff page sends the browser to sign in.
        using var page = await cookie.GetAsync("/", Ct);
        page.StatusCode.ShouldBe(HttpStatusCode.Redirect);
        page.Headers.Location!.ToString().ShouldContain("/login");
    }

    private static async Task<HttpClient> SignInAsync(SaitoHost server, string userName)
    {
        using var anonymous = server.Anonymous();
        using var response = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName, password = SaitoHost.Password }, Ct);
        response.EnsureSuccessStatusCode();
        var client = server.Anonymous();
        client.DefaultRequestHeaders.Authorization = new("Bearer", (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("accessToken").GetString());
        return client;
    }

    /// <summary>A client holding the browser's sign-in cookie (no redirects followed).</summary>
    private static async Task<HttpClient> CookieClientAsync(SaitoHost server, string userName)
    {
        string cookie = await server.CookieAsync(userName);
        var client = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false, UseCookies = false }) { BaseAddress = server.BaseAddress };
        client.DefaultRequestHeaders.Add("Cookie", cookie);
        return client;
    }
}

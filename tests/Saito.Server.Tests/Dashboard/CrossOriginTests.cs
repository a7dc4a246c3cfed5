
namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// The sign-in cookie is SameSite=Strict, but a page on another port (or a sibling subdomain) is the same site, so a
/// real browser sends the cookie with its requests. Such a page must not be able to change anything through a signed-in
/// admin's browser (from a review: a bodyless POST like /api/users/{id}/disable needed no token).
/// </summary>
public sealed class CrossOriginTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    private const string PostWithCookie =
        "async url => { try { const r = await fetch(url, { method: 'POST', credentials: 'include', mode: 'no-cors' }); return 'answered ' + r.status + (r.status ? ' ' + (await r.text()).slice(0, 300) : ''); } catch (e) { return 'error: ' + e; } }";

    private const string OpenSocket =
        "url => new Promise(done => { const s = new WebSocket(url); s.onopen = () => { s.close(); done('opened'); }; s.onerror = () => done('refused'); })";

    [Fact]
    public async Task A_page_on_another_port_of_the_same_host_cannot_disable_an_account_through_an_admin_s_browser()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        await server.AddUserAsync("teacher-2", "teacher");
        using var admin = await server.AsAsync("admin");
        using var aide = await server.AsAsync("aide");
        using var teacher2 = await server.AsAsync("teacher-2");
        int aideId = await SaitoHost.UserIdAsync(aide);
        int teacher2Id = await SaitoHost.UserIdAsync(teacher2);

        await using var browser = await Browser.LaunchAsync();
        var page = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(page, "admin", SaitoHost.Password);

        // Another origin of the same site: a page served from 127.0.0.1 on another port.
        using var attacker = new HttpListener();
        var attackerAddress = new Uri($"http://127.0.0.1:{FreePort.Next()}/");
        attacker.Prefixes.Add(attackerAddress.ToString());
        attacker.Start();
        var serving = ServeOnePageAsync(attacker);
        await page.GotoAsync(attackerAddress.ToString());
        await serving;
        (await page.EvaluateAsync<string>(PostWithCookie, new Uri(server.BaseAddress, $"/api/users/{aideId}/disable").ToString())).ShouldBe("answered 0"); // opaque: another origin

        // Nor can it open the live dashboard's WebSocket (which CORS does not guard) with the admin's cookie.
        (await page.EvaluateAsync<string>(OpenSocket, $"ws://127.0.0.1:{server.HttpPort}/live/hub")).ShouldBe("refused");

        // The request reached Saito (the fetch was answered) and changed nothing: the aide is enabled and signed in.
        (await DisabledAsync(admin, aideId)).ShouldBeFalse();
        (await aide.GetAsync("/api/owners", Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);

        // The control: the same request from Saito's own page, in the same browser, does what it says.
        await page.GotoAsync("/");
        (await page.EvaluateAsync<string>(PostWithCookie, new Uri(server.BaseAddress, $"/api/users/{teacher2Id}/disable").ToString())).ShouldStartWith("answered 200");
        (await DisabledAsync(admin, teacher2Id)).ShouldBeTrue();
        (await page.EvaluateAsync<string>(OpenSocket, $"ws://127.0.0.1:{server.HttpPort}/live/hub")).ShouldBe("opened");
    }

    [Fact]
    public async Task Headers_of_another_origin_are_refused_with_a_reason_and_scripts_without_them_pass()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var aide = await server.AsAsync("aide");
        int aideId = await SaitoHost.UserIdAsync(aide);
        string cookie = await server.CookieAsync("admin");
        using var browserLike = new HttpClient { BaseAddress = server.BaseAddress };

        foreach (var (header, value) in new[] { ("Sec-Fetch-Site", "same-site"), ("Sec-Fetch-Site", "cross-site"), ("Origin", "http://127.0.0.1:1"), ("Origin", "null") })
        {
            using var request = new HttpRequestMessage(HttpMethod.Post, $"/api/users/{aideId}/disable");
            request.Headers.Add("Cookie", cookie);
            request.Headers.Add(header, value);
            using var refused = await browserLike.SendAsync(request, Ct);
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden, $"{header}: {value}");
            (await refused.Content.ReadAsStringAsync(Ct)).ShouldContain("Cross-origin request refused");
        }

        using var admin = await server.AsAsync("admin");
        (await DisabledAsync(admin, aideId)).ShouldBeFalse();

        // Same origin, and a script with a bearer token and no browser headers, pass.
        using (var sameOrigin = new HttpRequestMessage(HttpMethod.Post, $"/api/users/{aideId}/disable"))
        {
            sameOrigin.Headers.Add("Cookie", cookie);
            sameOrigin.Headers.Add("Sec-Fetch-Site", "same-origin");
            sameOrigin.Headers.Add("Origin", server.BaseAddress.GetLeftPart(UriPartial.Authority));
            (await browserLike.SendAsync(sameOrigin, Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        (await admin.PostAsync($"/api/users/{aideId}/enable", null, Ct)).StatusCode.ShouldBe(HttpStatusCode.OK);
        (await DisabledAsync(admin, aideId)).ShouldBeFalse();
    }

    private static async Task ServeOnePageAsync(HttpListener listener)
    {
        var context = await listener.GetContextAsync().WaitAsync(TimeSpan.FromSeconds(30), Ct);
        byte[] body = System.Text.Encoding.UTF8.GetBytes("<!doctype html><title>cat pictures</title><p>cats</p>");
        context.Response.ContentType = "text/html";
        context.Response.ContentLength64 = body.Length;
        await context.Response.OutputStream.WriteAsync(body, Ct);
        context.Response.Close();
    }

    private static async Task<bool> DisabledAsync(HttpClient admin, int userId)
    {
        var users = await admin.GetFromJsonAsync<JsonElement>("/api/users?limit=500", Ct);
        return users.GetProperty("items").EnumerateArray().Single(u => u.GetProperty("id").GetInt32() == userId).GetProperty("disabled").GetBoolean();
    }
}

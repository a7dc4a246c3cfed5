using System.Text;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Time.Testing;

namespace Saito.Server.Tests.Api;

/// <summary>Owners and contacts through the real HTTP pipeline, on SQLite and PostgreSQL.</summary>
public sealed class OwnerApiTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Two_staff_editing_the_same_student_cannot_overwrite_each_other(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        using var created = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = "Ana B", externalRef = "S-001" }, Ct);
        created.StatusCode.ShouldBe(HttpStatusCode.Created);
        created.Headers.ETag!.Tag.ShouldBe("\"1\"");
        string location = created.Headers.Location!.ToString();

        // Both read version 1; the first save wins, the second is refused and changes nothing.
        using var first = await PutAsync(admin, location, "\"1\"", new { kind = "student", displayName = "Ana Bell", externalRef = "S-001" });
        using var second = await PutAsync(admin, location, "\"1\"", new { kind = "student", displayName = "Anna B", externalRef = "S-001" });
        using var withoutIfMatch = await PutAsync(admin, location, null, new { kind = "student", displayName = "Anna B", externalRef = "S-001" });

        first.StatusCode.ShouldBe(HttpStatusCode.OK);
        first.Headers.ETag!.Tag.ShouldBe("\"2\"");
        second.StatusCode.ShouldBe(HttpStatusCode.PreconditionFailed);
        second.Content.Headers.ContentType!.MediaType.ShouldBe("application/problem+json");
        (await second.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("detail").GetString()!.ShouldContain("\"2\"");
        withoutIfMatch.StatusCode.ShouldBe((HttpStatusCode)428);
        var now = await admin.GetFromJsonAsync<JsonElement>(location, Ct);
        now.GetProperty("displayName").GetString().ShouldBe("Ana Bell");
        now.GetProperty("version").GetInt32().ShouldBe(2);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Concurrent_saves_with_the_same_etag_let_exactly_one_through(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        using var created = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = "Ben C" }, Ct);
        string location = created.Headers.Location!.ToString();

        var saves = Enumerable.Range(0, 8).Select(i => PutAsync(admin, location, "\"1\"", new { kind = "student", displayName = $"Ben C {i}" })).ToList();
        var answers = await Task.WhenAll(saves);

        answers.Count(a => a.StatusCode == HttpStatusCode.OK).ShouldBe(1, string.Join(", ", answers.Select(a => (int)a.StatusCode)));
        answers.Count(a => a.StatusCode == HttpStatusCode.PreconditionFailed).ShouldBe(7);
        (await admin.GetFromJsonAsync<JsonElement>(location, Ct)).GetProperty("version").GetInt32().ShouldBe(2);
        foreach (var answer in answers)
        {
            answer.Dispose();
        }
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Bad_requests_get_problem_details_and_write_nothing(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        using var owner = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = "Cleo D", externalRef = "S-003" }, Ct);
        int id = (await owner.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();

        (string Path, string Body, string Says)[] bad =
        [
            ("/api/owners", """{"kind":"pupil","displayName":"X"}""", "kind"),
            ("/api/owners", """{"kind":"student","displayName":""}""", "DisplayName"),
            ("/api/owners", """{"kind":"student","displayName":"Dup","externalRef":"S-003"}""", "S-003"),
            ("/api/owners", """{"kind":"student",""", "could not be read"),
            ("/api/owners", """{"kind":"student","displayName":"a very long name","externalRef":"SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSS"}""", "ExternalRef"),
            ($"/api/owners/{id}/contacts", """{"name":"Mum","email":"not-an-address","relationship":"parent"}""", "Email"),
            ($"/api/owners/{id}/contacts", """{"name":"Mum","email":"mum@example.org","relationship":"parent","language":"de"}""", "language"),
            ("/api/check-ins", $$"""{"ownerId":{{id}},"at":"2026-11-26T09:00:00"}""", "offset"),
        ];
        foreach (var (path, body, says) in bad)
        {
            using var response = await admin.PostAsync(path, new StringContent(body, Encoding.UTF8, "application/json"), Ct);
            string text = await response.Content.ReadAsStringAsync(Ct);
            ((int)response.StatusCode).ShouldBeOneOf([400, 409], $"{path} {body}: {text}");
            response.Content.Headers.ContentType!.MediaType.ShouldBe("application/problem+json", $"{path} {body}");
            text.ShouldContain(says, Case.Insensitive, $"{path} {body}");
        }

        await using var db = server.OpenRegistry();
        (await db.Owners.CountAsync(Ct)).ShouldBe(1);
        (await db.Contacts.CountAsync(Ct)).ShouldBe(0);
        (await db.CheckIns.CountAsync(Ct)).ShouldBe(0);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Lists_page_and_times_carry_an_explicit_offset(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        for (int i = 1; i <= 7; i++)
        {
            using var _ = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = $"Student {i:00}" }, Ct);
        }

        var first = await admin.GetFromJsonAsync<JsonElement>("/api/owners?limit=3", Ct);
        var last = await admin.GetFromJsonAsync<JsonElement>("/api/owners?offset=6&limit=3", Ct);
        using var tooMany = await admin.GetAsync("/api/owners?limit=501", Ct);

        first.GetProperty("total").GetInt32().ShouldBe(7);
        first.GetProperty("items").EnumerateArray().Select(o => o.GetProperty("displayName").GetString()).ShouldBe(["Student 01", "Student 02", "Student 03"]);
        last.GetProperty("items").EnumerateArray().Select(o => o.GetProperty("displayName").GetString()).ShouldBe(["Student 07"]);
        first.GetProperty("items")[0].GetProperty("createdAt").GetString()!.ShouldEndWith("+00:00");
        tooMany.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
    }

    [Fact]
    public async Task After_too_many_wrong_passwords_the_account_is_locked_even_for_the_right_one()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Auth:MaxFailedSignIns=3"]);
        using var anonymous = server.Anonymous();
        var codes = new List<HttpStatusCode>();
        for (int i = 0; i < 3; i++)
        {
            using var wrong = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = "guess-" + i }, Ct);
            codes.Add(wrong.StatusCode);
        }

        using var right = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = SaitoHost.Password }, Ct);
        using var other = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "aide", password = SaitoHost.Password }, Ct);

        codes.ShouldBe([HttpStatusCode.Unauthorized, HttpStatusCode.Unauthorized, HttpStatusCode.Unauthorized]);
        right.StatusCode.ShouldBe(HttpStatusCode.Unauthorized, "locked, answered as a wrong password is");
        (await right.Content.ReadAsStringAsync(Ct)).ShouldContain("Auth:MaxFailedSignIns");
        other.StatusCode.ShouldBe(HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_lock_lasts_Auth_LockoutMinutes_and_ends_once_that_time_has_passed()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Auth:MaxFailedSignIns=2", "Auth:LockoutMinutes=7"]);
        using var anonymous = server.Anonymous();
        var before = DateTimeOffset.UtcNow;
        for (int i = 0; i < 2; i++)
        {
            using var wrong = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = "guess-" + i }, Ct);
        }

        var after = DateTimeOffset.UtcNow;
        using var admin = await server.AsAsync("admin");
        var users = await admin.GetFromJsonAsync<JsonElement>("/api/users", Ct);
        var teacher = users.GetProperty("items").EnumerateArray().Single(u => u.GetProperty("userName").GetString() == "teacher");
        teacher.GetProperty("disabled").GetBoolean().ShouldBeFalse();
        var until = teacher.GetProperty("lockedUntil").GetDateTimeOffset();
        until.ShouldBeInRange(before.AddMinutes(7).AddSeconds(-1), after.AddMinutes(7).AddSeconds(1), "locked for Auth:LockoutMinutes (Identity's own default is 5)");
        using (var locked = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = SaitoHost.Password }, Ct))
        {
            locked.StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
        }

        // Seven minutes on, as the clock would have it: the lock's end is moved into the past, and the right password works.
        await using (var db = server.OpenRegistry())
        {
            var user = await db.Users.SingleAsync(u => u.UserName == "teacher", Ct);
            user.LockoutEnd = DateTimeOffset.UtcNow.AddSeconds(-1);
            await db.SaveChangesAsync(Ct);
        }

        using var unlocked = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = SaitoHost.Password }, Ct);
        unlocked.StatusCode.ShouldBe(HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_browser_signs_in_with_a_cookie_and_a_disabled_account_is_signed_out()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        await server.AddUserAsync("carol", "teacher");
        using var handler = new HttpClientHandler { CookieContainer = new CookieContainer() };
        using var browser = new HttpClient(handler) { BaseAddress = server.BaseAddress };
        using var login = await browser.PostAsJsonAsync("/api/auth/login?useCookies=true", new { userName = "carol", password = SaitoHost.Password }, Ct);
        login.StatusCode.ShouldBe(HttpStatusCode.OK);
        handler.CookieContainer.GetCookies(server.BaseAddress)["saito.auth"].ShouldNotBeNull();
        (await browser.GetFromJsonAsync<JsonElement>("/api/auth/me", Ct)).GetProperty("roles")[0].GetString().ShouldBe("teacher");

        using var admin = await server.AsAsync("admin");
        var users = await admin.GetFromJsonAsync<JsonElement>("/api/users", Ct);
        int carol = users.GetProperty("items").EnumerateArray().Single(u => u.GetProperty("userName").GetString() == "carol").GetProperty("id").GetInt32();
        using var disabled = await admin.PostAsync($"/api/users/{carol}/disable", null, Ct);
        disabled.StatusCode.ShouldBe(HttpStatusCode.OK);
        using var again = await server.Anonymous().PostAsJsonAsync("/api/auth/login", new { userName = "carol", password = SaitoHost.Password }, Ct);

        again.StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
    }

    [Fact]
    public async Task A_new_password_shorter_than_twelve_characters_is_refused_and_twelve_are_enough()
    {
        // Identity's own minimum is 6: the 11-character refusal shows Auth:MinPasswordLength (default 12) is applied.
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var teacher = await server.AsAsync("teacher");

        using var eleven = await ChangePasswordAsync(teacher, "abcdefghijk");
        using var twelve = await ChangePasswordAsync(teacher, "abcdefghijkl");
        using var anonymous = server.Anonymous();
        using var withNew = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = "abcdefghijkl" }, Ct);
        using var withOld = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = SaitoHost.Password }, Ct);

        eleven.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        eleven.Content.Headers.ContentType!.MediaType.ShouldBe("application/problem+json");
        var errors = (await eleven.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("errors");
        errors.GetProperty("PasswordTooShort")[0].GetString()!.ShouldContain("12");
        twelve.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        withNew.StatusCode.ShouldBe(HttpStatusCode.OK);
        withOld.StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
    }

    [Fact]
    public async Task Auth_MinPasswordLength_refuses_a_password_the_default_would_accept()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Auth:MinPasswordLength=16"]);
        using var teacher = await server.AsAsync("teacher");

        using var fourteen = await ChangePasswordAsync(teacher, "abcdefghijklmn");
        using var sixteen = await ChangePasswordAsync(teacher, "abcdefghijklmnop");

        fourteen.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        (await fourteen.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("errors").GetProperty("PasswordTooShort")[0].GetString()!.ShouldContain("16");
        sixteen.StatusCode.ShouldBe(HttpStatusCode.NoContent);
    }

    [Fact]
    public async Task Auth_MinPasswordLength_longer_than_the_passwords_saito_generates_stops_the_start()
    {
        // New users and resets get a generated password: a minimum above its length would refuse Saito's own.
        Saito.Server.Security.SecretHash.NewSecret().Length.ShouldBe(Saito.Server.Security.SecretHash.SecretLength);

        var refused = await Should.ThrowAsync<Microsoft.Extensions.Options.OptionsValidationException>(
            () => SaitoHost.StartAsync(StorageProvider.Sqlite, null, [$"Auth:MinPasswordLength={Saito.Server.Security.SecretHash.SecretLength + 1}"]));
        refused.Message.ShouldContain($"Auth:MinPasswordLength must be from 8 to {Saito.Server.Security.SecretHash.SecretLength}");
    }

    [Fact]
    public async Task A_bearer_token_expires_after_an_hour_and_its_refresh_token_gives_a_new_one()
    {
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, configure: b => b.Services.AddSingleton<TimeProvider>(clock));
        using var anonymous = server.Anonymous();
        var tokens = await SignInAsync(anonymous, "teacher");
        string refreshToken = tokens.GetProperty("refreshToken").GetString()!;

        var fresh = await MeAsync(server, tokens);
        clock.Advance(TimeSpan.FromMinutes(59));
        var nearlyAnHour = await MeAsync(server, tokens);
        clock.Advance(TimeSpan.FromMinutes(2));
        var afterAnHour = await MeAsync(server, tokens);
        using var refresh = await anonymous.PostAsJsonAsync("/api/auth/refresh", new { refreshToken }, Ct);
        refresh.StatusCode.ShouldBe(HttpStatusCode.OK);
        var renewed = await refresh.Content.ReadFromJsonAsync<JsonElement>(Ct);
        var withRenewed = await MeAsync(server, renewed);

        // The refresh token has its own life, Auth:RefreshTokenDays (14).
        clock.Advance(TimeSpan.FromDays(14));
        using var lateRefresh = await anonymous.PostAsJsonAsync("/api/auth/refresh", new { refreshToken = renewed.GetProperty("refreshToken").GetString() }, Ct);

        tokens.GetProperty("expiresIn").GetInt32().ShouldBe(3600);
        fresh.ShouldBe(HttpStatusCode.OK);
        nearlyAnHour.ShouldBe(HttpStatusCode.OK);
        afterAnHour.ShouldBe(HttpStatusCode.Unauthorized);
        renewed.GetProperty("expiresIn").GetInt32().ShouldBe(3600);
        withRenewed.ShouldBe(HttpStatusCode.OK);
        lateRefresh.StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
    }

    [Fact]
    public async Task Auth_BearerTokenMinutes_shortens_a_bearer_token_s_life()
    {
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Auth:BearerTokenMinutes=5"], b => b.Services.AddSingleton<TimeProvider>(clock));
        using var anonymous = server.Anonymous();
        var tokens = await SignInAsync(anonymous, "teacher");

        clock.Advance(TimeSpan.FromMinutes(4));
        var afterFour = await MeAsync(server, tokens);
        clock.Advance(TimeSpan.FromMinutes(2));
        var afterSix = await MeAsync(server, tokens);

        tokens.GetProperty("expiresIn").GetInt32().ShouldBe(300);
        afterFour.ShouldBe(HttpStatusCode.OK);
        afterSix.ShouldBe(HttpStatusCode.Unauthorized);
    }

    [Fact]
    public async Task A_sign_in_cookie_ends_after_twelve_hours_unless_the_browser_keeps_using_it()
    {
        var clock = new FakeTimeProvider(DateTimeOffset.UtcNow);
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, configure: b => b.Services.AddSingleton<TimeProvider>(clock));
        using var idleHandler = new HttpClientHandler { CookieContainer = new CookieContainer() };
        using var idle = new HttpClient(idleHandler) { BaseAddress = server.BaseAddress };
        using var busyHandler = new HttpClientHandler { CookieContainer = new CookieContainer() };
        using var busy = new HttpClient(busyHandler) { BaseAddress = server.BaseAddress };
        foreach (var browser in new[] { idle, busy })
        {
            using var login = await browser.PostAsJsonAsync("/api/auth/login?useCookies=true", new { userName = "teacher", password = SaitoHost.Password }, Ct);
            login.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        // Sliding: a request renews the cookie for another Auth:CookieHours (12). Identity's security-stamp check renews it
        // on any request 30 minutes or more after it was issued, before the cookie handler's own half-life rule would.
        clock.Advance(TimeSpan.FromHours(7));
        using var busyAtSeven = await busy.GetAsync("/api/auth/me", Ct);
        clock.Advance(TimeSpan.FromHours(5) + TimeSpan.FromMinutes(1));
        // The idle browser still sends its cookie (its Expires is on the real clock): the server is what refuses it.
        idleHandler.CookieContainer.GetCookies(server.BaseAddress)["saito.auth"].ShouldNotBeNull();
        using var idleAfterTwelve = await idle.GetAsync("/api/auth/me", Ct);
        clock.Advance(TimeSpan.FromHours(2));
        using var busyAtFourteen = await busy.GetAsync("/api/auth/me", Ct);

        busyAtSeven.StatusCode.ShouldBe(HttpStatusCode.OK);
        idleAfterTwelve.StatusCode.ShouldBe(HttpStatusCode.Unauthorized);
        busyAtFourteen.StatusCode.ShouldBe(HttpStatusCode.OK);
    }

    private static async Task<JsonElement> SignInAsync(HttpClient anonymous, string userName)
    {
        using var login = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName, password = SaitoHost.Password }, Ct);
        login.StatusCode.ShouldBe(HttpStatusCode.OK);
        return await login.Content.ReadFromJsonAsync<JsonElement>(Ct);
    }

    private static async Task<HttpStatusCode> MeAsync(SaitoHost server, JsonElement tokens)
    {
        using var client = server.Anonymous();
        client.DefaultRequestHeaders.Authorization = new System.Net.Http.Headers.AuthenticationHeaderValue("Bearer", tokens.GetProperty("accessToken").GetString());
        using var me = await client.GetAsync("/api/auth/me", Ct);
        return me.StatusCode;
    }

    private static Task<HttpResponseMessage> ChangePasswordAsync(HttpClient client, string newPassword) =>
        client.PostAsJsonAsync("/api/auth/password", new { currentPassword = SaitoHost.Password, newPassword }, Ct);

    private static Task<HttpResponseMessage> PutAsync(HttpClient client, string location, string? ifMatch, object body)
    {
        var request = new HttpRequestMessage(HttpMethod.Put, location) { Content = JsonContent.Create(body) };
        if (ifMatch is not null)
        {
            request.Headers.TryAddWithoutValidation("If-Match", ifMatch);
        }

        return client.SendAsync(request, Ct);
    }
}

using System.Net;
using System.Net.Http.Json;
using System.Text;
using System.Text.Json;
using Microsoft.EntityFrameworkCore;
using Saito.Registry.Tests.Infrastructure;
using Saito.Storage.Keys;

namespace Saito.Registry.Tests.Api;

/// <summary>Owners and contacts through the real HTTP pipeline, on SQLite and PostgreSQL.</summary>
public sealed class OwnerApiTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Two_staff_editing_the_same_student_cannot_overwrite_each_other(StorageProvider provider)
    {
        await using var server = await ApiServer.StartAsync(provider, postgres);
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
        await using var server = await ApiServer.StartAsync(provider, postgres);
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
        await using var server = await ApiServer.StartAsync(provider, postgres);
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

        await using var db = server.Database.Open();
        (await db.Owners.CountAsync(Ct)).ShouldBe(1);
        (await db.Contacts.CountAsync(Ct)).ShouldBe(0);
        (await db.CheckIns.CountAsync(Ct)).ShouldBe(0);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Lists_page_and_times_carry_an_explicit_offset(StorageProvider provider)
    {
        await using var server = await ApiServer.StartAsync(provider, postgres);
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
        await using var server = await ApiServer.StartAsync(StorageProvider.Sqlite, null, ["Auth:MaxFailedSignIns=3"]);
        using var anonymous = server.Anonymous();
        var codes = new List<HttpStatusCode>();
        for (int i = 0; i < 3; i++)
        {
            using var wrong = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = "guess-" + i }, Ct);
            codes.Add(wrong.StatusCode);
        }

        using var right = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "teacher", password = ApiServer.Password }, Ct);
        using var other = await anonymous.PostAsJsonAsync("/api/auth/login", new { userName = "aide", password = ApiServer.Password }, Ct);

        codes.ShouldBe([HttpStatusCode.Unauthorized, HttpStatusCode.Unauthorized, HttpStatusCode.Locked]);
        right.StatusCode.ShouldBe(HttpStatusCode.Locked);
        (await right.Content.ReadAsStringAsync(Ct)).ShouldContain("Auth:MaxFailedSignIns");
        other.StatusCode.ShouldBe(HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_browser_signs_in_with_a_cookie_and_a_disabled_account_is_signed_out()
    {
        await using var server = await ApiServer.StartAsync(StorageProvider.Sqlite, null);
        await server.AddUserAsync("carol", "teacher");
        using var handler = new HttpClientHandler { CookieContainer = new CookieContainer() };
        using var browser = new HttpClient(handler) { BaseAddress = server.BaseAddress };
        using var login = await browser.PostAsJsonAsync("/api/auth/login?useCookies=true", new { userName = "carol", password = ApiServer.Password }, Ct);
        login.StatusCode.ShouldBe(HttpStatusCode.OK);
        handler.CookieContainer.GetCookies(server.BaseAddress)["saito.auth"].ShouldNotBeNull();
        (await browser.GetFromJsonAsync<JsonElement>("/api/auth/me", Ct)).GetProperty("roles")[0].GetString().ShouldBe("teacher");

        using var admin = await server.AsAsync("admin");
        var users = await admin.GetFromJsonAsync<JsonElement>("/api/users", Ct);
        int carol = users.GetProperty("items").EnumerateArray().Single(u => u.GetProperty("userName").GetString() == "carol").GetProperty("id").GetInt32();
        using var disabled = await admin.PostAsync($"/api/users/{carol}/disable", null, Ct);
        disabled.StatusCode.ShouldBe(HttpStatusCode.OK);
        using var again = await server.Anonymous().PostAsJsonAsync("/api/auth/login", new { userName = "carol", password = ApiServer.Password }, Ct);

        again.StatusCode.ShouldBe(HttpStatusCode.Locked);
    }

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

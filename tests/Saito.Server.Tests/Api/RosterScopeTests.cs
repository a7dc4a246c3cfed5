using System.Security.Claims;
using Saito.Registry.Model;
using Saito.Server.Tests.Infrastructure;
using Saito.Server.Api;

namespace Saito.Server.Tests.Api;

/// <summary>
/// What a teacher or an aide may do is bounded by the rosters of the classes they are listed on, on every write that
/// touches a student (from a review: the API let them act on any student, while the pages did not); ops see the notices'
/// outbox without the families' addresses; the API description is not for callers a proxy forwards.
/// </summary>
public sealed class RosterScopeTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_teacher_cannot_move_another_class_s_device_to_their_own_student()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, postgres);
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        int ana = await StudentAsync(admin, "Ana");
        int ben = await StudentAsync(admin, "Ben");
        await Rosters.ListOnClassAsync(admin, [teacher], ana); // Ben is in no class of the teacher's
        int bens = await DeviceAsync(admin, "wrist-ben");
        int spare = await DeviceAsync(admin, "wrist-spare");
        (await PostAsync(admin, "/api/assignments", new { deviceId = bens, ownerId = ben, from = DateTimeOffset.UtcNow.AddMinutes(-20) })).ShouldBe(HttpStatusCode.Created);

        // Moving Ben's band to Ana, back-dated, would show Ben's readings as Ana's to the teacher.
        (await PostAsync(teacher, "/api/assignments", new { deviceId = bens, ownerId = ana, from = DateTimeOffset.UtcNow.AddMinutes(-15) })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(teacher, "/api/assignments", new { deviceId = spare, ownerId = ben })).ShouldBe(HttpStatusCode.Forbidden);

        // Within the roster it works.
        (await PostAsync(teacher, "/api/assignments", new { deviceId = spare, ownerId = ana })).ShouldBe(HttpStatusCode.Created);
    }

    [Fact]
    public async Task An_aide_checks_in_and_out_only_the_students_of_their_classes()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, postgres);
        using var admin = await server.AsAsync("admin");
        using var aide = await server.AsAsync("aide");
        int ana = await StudentAsync(admin, "Ana");
        int ben = await StudentAsync(admin, "Ben");
        await Rosters.ListOnClassAsync(admin, [aide], ana);

        (await PostAsync(aide, "/api/check-ins", new { ownerId = ben })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(aide, "/api/check-ins", new { ownerId = ana })).ShouldBe(HttpStatusCode.Created);
        (await PostAsync(admin, "/api/check-ins", new { ownerId = ben })).ShouldBe(HttpStatusCode.Created);
        (await PostAsync(aide, "/api/check-ins/check-out", new { ownerId = ben })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(aide, "/api/check-ins/check-out", new { ownerId = ana })).ShouldBe(HttpStatusCode.OK);
    }

    [Fact]
    public void Ops_see_a_notice_without_the_family_s_address()
    {
        var notice = new Notice { Id = 1, OwnerId = 2, ContactId = 3, ToAddress = "parent@example.org", Language = "en", MessageId = "m", DedupKey = "k" };

        NoticeView.Of(notice, As("ops")).ToAddress.ShouldBe(NoticeView.Hidden);
        NoticeView.Of(notice, As("admin")).ToAddress.ShouldBe("parent@example.org");
    }

    [Fact]
    public async Task The_api_description_is_not_for_a_caller_a_proxy_forwards()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, postgres);
        using var anonymous = server.Anonymous();
        using (var local = await anonymous.GetAsync("/openapi/v1.json", Ct))
        {
            local.StatusCode.ShouldBe(HttpStatusCode.OK, "loopback, not forwarded: the try-it case");
        }

        using var request = new HttpRequestMessage(HttpMethod.Get, "/openapi/v1.json");
        request.Headers.Add("X-Forwarded-For", "203.0.113.7");
        using var forwarded = await anonymous.SendAsync(request, Ct);
        forwarded.StatusCode.ShouldNotBe(HttpStatusCode.OK);
    }

    private static ClaimsPrincipal As(string role) => new(new ClaimsIdentity([new Claim(ClaimTypes.Role, role)], "test"));

    private static async Task<HttpStatusCode> PostAsync(HttpClient client, string path, object body)
    {
        using var response = await client.PostAsJsonAsync(path, body, Ct);
        return response.StatusCode;
    }

    private static async Task<int> StudentAsync(HttpClient admin, string name)
    {
        using var response = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = name }, Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.Created);
        return (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
    }

    private static async Task<int> DeviceAsync(HttpClient admin, string serial)
    {
        using var response = await admin.PostAsJsonAsync("/api/devices", new { serial, kind = "wristband" }, Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.Created, await response.Content.ReadAsStringAsync(Ct));
        return (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
    }
}

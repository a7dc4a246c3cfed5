using System.Text.RegularExpressions;
using Saito.Server.Tests.Infrastructure;
using Saito.Server.Api;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Api;

/// <summary>
/// Issue 32, items 1 and 2: one rule (<see cref="AssignmentRule"/>) for the API and the devices page, so that a
/// teacher cannot move another class's wristband, or its history, to a student of theirs and read its readings.
/// </summary>
public sealed partial class AssignmentRuleTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_teacher_cannot_end_another_class_s_assignment_and_restart_it_on_their_student_to_read_its_vitals()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        var school = await SchoolAsync(server);
        using var teacher = await server.AsAsync("teacher");

        // The attack of the issue: end Ben's assignment where it began, then start one for Ana at that moment.
        (await PostAsync(teacher, $"/api/assignments/{school.BensAssignment}/end", new { to = school.From })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(teacher, "/api/assignments", new { deviceId = school.Band, ownerId = school.Ana, from = school.From })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(teacher, "/api/assignments", new { deviceId = school.Band, ownerId = school.Ana })).ShouldBe(HttpStatusCode.Forbidden);
        var readings = await teacher.GetFromJsonAsync<JsonElement>($"/api/readings/biosensor?ownerId={school.Ana}&from={Uri.EscapeDataString(school.From.AddHours(-1).ToString("O"))}", Ct);
        readings.GetArrayLength().ShouldBe(0);

        // Their own student's assignment: ended now, not back-dated (that would hide her history, or hand it on).
        using var admin = await server.AsAsync("admin");
        int anas = await CreateAsync(admin, "/api/assignments", new { deviceId = school.Spare, ownerId = school.Ana, from = school.From });
        (await PostAsync(teacher, $"/api/assignments/{anas}/end", new { to = school.From.AddMinutes(1) })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(teacher, $"/api/assignments/{anas}/end", new { })).ShouldBe(HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_hand_over_between_classes_back_to_back_is_an_admin_s_and_latest_readings_stay_with_the_wearer()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Ingestion:MaxFutureSkewSeconds=300"]);
        var school = await SchoolAsync(server);
        using var ops = await server.AsAsync("ops");
        using var admin = await server.AsAsync("admin");

        // Ops see no vitals but may sort devices out; not straight from a class-2 student to a class-1 one.
        (await PostAsync(ops, "/api/assignments", new { deviceId = school.Band, ownerId = school.Ana })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(ops, $"/api/assignments/{school.BensAssignment}/end", new { })).ShouldBe(HttpStatusCode.OK);
        (await PostAsync(ops, "/api/assignments", new { deviceId = school.Band, ownerId = school.Ana })).ShouldBe(HttpStatusCode.Forbidden);
        (await PostAsync(ops, "/api/assignments", new { deviceId = school.Band, ownerId = school.Ana, from = DateTimeOffset.UtcNow.AddMinutes(6) })).ShouldBe(HttpStatusCode.Created);

        // An admin may hand over back to back; Ana's latest readings are then none, not Ben's last one.
        (await PostAsync(admin, "/api/assignments", new { deviceId = school.Spare, ownerId = school.Ben, from = school.From })).ShouldBe(HttpStatusCode.Created);
        await PublishAsync(server, "saito/hub-1/wrist-spare/biosensor", $$"""{"ts":"{{Ts(DateTimeOffset.UtcNow.AddSeconds(-30))}}","hr":99,"sys":121,"dia":80}""");
        (await PostAsync(admin, "/api/assignments", new { deviceId = school.Spare, ownerId = school.Ana })).ShouldBe(HttpStatusCode.Created);
        (await admin.GetFromJsonAsync<JsonElement>($"/api/readings/biosensor/latest?ownerId={school.Ben}", Ct)).GetArrayLength().ShouldBe(0, "Ben no longer has a device");
        (await admin.GetFromJsonAsync<JsonElement>($"/api/readings/biosensor/latest?deviceId={school.Spare}", Ct)).GetArrayLength().ShouldBe(1);
        (await admin.GetFromJsonAsync<JsonElement>($"/api/readings/biosensor/latest?ownerId={school.Ana}", Ct)).GetArrayLength().ShouldBe(0, "Ben's reading is not Ana's");
    }

    [Fact]
    public async Task The_devices_page_refuses_a_teacher_the_wristband_of_another_class_s_student_as_the_api_does()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        var school = await SchoolAsync(server);

        // A browser's form post: the teacher's sign-in cookie and the page's antiforgery token.
        using var browser = new HttpClient(new HttpClientHandler { CookieContainer = new CookieContainer(), AllowAutoRedirect = false }) { BaseAddress = server.BaseAddress };
        using (var login = await browser.PostAsJsonAsync("/api/auth/login?useCookies=true", new { userName = "teacher", password = SaitoHost.Password }, Ct))
        {
            login.EnsureSuccessStatusCode();
        }

        string page = await browser.GetStringAsync($"/devices?assign={school.Spare}", Ct);
        string token = Token().Match(page).Groups[1].Value;
        token.ShouldNotBeEmpty(page);
        using var form = new FormUrlEncodedContent(new Dictionary<string, string>
        {
            ["deviceId"] = school.Band.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["ownerId"] = school.Ana.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["__RequestVerificationToken"] = token,
        });
        using var posted = await browser.PostAsync("/devices?handler=Assign", form, Ct);
        posted.StatusCode.ShouldBe(HttpStatusCode.Redirect);
        (await browser.GetStringAsync("/devices", Ct)).ShouldContain("is not on the roster of a class you are listed on");

        using var admin = await server.AsAsync("admin");
        var band = await admin.GetFromJsonAsync<JsonElement>($"/api/devices/{school.Band}", Ct);
        band.GetProperty("assignedTo").GetProperty("id").GetInt32().ShouldBe(school.Ben, "the band is still Ben's");

        // The control: the same form for the spare band and the teacher's own student works.
        using var own = new FormUrlEncodedContent(new Dictionary<string, string>
        {
            ["deviceId"] = school.Spare.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["ownerId"] = school.Ana.ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["__RequestVerificationToken"] = token,
        });
        using var ok = await browser.PostAsync("/devices?handler=Assign", own, Ct);
        (await browser.GetStringAsync("/devices", Ct)).ShouldContain("wrist-spare is now Ana");
    }

    [Fact]
    public void The_rule_lets_admins_do_anything_and_others_nothing_in_the_past_nor_for_students_not_theirs()
    {
        var now = new DateTimeOffset(2026, 12, 5, 9, 0, 0, TimeSpan.Zero);
        var skew = TimeSpan.FromMinutes(5);
        var admin = new AssignmentCaller(AssignmentCallerKind.Admin, 1, "admin");
        var teacher = new AssignmentCaller(AssignmentCallerKind.Roster, 2, "teacher");
        var ana = new AssignmentParty(10, CallerMayActFor: true, [1]);
        var cleo = new AssignmentParty(12, CallerMayActFor: true, [2]);
        var ben = new AssignmentParty(11, CallerMayActFor: false, [2]);

        AssignmentRule.MayStart(admin, now, skew, now.AddHours(-1), ana, [new PreviousAssignment(ben, null)]).ShouldBeNull();
        AssignmentRule.MayStart(teacher, now, skew, now.AddTicks(-1), ana, []).ShouldNotBeNull();
        AssignmentRule.MayStart(teacher, now, skew, now, ana, []).ShouldBeNull();
        AssignmentRule.MayStart(teacher, now, skew, now, ben, []).ShouldNotBeNull();
        AssignmentRule.MayStart(teacher, now, skew, now, ana, [new PreviousAssignment(ben, null)]).ShouldNotBeNull();
        AssignmentRule.MayStart(teacher, now, skew, now, ana, [new PreviousAssignment(cleo, now)])!.ShouldContain("shares no class");
        AssignmentRule.MayEnd(teacher, now, now.AddTicks(-1), ana).ShouldNotBeNull();
        AssignmentRule.MayEnd(teacher, now, now, ben).ShouldNotBeNull();
        AssignmentRule.MayEnd(teacher, now, now, ana).ShouldBeNull();
        AssignmentRule.MayEnd(admin, now, now.AddDays(-1), ben).ShouldBeNull();
    }

    private sealed record School(int Ana, int Ben, int Band, int Spare, int BensAssignment, DateTimeOffset From);

    /// <summary>
    /// Class 1 (the teacher, Ana) and class 2 (Ben); Ben's wristband, assigned by an admin 20 minutes ago, has sent a
    /// reading with blood pressure; a spare band nobody has.
    /// </summary>
    private static async Task<School> SchoolAsync(SaitoHost server)
    {
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        int ana = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ana" });
        int ben = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ben" });
        await Rosters.ListOnClassAsync(admin, [teacher], ana);
        await Rosters.ListOnClassAsync(admin, [], ben);
        int band = await CreateAsync(admin, "/api/devices", new { serial = "wrist-ben", kind = "wristband" });
        int spare = await CreateAsync(admin, "/api/devices", new { serial = "wrist-spare", kind = "wristband" });
        var from = DateTimeOffset.UtcNow.AddMinutes(-20);
        int assignment = await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = ben, from });
        await PublishAsync(server, "saito/hub-1/wrist-ben/biosensor", $$"""{"ts":"{{Ts(from.AddMinutes(5))}}","hr":88,"sys":131,"dia":85}""");
        return new School(ana, ben, band, spare, assignment, from);
    }

    private static async Task<HttpStatusCode> PostAsync(HttpClient client, string path, object body)
    {
        using var response = await client.PostAsJsonAsync(path, body, Ct);
        return response.StatusCode;
    }

    [GeneratedRegex("name=\"__RequestVerificationToken\"[^>]*value=\"([^\"]+)\"")]
    private static partial Regex Token();
}

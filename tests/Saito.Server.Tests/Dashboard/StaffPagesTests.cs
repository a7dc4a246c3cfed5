using System.Globalization;
using Microsoft.Playwright;
using Saito.Registry.Model;
using static Microsoft.Playwright.Assertions;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// The staff pages in a real browser against a real Saito: ops sorts out a new device in two taps, the teacher checks
/// students in on the board while a fingerprint check-in over MQTT appears by itself, the alert history is scoped to
/// one's classes, admins read the audit of vitals views, and each role is kept off the pages not meant for it.
/// </summary>
public sealed class StaffPagesTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task Ops_assigns_a_new_device_in_two_taps_and_each_role_is_kept_off_pages_not_for_it()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        int ada = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ada Lovelace" });
        await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Basil Brush" });

        // A wristband nobody has sorted out yet (ingestion registers it on first sight), and an assigned one gone silent.
        await PublishAsync(server, "saito/hub-1/wrist-new/biosensor", $$"""{"ts":"{{Ts(DateTimeOffset.UtcNow.AddSeconds(-5))}}","hr":72}""");
        var devices = await admin.GetFromJsonAsync<JsonElement>("/api/devices?status=new", Ct);
        int deviceId = devices.GetProperty("items").EnumerateArray().Single(d => d.GetProperty("serial").GetString() == "wrist-new").GetProperty("id").GetInt32();
        await using (var db = server.OpenRegistry())
        {
            var now = DateTimeOffset.UtcNow;
            var old = new Device { Serial = "wrist-quiet", Kind = "wristband", Hub = "hub-1", FirstSeen = now.AddDays(-3), LastSeen = now.AddMinutes(-10) };
            db.Devices.Add(old);
            await db.SaveChangesAsync(Ct);
            db.Assignments.Add(new Assignment { DeviceId = old.Id, OwnerId = ada, From = now.AddDays(-2), AssignedBy = "admin" });
            await db.SaveChangesAsync(Ct);
        }

        await using var browser = await Browser.LaunchAsync();
        SetDefaultExpectTimeout(15_000);

        var ops = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(ops, "ops", SaitoHost.Password);
        new Uri(ops.Url).AbsolutePath.ShouldBe("/devices");
        var row = ops.Locator("#new-devices tr[data-serial=wrist-new]");
        await Expect(row).ToContainTextAsync("Assign…");
        await Expect(ops.Locator("#silent-devices tr", new() { HasText = "wrist-quiet" })).ToContainTextAsync("Ada Lovelace");
        await Browser.ScreenshotAsync(ops, "devices-to-sort-out");

        // Tap one: "Assign…". Tap two: the student's name.
        await row.Locator("a.assign").ClickAsync();
        var picker = ops.Locator("#assign");
        await Expect(picker).ToContainTextAsync("wrist-new");
        var name = picker.Locator("button.student", new() { HasText = "Ada Lovelace" });
        (await name.BoundingBoxAsync())!.Height.ShouldBeGreaterThanOrEqualTo(44);
        await Browser.ScreenshotAsync(ops, "devices-pick-student");
        await name.ClickAsync();
        await Expect(ops.Locator(".done")).ToContainTextAsync("wrist-new is now Ada Lovelace's");
        await Expect(ops.Locator("#new-devices tr[data-serial=wrist-new]")).ToHaveCountAsync(0);
        await Browser.ScreenshotAsync(ops, "devices-assigned");

        var assignments = await admin.GetFromJsonAsync<JsonElement>($"/api/assignments?deviceId={deviceId}", Ct);
        var assignment = assignments.GetProperty("items").EnumerateArray().Single();
        assignment.GetProperty("ownerId").GetInt32().ShouldBe(ada);
        assignment.GetProperty("assignedBy").GetString().ShouldBe("ops");
        assignment.GetProperty("to").ValueKind.ShouldBe(JsonValueKind.Null);

        // Hostile access: pages not meant for a role send it to /denied, anonymous browsers to /login.
        await ExpectDeniedAsync(ops, "/alerts", "/audit", "/classes/1/check-in");
        var teacher = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(teacher, "teacher", SaitoHost.Password);
        await ExpectDeniedAsync(teacher, "/audit");
        var aide = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(aide, "aide", SaitoHost.Password);
        await ExpectDeniedAsync(aide, "/audit", "/devices");
        var post = await aide.APIRequest.PostAsync("/devices?handler=Assign", new() { Form = aide.APIRequest.CreateFormData().Set("deviceId", deviceId).Set("ownerId", ada), MaxRedirects = 0 });
        post.Status.ShouldBe((int)HttpStatusCode.Forbidden);
        var anonymous = await browser.NewPageAsync(server.BaseAddress);
        foreach (string path in new[] { "/devices", "/alerts", "/audit", "/classes/1/check-in" })
        {
            await anonymous.GotoAsync(path);
            new Uri(anonymous.Url).AbsolutePath.ShouldBe("/login", path);
        }
    }

    [Fact]
    public async Task The_check_in_board_shows_fingerprint_check_ins_and_the_alert_history_and_audit_are_scoped()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        int ada = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ada Lovelace" });
        int basil = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Basil Brush" });
        int classId;
        var now = DateTimeOffset.UtcNow;
        await using (var db = server.OpenRegistry())
        {
            var c = new SchoolClass { Name = "Morning circle", Room = "Room 1", CreatedAt = now, UpdatedAt = now };
            db.Classes.Add(c);
            await db.SaveChangesAsync(Ct);
            classId = c.Id;
            db.RosterEntries.AddRange(new RosterEntry { ClassId = c.Id, OwnerId = ada, AddedAt = now }, new RosterEntry { ClassId = c.Id, OwnerId = basil, AddedAt = now });
            db.Alerts.Add(new AlertRecord
            {
                Id = Guid.NewGuid(), OwnerId = ada, ClassId = c.Id, Kind = "tachycardia", RaisedAt = now.AddMinutes(-20), Level = 1, Value = 150,
                Detail = "heart rate 150 bpm for 12 s, 1.9× resting 80 bpm", EscalatedAt = now.AddMinutes(-19), AcknowledgedAt = now.AddMinutes(-18),
                AcknowledgedBy = "aide", ClearedAt = now.AddMinutes(-10),
            });
            db.VitalsViews.Add(new VitalsView { OwnerId = ada, UserName = "teacher", At = now.AddMinutes(-5), Via = "live-class" });
            db.VitalsViews.Add(new VitalsView { OwnerId = basil, UserName = "aide", At = now.AddMinutes(-4), Via = "student" });
            await db.SaveChangesAsync(Ct);
        }

        using var teacherApi = await server.AsAsync("teacher");
        int teacherId = (await teacherApi.GetFromJsonAsync<JsonElement>("/api/auth/me", Ct)).GetProperty("id").GetInt32();
        using (var listed = await admin.PutAsync($"/api/classes/{classId}/staff/{teacherId}", null, Ct))
        {
            listed.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        }

        await using var browser = await Browser.LaunchAsync();
        SetDefaultExpectTimeout(15_000);

        // The board: nobody here yet; the teacher checks Ada in with one tap.
        var teacher = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(teacher, "teacher", SaitoHost.Password);
        await teacher.GotoAsync($"/classes/{classId}/check-in");
        var adaLine = teacher.Locator($"#student-{ada}");
        var basilLine = teacher.Locator($"#student-{basil}");
        await Expect(adaLine.Locator(".state")).ToHaveTextAsync("✖ Not yet");
        await Expect(basilLine.Locator(".state")).ToHaveTextAsync("✖ Not yet");
        var checkIn = adaLine.Locator(".do-in button");
        (await checkIn.BoundingBoxAsync())!.Height.ShouldBeGreaterThanOrEqualTo(44);
        await checkIn.ClickAsync();
        await Expect(teacher.Locator(".done")).ToContainTextAsync("Ada Lovelace checked in");
        await Expect(adaLine.Locator(".state")).ToContainTextAsync("✔ Checked in at");
        await Expect(adaLine.Locator(".do-out button")).ToBeVisibleAsync();
        await Expect(adaLine.Locator(".do-in")).ToBeHiddenAsync();

        // Basil puts his finger on the reader: the board shows it without a reload (the marker survives).
        await teacher.EvaluateAsync("() => { window.saitoNoReload = true; }");
        await PublishAsync(server, "saito/hub-1/fp-1/checkin", $$"""{"owner":{{basil}}}""");
        await Expect(basilLine.Locator(".state")).ToContainTextAsync("(fingerprint)", new() { Timeout = 30_000 });
        await Expect(basilLine.Locator(".do-out")).ToBeVisibleAsync();
        await Expect(teacher.Locator("#present")).ToHaveTextAsync("2");
        (await teacher.EvaluateAsync<bool>("() => window.saitoNoReload === true")).ShouldBeTrue();
        await Browser.ScreenshotAsync(teacher, "check-in-board");

        // Ada leaves.
        await adaLine.Locator(".do-out button").ClickAsync();
        await Expect(adaLine.Locator(".state")).ToContainTextAsync("↩ Left at");
        await Expect(adaLine.Locator(".do-in")).ToBeVisibleAsync();
        var day = await admin.GetFromJsonAsync<JsonElement>($"/api/check-ins?ownerId={ada}", Ct);
        var record = day.GetProperty("items").EnumerateArray().Single();
        record.GetProperty("source").GetString().ShouldBe("staff:teacher");
        record.GetProperty("checkedOutAt").ValueKind.ShouldBe(JsonValueKind.String);
        await Browser.ScreenshotAsync(teacher, "check-in-board-left");

        // The alert history: the teacher on the class sees Ada's alert, who acknowledged it and when it cleared.
        await teacher.GotoAsync("/alerts");
        var alert = teacher.Locator("#alert-history tr[data-kind=tachycardia]");
        await Expect(alert).ToContainTextAsync("Ada Lovelace");
        await Expect(alert).ToContainTextAsync("150 bpm");
        await Expect(alert).ToContainTextAsync("escalated to teacher");
        await Expect(alert).ToContainTextAsync("✔ by aide");
        await Expect(alert).ToContainTextAsync("Morning circle");
        await Browser.ScreenshotAsync(teacher, "alert-history");
        await teacher.SelectOptionAsync("select[name=student]", basil.ToString(CultureInfo.InvariantCulture));
        await teacher.ClickAsync("form.filters button[type=submit]");
        await Expect(teacher.Locator("#alert-history")).ToHaveCountAsync(0);
        await Expect(teacher.Locator("main .notice")).ToContainTextAsync("No alerts");
        await teacher.GotoAsync($"/alerts?class={classId}&date={now.AddMinutes(-20).UtcDateTime:yyyy-MM-dd}");
        await Expect(teacher.Locator("#alert-history tbody tr")).ToHaveCountAsync(1);

        // A teacher not on the class sees none of it, and no board.
        await server.AddUserAsync("teacher2", StaffRoles.Teacher);
        var other = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(other, "teacher2", SaitoHost.Password);
        await other.GotoAsync("/alerts");
        await Expect(other.Locator("main .notice")).ToContainTextAsync("No alerts");
        await Expect(other.Locator("#alert-history")).ToHaveCountAsync(0);
        (await other.ContentAsync()).ShouldNotContain("150 bpm");
        await other.GotoAsync($"/classes/{classId}/check-in");
        new Uri(other.Url).AbsolutePath.ShouldBe("/denied");

        // The audit: admins see who viewed whose vitals, and filter by member of staff.
        var adminPage = await browser.NewPageAsync(server.BaseAddress);
        await Browser.SignInAsync(adminPage, "admin", SaitoHost.Password);
        await adminPage.GotoAsync("/audit");
        await Expect(adminPage.Locator("#audit tr[data-user=teacher]")).ToContainTextAsync("Ada Lovelace");
        await Expect(adminPage.Locator("#audit tr[data-user=teacher]")).ToContainTextAsync("live class");
        await Expect(adminPage.Locator("#audit tr[data-user=aide]")).ToContainTextAsync("Basil Brush");
        await Browser.ScreenshotAsync(adminPage, "audit");
        await adminPage.SelectOptionAsync("select[name=user]", "aide");
        await adminPage.ClickAsync("form.filters button[type=submit]");
        await Expect(adminPage.Locator("#audit tbody tr")).ToHaveCountAsync(1);
        await Expect(adminPage.Locator("#audit tr[data-user=aide]")).ToBeVisibleAsync();
    }

    /// <summary>The histories' <c>from</c> and <c>to</c> in the API (alerts, vitals views): from included, to excluded, either left out.</summary>
    [Fact]
    public async Task The_alert_and_audit_api_filter_from_included_to_excluded()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        var ada = new Owner { Kind = OwnerKind.Student, DisplayName = "Ada Lovelace" };
        var hour = new DateTimeOffset(2026, 11, 2, 9, 0, 0, TimeSpan.Zero);
        await using (var db = server.OpenRegistry())
        {
            db.Owners.Add(ada);
            await db.SaveChangesAsync(Ct);
            for (int i = 0; i < 3; i++)
            {
                db.Alerts.Add(new AlertRecord { Id = Guid.NewGuid(), OwnerId = ada.Id, Kind = "tachycardia", RaisedAt = hour.AddHours(i), Level = 1, Value = 150 + i, Detail = "test" });
                db.VitalsViews.Add(new VitalsView { OwnerId = ada.Id, UserName = $"user{i}", At = hour.AddHours(i), Via = "live-class" });
            }

            await db.SaveChangesAsync(Ct);
        }

        string At(int hours) => Uri.EscapeDataString(hour.AddHours(hours).ToString("O"));
        async Task<string> AlertsAsync(string query) => Join(await admin.GetFromJsonAsync<JsonElement>("/api/alerts?" + query, Ct), "value");
        async Task<string> ViewsAsync(string query) => Join(await admin.GetFromJsonAsync<JsonElement>("/api/audit/vitals-views?" + query, Ct), "userName");

        (await AlertsAsync($"from={At(1)}&to={At(2)}")).ShouldBe("151", "the alert raised at from, not the one raised at to");
        (await AlertsAsync($"from={At(1)}")).ShouldBe("152 151");
        (await AlertsAsync($"to={At(1)}")).ShouldBe("150");
        (await AlertsAsync("")).ShouldBe("152 151 150");
        (await ViewsAsync($"from={At(1)}&to={At(2)}")).ShouldBe("user1", "the view at from, not the one at to");
        (await ViewsAsync($"from={At(1)}")).ShouldBe("user2 user1");
        (await ViewsAsync($"to={At(1)}")).ShouldBe("user0");
    }

    private static string Join(JsonElement page, string property) =>
        string.Join(" ", page.GetProperty("items").EnumerateArray().Select(item => item.GetProperty(property).ToString()));

    private static async Task ExpectDeniedAsync(IPage page, params string[] paths)
    {
        foreach (string path in paths)
        {
            var response = await page.GotoAsync(path);
            new Uri(page.Url).AbsolutePath.ShouldBe("/denied", path);
            response!.Status.ShouldBe(403, $"{path}: the denied page says so in its status too");
            await Expect(page.Locator("h1")).ToContainTextAsync("not for your account");
        }
    }
}

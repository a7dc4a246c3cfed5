using Microsoft.Playwright;
using static Microsoft.Playwright.Assertions;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// The live class page as a teacher's tablet shows it (issue 34): a class of sixteen, ten not checked in and one heart
/// racing, at 1024x768. The racing heart comes first and names itself on its tile, the ten absences are one line, all
/// sixteen tiles fit the first screen, nothing scrolls sideways, an acknowledged alert still open is not green, and a
/// value that stopped coming greys out with its age.
/// </summary>
public sealed class ClassroomTabletTests
{
    private const int Students = 16;
    private const int CheckedIn = 6;

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task At_1024x768_a_racing_heart_leads_ten_absences_collapse_to_one_line_and_all_sixteen_tiles_fit_the_first_screen()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null,
            ["Alerts:TachycardiaSeconds=3", "Alerts:CheckInGraceMinutes=0", "Alerts:SilentSensorSeconds=600", "Dashboard:StaleAfterSeconds=4"]);
        var (classId, students) = await ClassOfSixteenAsync(server);
        int racing = students[0];
        await using var browser = await Browser.LaunchAsync();
        SetDefaultExpectTimeout(20_000);

        var page = await browser.NewPageAsync(server.BaseAddress, 1024, 768);
        await Browser.SignInAsync(page, "teacher", SaitoHost.Password);
        await page.GotoAsync($"/classes/{classId}/live");
        await Expect(page.Locator("#live[data-ready=true]")).ToBeVisibleAsync();
        await Expect(page.Locator(".tile")).ToHaveCountAsync(Students);
        await Expect(page.Locator(".checkin-in")).ToHaveCountAsync(CheckedIn);

        // Every wristband speaks now, and the first student's heart races at 150 against a resting 80.
        var now = DateTimeOffset.UtcNow;
        for (int i = 0; i < CheckedIn; i++)
        {
            int hr = i == 0 ? 150 : 70 + i;
            string trace = "[" + string.Join(",", Enumerable.Range(0, 21).Select(k => $$"""{"ts":"{{Ts(now.AddMilliseconds((k * 250) - 5000))}}","hr":{{hr}},"temp":33.{{i}}}""")) + "]";
            await PublishAsync(server, $"saito/hub-1/wrist-{i}/biosensor", trace);
        }

        var racingAlert = page.Locator("#banner .alert:not(.acked)[data-kind=tachycardia]");
        await Expect(racingAlert).ToBeVisibleAsync();
        var absences = page.Locator("#banner .alert.group[data-kind=not-checked-in]");
        await Expect(absences).ToHaveAttributeAsync("data-count", "10");
        await Expect(absences.Locator("button.ack")).ToHaveTextAsync("Acknowledge all 10");
        await Expect(page.Locator(".tile")).ToHaveCountAsync(Students);

        // Severity first: the clinical alert leads, and the banner is two lines, not eleven.
        await Expect(page.Locator("#banner .alert").First).ToHaveAttributeAsync("data-kind", "tachycardia");
        await Expect(page.Locator("#banner .alert")).ToHaveCountAsync(2);
        var tile = page.Locator($"#tile-{racing}");
        await Expect(tile.Locator(".tile-alert")).ToHaveTextAsync("⚠ Heart rate high: 150 bpm");
        await Expect(tile.Locator(".vital.alarm .hr")).ToHaveTextAsync("150 bpm");

        // Tablets first: the alert and every tile inside the first screen, nothing wider than it.
        await Browser.ScreenshotAsync(page, "live-class-tablet-1024x768", fullPage: false);
        await ShouldBeOnFirstScreenAsync(racingAlert, "the racing heart's alert");
        for (int i = 0; i < Students; i++)
        {
            await ShouldBeOnFirstScreenAsync(page.Locator(".tile").Nth(i), $"tile {i + 1} of {Students}");
        }

        (await page.EvaluateAsync<int>("document.documentElement.scrollWidth")).ShouldBeLessThanOrEqualTo(1024, "no sideways scroll at 1024 px");

        // Acknowledged but still active: its own look, who and when, and never green.
        await racingAlert.Locator("button.ack").ClickAsync();
        var seen = page.Locator("#banner .alert.acked[data-kind=tachycardia]");
        await Expect(seen).ToContainTextAsync("acknowledged by teacher at");
        await Expect(page.Locator("#banner .alert").First).ToHaveAttributeAsync("data-kind", "tachycardia", new() { Timeout = 5_000 });
        foreach (string colour in await seen.EvaluateAsync<string[]>(
            "e => [getComputedStyle(e).color, getComputedStyle(e).borderTopColor, getComputedStyle(e.querySelector('.by')).color, getComputedStyle(e).backgroundColor]"))
        {
            IsGreen(colour).ShouldBeFalse($"an acknowledged alert that is still open reads as resolved when green ({colour})");
        }

        (await seen.EvaluateAsync<string>("e => getComputedStyle(e).borderTopStyle")).ShouldBe("dashed");
        await Expect(tile.Locator(".tile-alert.acked")).ToBeVisibleAsync();
        await Browser.ScreenshotAsync(page, "live-class-tablet-acknowledged", fullPage: false);

        // Stale never looks live: the wristbands have stopped; past Dashboard:StaleAfterSeconds the tiles grey out with their age.
        await Expect(tile).ToHaveClassAsync(new System.Text.RegularExpressions.Regex(@"\bstale\b"));
        await Expect(tile.Locator(".updated")).ToContainTextAsync("◌");
        await Expect(tile.Locator(".updated")).ToContainTextAsync("s ago");
        (await tile.Locator(".big").EvaluateAsync<string>("e => getComputedStyle(e).color")).ShouldBe("rgb(140, 149, 159)");
        await Expect(page.Locator($"#tile-{students[CheckedIn]} .devices")).ToHaveTextAsync("⚙ no device assigned");
        await Browser.ScreenshotAsync(page, "live-class-tablet-stale", fullPage: false);

        // The same page at 1280x800 still fits without sideways scroll.
        await page.SetViewportSizeAsync(1280, 800);
        (await page.EvaluateAsync<int>("document.documentElement.scrollWidth")).ShouldBeLessThanOrEqualTo(1280);
    }

    private static async Task ShouldBeOnFirstScreenAsync(ILocator element, string what)
    {
        var box = await element.BoundingBoxAsync();
        box.ShouldNotBeNull(what);
        (box.Y + box.Height).ShouldBeLessThanOrEqualTo(768, $"{what} ends at {box.Y + box.Height:F0} px, below the first screen");
        (box.X + box.Width).ShouldBeLessThanOrEqualTo(1024, $"{what} ends at {box.X + box.Width:F0} px, right of the screen");
    }

    // Green: the green channel well above both others (the ok colour, rgb(26, 127, 55), and any like it).
    private static bool IsGreen(string css)
    {
        var parts = System.Text.RegularExpressions.Regex.Matches(css, @"\d+").Select(m => int.Parse(m.Value, System.Globalization.CultureInfo.InvariantCulture)).ToArray();
        return parts.Length >= 3 && parts[1] > parts[0] + 40 && parts[1] > parts[2] + 40;
    }

    /// <summary>
    /// A class in session for 30 minutes with sixteen students and the teacher listed: the first six wear wristbands and
    /// checked in by fingerprint (mosquitto_pub), the other ten have not arrived; the first's resting heart rate is 80.
    /// </summary>
    private static async Task<(int ClassId, int[] Students)> ClassOfSixteenAsync(SaitoHost server)
    {
        using var admin = await server.AsAsync("admin");
        string[] names = ["Ada", "Basil", "Cleo", "Dev", "Esme", "Finn", "Greta", "Hugo", "Iris", "Jonah", "Kai", "Lena", "Milo", "Nora", "Omar", "Pia"];
        var students = new int[Students];
        for (int i = 0; i < Students; i++)
        {
            students[i] = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = $"{names[i]} Example" });
        }

        int classId = await ClassInSessionAsync(server, students, startedMinutesAgo: 30);

        using (var teacher = await server.AsAsync("teacher"))
        {
            using var listed = await admin.PutAsync($"/api/classes/{classId}/staff/{await SaitoHost.UserIdAsync(teacher)}", null, Ct);
            listed.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        }

        using (var thresholds = await admin.PutAsJsonAsync($"/api/owners/{students[0]}/alert-thresholds", new { restingHeartRate = 80 }, Ct))
        {
            thresholds.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        for (int i = 0; i < CheckedIn; i++)
        {
            string serial = $"wrist-{i}";
            await PublishAsync(server, $"saito/hub-1/{serial}/biosensor", $$"""{"ts":"{{Ts(DateTimeOffset.UtcNow.AddMinutes(-1))}}","hr":70}""");
            var fresh = await admin.GetFromJsonAsync<JsonElement>("/api/devices?status=new", Ct);
            int deviceId = fresh.GetProperty("items").EnumerateArray().Single(d => d.GetProperty("serial").GetString() == serial).GetProperty("id").GetInt32();
            await CreateAsync(admin, "/api/assignments", new { deviceId, ownerId = students[i] });
            await PublishAsync(server, "saito/hub-1/fp-1/checkin", $$"""{"owner":{{students[i]}}}""");
        }

        return (classId, students);
    }
}

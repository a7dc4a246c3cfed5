using System.Collections.Concurrent;
using Microsoft.Playwright;
using Saito.Server.Tests.Dashboard;
using static Microsoft.Playwright.Assertions;

namespace Saito.Server.Tests.Api;

/// <summary>
/// Issue 33: the API reference at <c>/scalar</c> in a real browser. It loaded Scalar's fonts from the internet and showed
/// the vendor's buttons (Ask AI, Generate SDK, the client's); a school's box may be offline, and its staff's reading
/// should not be announced to anybody.
/// </summary>
public sealed class ApiReferencePageTests(ITestOutputHelper output)
{
    /// <summary>
    /// Scalar's own offers, none of which may show: its AI chat, SDK generation, its API client, its MCP and developer
    /// tools. The sidebar's "Powered by Scalar" stays: a plain link, credit to the project, that loads nothing unless clicked.
    /// </summary>
    private static readonly string[] VendorTexts = ["Ask AI", "Generate SDK", "Open API Client", "Open in API Client", "Developer Tools", "MCP"];

    [Fact]
    public async Task The_api_reference_requests_nothing_beyond_this_machine_and_shows_no_vendor_buttons()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        await using var browser = await Browser.LaunchAsync();
        var page = await browser.NewPageAsync(server.BaseAddress, 1024, 768);
        var requests = new ConcurrentQueue<string>();
        page.Context.Request += (_, request) => requests.Enqueue(request.Url);

        // Anyone on this machine may read it (the docs policy); the reference has rendered once the first operation's example shows.
        await page.GotoAsync("/scalar");
        await Expect(page.GetByText("Saito API").First).ToBeVisibleAsync(new() { Timeout = 30_000 });
        await Expect(page.GetByText("/api/auth/login").First).ToBeVisibleAsync(new() { Timeout = 30_000 });
        await page.WaitForLoadStateAsync(LoadState.NetworkIdle);
        string screenshot = await Browser.ScreenshotAsync(page, "api-reference-1024x768", fullPage: false);
        output.WriteLine($"screenshot: {screenshot}");

        var seen = requests.ToList();
        output.WriteLine($"{seen.Count} requests:");
        foreach (string url in seen)
        {
            output.WriteLine(url);
        }

        seen.ShouldContain(url => url.Contains("/openapi/v1.json", StringComparison.Ordinal), "the page loaded the API's description");
        seen.Where(url => !StaysOnThisMachine(url)).ShouldBeEmpty("every request stays on loopback");

        string text = await page.Locator("body").InnerTextAsync();
        foreach (string vendor in VendorTexts)
        {
            text.ShouldNotContain(vendor, Case.Insensitive, $"the page offers Scalar's '{vendor}'");
        }
    }

    /// <summary>A request to a loopback address, or one that makes no network request at all (<c>data:</c>, <c>blob:</c>, <c>about:</c>).</summary>
    private static bool StaysOnThisMachine(string url)
    {
        var uri = new Uri(url);
        if (uri.Scheme is "data" or "blob" or "about")
        {
            return true;
        }

        return uri.IsLoopback || (IPAddress.TryParse(uri.Host.Trim('[', ']'), out var address) && IPAddress.IsLoopback(address));
    }
}

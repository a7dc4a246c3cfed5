
namespace Saito.Server.Tests.Dashboard;

/// <summary>Every page has an icon, so no browser logs a 404 for /favicon.ico on each page it opens.</summary>
public sealed class PageIconTests
{
    [Fact]
    public async Task Favicon_ico_leads_anyone_to_the_icon_and_every_page_links_it()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var anonymous = new HttpClient(new HttpClientHandler { AllowAutoRedirect = false }) { BaseAddress = server.BaseAddress };

        using var ico = await anonymous.GetAsync(new Uri("/favicon.ico", UriKind.Relative), TestContext.Current.CancellationToken);
        ico.StatusCode.ShouldBe(HttpStatusCode.MovedPermanently);
        ico.Headers.Location!.OriginalString.ShouldBe("/static/favicon.svg");

        using var svg = await anonymous.GetAsync(new Uri("/static/favicon.svg", UriKind.Relative), TestContext.Current.CancellationToken);
        svg.StatusCode.ShouldBe(HttpStatusCode.OK);
        svg.Content.Headers.ContentType!.MediaType.ShouldBe("image/svg+xml");
        (await svg.Content.ReadAsStringAsync(TestContext.Current.CancellationToken)).ShouldStartWith("<svg");

        string html = await anonymous.GetStringAsync(new Uri("/login", UriKind.Relative), TestContext.Current.CancellationToken);
        html.ShouldContain("<link rel=\"icon\" href=\"/static/favicon.svg\"");
    }
}

using Microsoft.Playwright;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// Debian's chromium driven by Playwright (its own browser download cannot work here), headless, one fresh context per
/// member of staff. Screenshots go to TestResults/screenshots at the repository root, kept as CI artifacts.
/// </summary>
public sealed class Browser : IAsyncDisposable
{
    public const string ChromiumPath = "/usr/bin/chromium";

    private readonly IPlaywright _playwright;

    private Browser(IPlaywright playwright, IBrowser browser)
    {
        _playwright = playwright;
        Chromium = browser;
    }

    public IBrowser Chromium { get; }

    public static string ScreenshotFolder { get; } = Directory.CreateDirectory(Path.Combine(RepositoryRoot.Path, "TestResults", "screenshots")).FullName;

    public static async Task<Browser> LaunchAsync()
    {
        if (!File.Exists(ChromiumPath))
        {
            throw new InvalidOperationException($"No chromium at {ChromiumPath}: install it with `apt-get install chromium` (scripts/test.sh does).");
        }

        var playwright = await Playwright.CreateAsync();
        var browser = await playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
        {
            ExecutablePath = ChromiumPath,
            Headless = true,
            Args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
        });
        return new Browser(playwright, browser);
    }

    /// <summary>A page in a context of its own (its own cookies); tablet-sized unless told.</summary>
    public async Task<IPage> NewPageAsync(Uri baseAddress, int width = 1280, int height = 800)
    {
        var context = await Chromium.NewContextAsync(new BrowserNewContextOptions
        {
            BaseURL = baseAddress.ToString(),
            ViewportSize = new ViewportSize { Width = width, Height = height },
        });
        context.SetDefaultTimeout(30_000);
        return await context.NewPageAsync();
    }

    public static async Task SignInAsync(IPage page, string userName, string password)
    {
        ArgumentNullException.ThrowIfNull(page);
        await page.GotoAsync("/login");
        await page.FillAsync("input[name=userName]", userName);
        await page.FillAsync("input[name=password]", password);
        await page.ClickAsync("button[type=submit]");
        // Signed in once the browser has navigated away from /login. Not "load" as well: a dashboard's load event can
        // wait on its scripts for long on a busy machine (the full suite timed out here at 30 s, and at 60 s), and what
        // a test does next waits for the elements it needs. Not WaitForURLAsync either: when the URL already matched, it
        // went on to Frame.WaitForLoadStateAsync and timed out there at 60 s once. page.Url follows each committed navigation.
        var deadline = DateTime.UtcNow.AddSeconds(60);
        while (page.Url.Contains("/login", StringComparison.Ordinal))
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Signing in as {userName}: still on {page.Url} after 60 s");
            }

            await Task.Delay(50);
        }
    }

    /// <summary>The whole page, or only what the viewport shows (<paramref name="fullPage"/> false); returns the file's path.</summary>
    public static async Task<string> ScreenshotAsync(IPage page, string name, bool fullPage = true)
    {
        ArgumentNullException.ThrowIfNull(page);
        string path = Path.Combine(ScreenshotFolder, name + ".png");
        await page.ScreenshotAsync(new PageScreenshotOptions { Path = path, FullPage = fullPage });
        return path;
    }

    public async ValueTask DisposeAsync()
    {
        await Chromium.DisposeAsync();
        _playwright.Dispose();
    }
}

using System.Globalization;
using Microsoft.Playwright;

namespace Saito.LoadTest.Dashboard;

/// <summary>
/// N dashboards: one headless chromium (Debian's, <c>/usr/bin/chromium</c>: Playwright's own download cannot work
/// here), a context per dashboard (its own cookies, as N tablets would have), each signed in at <c>/login</c> and on
/// the live class page until it says <c>#live[data-ready=true]</c>. Each page keeps <c>window.saitoTileLatency</c>:
/// ms from a biosensor reading's <c>ts</c> to the moment its tile was rendered with it (DOM updated, not painted).
/// Background throttling is off: each dashboard stands for a tablet with the page in front.
/// </summary>
internal sealed class DashboardBrowsers : IAsyncDisposable
{
    public const string ChromiumPath = "/usr/bin/chromium";

    private readonly IPlaywright _playwright;
    private readonly IBrowser _browser;
    private readonly List<IBrowserContext> _contexts = [];
    private readonly List<IPage> _pages = [];

    private DashboardBrowsers(IPlaywright playwright, IBrowser browser)
    {
        _playwright = playwright;
        _browser = browser;
    }

    public int Count => _pages.Count;

    /// <summary>
    /// Each page's main-thread lag: a 50 ms interval timer's lateness, in ms (a page busy rendering, or starved of CPU,
    /// runs it late; so are the tile updates waiting behind it).
    /// </summary>
    private const string LagScript = """
        window.saitoLag = [];
        (() => {
          let last = performance.now();
          setInterval(() => {
            const now = performance.now();
            if (window.saitoLag.length < 100000) window.saitoLag.push(Math.max(0, now - last - 50));
            last = now;
          }, 50);
        })();
        """;

    /// <summary>Empties the page's arrays and notes, beside each latency, when it was recorded (epoch ms) in <c>window.saitoTileAt</c>.</summary>
    private const string ResetScript = """
        () => {
          const a = window.saitoTileLatency;
          a.length = 0;
          window.saitoTileAt = [];
          window.saitoLag.length = 0;
          if (!a.saitoTimed) {
            a.saitoTimed = true;
            a.push = function (v) { window.saitoTileAt.push(Date.now()); return Array.prototype.push.call(this, v); };
          }
        }
        """;

    public static async Task<DashboardBrowsers> OpenAsync(Uri baseAddress, int classId, int dashboards, string userName, string password, CancellationToken token)
    {
        if (!File.Exists(ChromiumPath))
        {
            throw new InvalidOperationException($"No chromium at {ChromiumPath}: install it with `apt-get install chromium`.");
        }

        var playwright = await Playwright.CreateAsync();
        IBrowser browser;
        try
        {
            browser = await playwright.Chromium.LaunchAsync(new BrowserTypeLaunchOptions
            {
                ExecutablePath = ChromiumPath,
                Headless = true,
                Args =
                [
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run",
                    "--disable-background-timer-throttling", "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows",
                ],
            });
        }
        catch
        {
            playwright.Dispose();
            throw;
        }

        var browsers = new DashboardBrowsers(playwright, browser);
        try
        {
            for (int i = 0; i < dashboards; i++)
            {
                token.ThrowIfCancellationRequested();
                var context = await browser.NewContextAsync(new BrowserNewContextOptions
                {
                    BaseURL = baseAddress.ToString(),
                    ViewportSize = new ViewportSize { Width = 1280, Height = 800 },
                });
                browsers._contexts.Add(context);
                await context.AddInitScriptAsync(LagScript);
                context.SetDefaultTimeout(60_000);
                var page = await context.NewPageAsync();
                browsers._pages.Add(page);
                await page.GotoAsync("/login");
                await page.FillAsync("input[name=userName]", userName);
                await page.FillAsync("input[name=password]", password);
                await page.ClickAsync("button[type=submit]");
                await page.WaitForURLAsync(url => !url.Contains("/login", StringComparison.Ordinal));
                await page.GotoAsync(FormattableString.Invariant($"/classes/{classId}/live"));
                await page.WaitForSelectorAsync("#live[data-ready=true]", new PageWaitForSelectorOptions { State = WaitForSelectorState.Attached });
            }

            return browsers;
        }
        catch
        {
            await browsers.DisposeAsync();
            throw;
        }
    }

    /// <summary>Empties every page's latency array (what the first render of old tiles put there is not this run's).</summary>
    public async Task ResetAsync()
    {
        foreach (var page in _pages)
        {
            await page.EvaluateAsync(ResetScript);
        }
    }

    /// <summary>Each page: its latencies (ms) and how many tiles show vitals taken at or after <paramref name="since"/>.</summary>
    public async Task<List<PageLatency>> CollectAsync(DateTimeOffset since)
    {
        var pages = new List<PageLatency>(_pages.Count);
        string sinceText = since.UtcDateTime.ToString("O", CultureInfo.InvariantCulture);
        foreach (var page in _pages)
        {
            double[] latency = await page.EvaluateAsync<double[]>("() => Array.from(window.saitoTileLatency)");
            double[] at = await page.EvaluateAsync<double[]>("() => Array.from(window.saitoTileAt ?? [])");
            double[] lag = await page.EvaluateAsync<double[]>("() => Array.from(window.saitoLag ?? [])");
            int tiles = await page.EvaluateAsync<int>("() => document.querySelectorAll('#tiles .tile').length");
            int updated = await page.EvaluateAsync<int>(
                "since => [...document.querySelectorAll('#tiles .tile')].filter(t => t.dataset.vitalsAt && Date.parse(t.dataset.vitalsAt) >= Date.parse(since)).length",
                sinceText);
            string status = await page.EvaluateAsync<string>("() => document.getElementById('status')?.textContent ?? ''");
            bool behind = await page.EvaluateAsync<bool>("() => !(document.getElementById('behind')?.hidden ?? true)");
            pages.Add(new PageLatency(latency, at, lag, tiles, updated, status, behind));
        }

        return pages;
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var context in _contexts)
        {
            await context.CloseAsync();
        }

        await _browser.DisposeAsync();
        _playwright.Dispose();
    }
}

/// <summary>
/// One dashboard's view of a run: tile latencies (ms) and when each was recorded (epoch ms), the main thread's lag
/// samples (ms), tiles on the page, tiles showing this run's vitals, its status line.
/// </summary>
internal sealed record PageLatency(double[] LatencyMs, double[] AtMs, double[] LagMs, int Tiles, int TilesUpdated, string Status, bool Behind);

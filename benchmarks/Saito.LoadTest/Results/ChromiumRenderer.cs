using System.Diagnostics;
using System.Globalization;
using System.Text;

namespace Saito.LoadTest.Results;

/// <summary>
/// Screenshots a local chart page into a PNG with headless Chromium (one process per chart, killed with its children
/// when it overruns), and checks the result: the page said it drew its chart, and the PNG has the expected size and
/// is not blank.
/// </summary>
internal sealed class ChromiumRenderer(string executable, TimeSpan timeout)
{
    public const string InstallCommand = "apt-get install chromium";

    private static readonly string[] Names = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

    public string Executable { get; } = executable;

    /// <summary>The configured executable when it exists, else the first of chromium, chromium-browser, google-chrome on the PATH.</summary>
    public static (string? Executable, string? Problem) Find(string? configured)
    {
        if (configured is not null)
        {
            string? found = File.Exists(configured) ? configured : OnPath(configured);
            return found is not null
                ? (found, null)
                : (null, $"Chromium was not found at {configured} (from {ReportOptions.ChromiumVariable} or the options), so no chart PNGs were drawn. Install it with: {InstallCommand}");
        }

        foreach (string name in Names)
        {
            if (OnPath(name) is { } path)
            {
                return (path, null);
            }
        }

        return (null, $"Chromium is not installed (none of {string.Join(", ", Names)} on the PATH), so no chart PNGs were drawn. Install it with: {InstallCommand} " +
            $"(or set {ReportOptions.ChromiumVariable} to a Chromium or Chrome executable).");
    }

    /// <summary>
    /// Screenshots <paramref name="page"/> into <paramref name="png"/>; returns null when it worked, else what went wrong
    /// (and then no PNG is left behind).
    /// </summary>
    public async Task<string?> ScreenshotAsync(string page, string png, int width, int height, string profileDir, CancellationToken token)
    {
        // Chromium resolves a relative --screenshot path against its own working directory; ours may differ in intent.
        png = Path.GetFullPath(png);
        File.Delete(png);
        string? problem = null;
        try
        {
            problem = await CaptureAsync(page, png, width, height, profileDir, token);
            return problem;
        }
        finally
        {
            if (problem is not null || token.IsCancellationRequested)
            {
                File.Delete(png);
            }
        }
    }

    private async Task<string?> CaptureAsync(string page, string png, int width, int height, string profileDir, CancellationToken token)
    {
        var start = new ProcessStartInfo(Executable)
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            StandardOutputEncoding = Encoding.UTF8,
            StandardErrorEncoding = Encoding.UTF8,
        };

        // --headless is the new headless mode since Chromium 132 (the old one left the browser binary).
        // --no-sandbox: Chromium refuses to run as root with its sandbox, and the page is our own local file.
        // --enable-logging=stderr --log-level=0 puts console messages on stderr: that is how the page says it drew.
        string[] arguments =
        [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--mute-audio", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--force-device-scale-factor=1", "--force-color-profile=srgb",
            string.Create(CultureInfo.InvariantCulture, $"--window-size={width},{height}"),
            "--user-data-dir=" + profileDir,
            "--enable-logging=stderr", "--log-level=0",
            "--screenshot=" + png,
            new Uri(Path.GetFullPath(page)).AbsoluteUri,
        ];
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var process = new Process { StartInfo = start };
        var log = new StringBuilder();
        process.OutputDataReceived += (_, e) => Collect(log, e.Data);
        process.ErrorDataReceived += (_, e) => Collect(log, e.Data);
        var watch = Stopwatch.StartNew();
        if (!process.Start())
        {
            return $"could not start {Executable}";
        }

        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
        using var limit = CancellationTokenSource.CreateLinkedTokenSource(token);
        limit.CancelAfter(timeout);
        try
        {
            await process.WaitForExitAsync(limit.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            await process.WaitForExitAsync(CancellationToken.None);
            token.ThrowIfCancellationRequested();
            return string.Create(CultureInfo.InvariantCulture, $"Chromium did not finish within {timeout.TotalSeconds:0.#} s and was killed");
        }

        string output;
        lock (log)
        {
            output = log.ToString();
        }

        var failed = output.Split('\n').Where(l => l.Contains(ReportHtml.FailedMarker, StringComparison.Ordinal) || l.Contains("Uncaught", StringComparison.Ordinal)).ToList();
        if (failed.Count > 0)
        {
            return "the chart page failed in Chromium: " + string.Join(" | ", failed.Select(l => l.Trim()));
        }

        if (process.ExitCode != 0 || !File.Exists(png))
        {
            return string.Create(CultureInfo.InvariantCulture, $"Chromium exited with code {process.ExitCode} after {watch.Elapsed.TotalSeconds:0.0} s without a screenshot: {Tail(output)}");
        }

        if (!output.Contains(ReportHtml.DrawnMarker, StringComparison.Ordinal))
        {
            return $"the chart page never said it drew its chart (no {ReportHtml.DrawnMarker} in Chromium's log): {Tail(output)}";
        }

        var image = PngImage.Read(png);
        if (image.Width != width || image.Height != height)
        {
            return string.Create(CultureInfo.InvariantCulture, $"the screenshot is {image.Width}x{image.Height}, not {width}x{height}");
        }

        if (image.DistinctColours(limit: 16) < 16)
        {
            return "the screenshot is blank (fewer than 16 colours)";
        }

        return null;
    }

    private static void Collect(StringBuilder log, string? line)
    {
        if (line is null)
        {
            return;
        }

        lock (log)
        {
            log.Append(line).Append('\n');
        }
    }

    private static string Tail(string output)
    {
        // Chromium logs D-Bus complaints in containers; they say nothing about the chart.
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Where(l => !l.Contains("dbus", StringComparison.OrdinalIgnoreCase))
            .TakeLast(5);
        return string.Join(" | ", lines);
    }

    private static string? OnPath(string name)
    {
        if (name.Contains(Path.DirectorySeparatorChar, StringComparison.Ordinal))
        {
            return null;
        }

        foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries))
        {
            string candidate = Path.Combine(dir, name);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }

        return null;
    }
}

using Saito.LoadTest.Results;

namespace Saito.LoadTest.Tests.Results;

/// <summary>
/// The report tests draw real charts: they fail, never skip, when chart.js or Chromium is missing, and say what to
/// run (scripts/test.sh installs both).
/// </summary>
internal static class RequireInstalled
{
    public static ReportOptions ChartLibrary()
    {
        var options = ReportOptions.FromEnvironment();
        var (_, problem) = Saito.LoadTest.Results.ChartLibrary.Load(options.PackageDir);
        if (problem is not null)
        {
            Assert.Fail($"This test draws real charts and needs chart.js (scripts/test.sh installs it): {problem}");
        }

        return options;
    }

    public static ReportOptions ChartLibraryAndChromium()
    {
        var options = ChartLibrary();
        var (_, problem) = ChromiumRenderer.Find(options.Chromium);
        if (problem is not null)
        {
            Assert.Fail($"This test renders chart PNGs and needs Chromium (scripts/test.sh installs it): {problem}");
        }

        return options;
    }
}

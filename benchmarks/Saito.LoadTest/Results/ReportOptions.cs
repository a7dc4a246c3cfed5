namespace Saito.LoadTest.Results;

/// <summary>
/// Where the report finds what draws its charts: the npm folder holding chart.js and the Chromium that turns charts
/// into PNGs. Defaults come from the environment (<c>SAITO_REPORT_PACKAGE</c>, <c>SAITO_CHROMIUM</c>), then from the
/// repository the tool runs from and the PATH.
/// </summary>
internal sealed record ReportOptions
{
    /// <summary>The repository-relative folder of the npm package that pins chart.js.</summary>
    public const string PackageFolder = "benchmarks/Saito.LoadTest/report";

    public const string PackageVariable = "SAITO_REPORT_PACKAGE";

    public const string ChromiumVariable = "SAITO_CHROMIUM";

    /// <summary>The folder whose node_modules/chart.js the report inlines; null when the repository was not found.</summary>
    public string? PackageDir { get; init; }

    /// <summary>The Chromium executable; null to look for chromium, chromium-browser, google-chrome on the PATH.</summary>
    public string? Chromium { get; init; }

    /// <summary>False to write report.html without asking Chromium for PNGs.</summary>
    public bool RenderPngs { get; init; } = true;

    /// <summary>How long one chart may take in Chromium before the process tree is killed.</summary>
    public TimeSpan RenderTimeout { get; init; } = TimeSpan.FromSeconds(60);

    /// <summary>The PNGs' width: ReportCharts fits the labels under a comparison's bars into 1000 pixels, report.html's charts are that wide too.</summary>
    public int ChartWidth { get; init; } = 1000;

    public int ChartHeight { get; init; } = 600;

    public static ReportOptions FromEnvironment() => new()
    {
        PackageDir = NonEmpty(Environment.GetEnvironmentVariable(PackageVariable)) ?? DefaultPackageDir(),
        Chromium = NonEmpty(Environment.GetEnvironmentVariable(ChromiumVariable)),
    };

    /// <summary>benchmarks/Saito.LoadTest/report of the repository the tool runs from (the folder above it with Saito.sln).</summary>
    public static string? DefaultPackageDir()
    {
        var dir = new DirectoryInfo(AppContext.BaseDirectory);
        while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "Saito.sln")))
        {
            dir = dir.Parent;
        }

        return dir is null ? null : Path.Combine(dir.FullName, PackageFolder.Replace('/', Path.DirectorySeparatorChar));
    }

    private static string? NonEmpty(string? value) => string.IsNullOrWhiteSpace(value) ? null : value;
}

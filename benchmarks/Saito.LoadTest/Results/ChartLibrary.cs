using System.Text.Json;

namespace Saito.LoadTest.Results;

/// <summary>
/// Chart.js's UMD bundle as installed by <c>npm ci --prefix benchmarks/Saito.LoadTest/report</c>, read once so that
/// report.html and every chart page carry it inline and work offline.
/// </summary>
internal sealed record ChartLibrary(string Script, string Version, string Path)
{
    public const string InstallCommand = "npm ci --prefix " + ReportOptions.PackageFolder;

    /// <summary>The library under <paramref name="packageDir"/>/node_modules/chart.js, or why there is none and what to run.</summary>
    public static (ChartLibrary? Library, string? Problem) Load(string? packageDir)
    {
        if (packageDir is null)
        {
            return (null, $"Saito.sln was not found above {AppContext.BaseDirectory}, so the chart library could not be found; " +
                $"set {ReportOptions.PackageVariable} to the folder holding node_modules/chart.js (in the repository: {ReportOptions.PackageFolder}, " +
                $"installed with: {InstallCommand}).");
        }

        string package = System.IO.Path.Combine(packageDir, "node_modules", "chart.js");
        string bundle = System.IO.Path.Combine(package, "dist", "chart.umd.js");
        if (!File.Exists(bundle))
        {
            return (null, $"chart.js is not installed ({bundle} is missing). From the repository root run: {InstallCommand}");
        }

        string version = "unknown";
        string manifest = System.IO.Path.Combine(package, "package.json");
        if (File.Exists(manifest))
        {
            using var json = JsonDocument.Parse(File.ReadAllText(manifest));
            if (json.RootElement.TryGetProperty("version", out var v) && v.ValueKind == JsonValueKind.String)
            {
                version = v.GetString()!;
            }
        }

        // Inside <script> only "</script" ends the element; in a minified bundle it can only sit in a string, regex or
        // comment, where "<\/" means the same thing.
        string script = File.ReadAllText(bundle).Replace("</script", "<\\/script", StringComparison.OrdinalIgnoreCase);
        return (new ChartLibrary(script, version, bundle), null);
    }
}

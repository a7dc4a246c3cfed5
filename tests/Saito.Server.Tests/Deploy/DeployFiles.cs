using System.Text.RegularExpressions;

namespace Saito.Server.Tests.Deploy;

/// <summary>A Saito setting written in a file: the key as configuration spells it (<c>Section:Key</c>), as written, and where.</summary>
internal sealed record SettingUse(string Key, string Written, string File, int Line)
{
    public override string ToString() => $"{File}:{Line}: {Written}";
}

/// <summary>The files in deploy/ (and the operations guide), and the Saito settings written in them.</summary>
internal static partial class DeployFiles
{
    public static string Root => RepositoryRoot.Path;

    public static string DeployFolder => Path.Combine(Root, "deploy");

    public static IReadOnlyList<string> ComposeFiles =>
        Directory.GetFiles(DeployFolder, "compose*.yaml").Order(StringComparer.Ordinal).ToList();

    public static IReadOnlyList<string> SystemdUnits =>
        Directory.GetFiles(DeployFolder).Where(f => f.EndsWith(".service", StringComparison.Ordinal) || f.EndsWith(".timer", StringComparison.Ordinal))
            .Order(StringComparer.Ordinal).ToList();

    /// <summary>Every file whose Saito settings are checked: all of deploy/ (comments too: a commented example is pasted as often as a line) and docs/operations.md.</summary>
    public static IReadOnlyList<string> FilesWithSettings =>
        Directory.GetFiles(DeployFolder, "*", SearchOption.AllDirectories)
            .Append(Path.Combine(Root, "docs", "operations.md"))
            .Where(File.Exists)
            .Order(StringComparer.Ordinal).ToList();

    public static string Relative(string path) => Path.GetRelativePath(Root, path).Replace('\\', '/');

    /// <summary>
    /// <c>Saito__Section__Key</c> environment variables (compose files, systemd's <c>Environment=</c>, shell lines) and
    /// <c>--Section:Key=value</c> arguments in <paramref name="text"/>. The placeholders the docs use to describe the
    /// syntax (<c>Saito__Section__Key</c>, <c>--Section:Key=value</c>) are not settings.
    /// </summary>
    public static IEnumerable<SettingUse> SettingsIn(string text, string file)
    {
        string[] lines = text.Split('\n');
        for (int i = 0; i < lines.Length; i++)
        {
            foreach (Match match in EnvironmentVariable().Matches(lines[i]))
            {
                string key = match.Groups["key"].Value.Replace("__", ":", StringComparison.Ordinal);
                if (!IsPlaceholder(key))
                {
                    yield return new SettingUse(key, match.Value, file, i + 1);
                }
            }

            foreach (Match match in Argument().Matches(lines[i]))
            {
                string key = match.Groups["key"].Value;
                if (!IsPlaceholder(key))
                {
                    yield return new SettingUse(key, match.Value, file, i + 1);
                }
            }
        }
    }

    public static IEnumerable<SettingUse> SettingsIn(string path) => SettingsIn(File.ReadAllText(path), Relative(path));

    private static bool IsPlaceholder(string key) => key.Equals("Section:Key", StringComparison.Ordinal);

    [GeneratedRegex(@"\bSaito__(?<key>[A-Za-z0-9]+(?:__[A-Za-z0-9]+)+)")]
    private static partial Regex EnvironmentVariable();

    [GeneratedRegex(@"(?<![A-Za-z0-9-])--(?<key>[A-Za-z][A-Za-z0-9]*(?::[A-Za-z0-9]+)+)=")]
    private static partial Regex Argument();
}

using System.Text.RegularExpressions;

namespace Saito.Server.Tests.Deploy;

/// <summary>
/// The Saito settings in deploy/ (compose files, systemd units, their comments) and docs/operations.md are settings
/// Saito has, and the README's configuration table lists them: a misspelt key would otherwise be ignored by .NET's
/// configuration without a word, and the deployment would run on a default nobody chose.
/// </summary>
public sealed partial class DeploySettingsTests
{
    [Fact]
    public void The_catalogue_of_settings_comes_from_the_options_classes()
    {
        SaitoSettings.Sections.ShouldContain("Mqtt");
        SaitoSettings.Sections.ShouldContain("Mqtt:External");
        SaitoSettings.Sections.ShouldContain("Storage");
        SaitoSettings.Sections.ShouldContain("Archiver");
        SaitoSettings.Sections.ShouldContain("Auth");
    }

    [Theory]
    [InlineData("Mqtt:External:Host")]
    [InlineData("mqtt:external:clientid")] // .NET configuration compares keys without case
    [InlineData("Mqtt:Mode")]
    [InlineData("Mqtt:AllowAnonymous")]
    [InlineData("Storage:Sqlite:Synchronous")]
    [InlineData("Storage:MinFreeDiskMegabytes")] // DiskSpaceOptions, the second class bound to Storage
    [InlineData("Storage:FreeSpacePaths:0")]
    [InlineData("Archiver:Schedule:DailyAtUtc")]
    [InlineData("Notices:Smtp:Host")]
    [InlineData("Logging:LogLevel:Default")]
    public void A_setting_Saito_has_is_known(string key) => SaitoSettings.Problem(key).ShouldBeNull();

    [Theory]
    [InlineData("Mqtt:External:Hots", "has no setting 'Hots'")]
    [InlineData("Storage:HotPth", "has no setting 'HotPth'")]
    [InlineData("Mqtt:External", "holds settings rather than being one")]
    [InlineData("Mqtt:External:Port:Extra", "a single value with nothing below it")]
    [InlineData("Storage:EffectiveWriters", "computed, not a setting")]
    [InlineData("Storage:FreeSpacePaths", "set item by item")]
    [InlineData("Sotrage:Provider", "no options class is bound to a section")]
    public void A_misspelt_or_invented_setting_is_reported(string key, string why)
    {
        string? problem = SaitoSettings.Problem(key);

        problem.ShouldNotBeNull();
        problem.ShouldContain(why);
        problem.ShouldContain(key);
    }

    [Fact]
    public void A_misspelt_key_in_a_compose_file_a_unit_or_a_command_line_is_found_and_reported()
    {
        const string text = """
            services:
              saito:
                environment:
                  Saito__Mqtt__External__Hots: emqx
                  Saito__Mqtt__External__Host: emqx
            Environment=Saito__Mqtt__BindAdress=0.0.0.0
            dotnet Saito.Server.dll --Storage:Provdier=postgres --Storage:Provider=postgres --urls http://0.0.0.0:5000
            """;

        var problems = DeployFiles.SettingsIn(text, "example").Where(u => SaitoSettings.Problem(u.Key) is not null).Select(u => u.Key).ToList();

        problems.ShouldBe(["Mqtt:External:Hots", "Mqtt:BindAdress", "Storage:Provdier"]);
    }

    [Fact]
    public void Every_Saito_setting_in_deploy_and_the_operations_guide_is_one_Saito_has()
    {
        var uses = DeployFiles.FilesWithSettings.SelectMany(DeployFiles.SettingsIn).ToList();

        uses.Count.ShouldBeGreaterThan(20, "the scan finds the settings the compose files and units set");
        var problems = uses.Select(u => SaitoSettings.Problem(u.Key) is { } problem ? $"{u}: {problem}" : null).OfType<string>().ToList();
        problems.ShouldBeEmpty();
    }

    [Fact]
    public void Every_Saito_setting_in_deploy_is_in_the_README_configuration_table()
    {
        var documented = ReadmeConfigurationKeys();
        documented.Count.ShouldBeGreaterThan(50, "the README's configuration table is found and read");

        var missing = DeployFiles.FilesWithSettings.SelectMany(DeployFiles.SettingsIn)
            .Where(u => !documented.Contains(u.Key) && !u.Key.StartsWith("Logging:", StringComparison.OrdinalIgnoreCase))
            .Select(u => u.ToString()).ToList();
        missing.ShouldBeEmpty("a setting a deployment sets is one a reader of the README can look up");
    }

    /// <summary>
    /// The keys in the first column of the README's "Configuration reference" table. A cell lists a full key and then
    /// its siblings by their last segment: <c>`Mqtt:External:Host`, `Port`</c> is Mqtt:External:Host and Mqtt:External:Port.
    /// </summary>
    private static HashSet<string> ReadmeConfigurationKeys()
    {
        var keys = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        var lines = File.ReadAllLines(Path.Combine(DeployFiles.Root, "README.md"));
        int start = Array.FindIndex(lines, l => l.StartsWith("## Configuration reference", StringComparison.Ordinal));
        start.ShouldBeGreaterThanOrEqualTo(0, "README.md has a \"Configuration reference\" section");
        foreach (string line in lines.Skip(start + 1).SkipWhile(l => !l.StartsWith('|')).TakeWhile(l => l.StartsWith('|')))
        {
            string firstCell = line.Split('|', StringSplitOptions.None)[1];
            string? prefix = null;
            foreach (Match match in Backticked().Matches(firstCell))
            {
                string token = match.Groups[1].Value.TrimStart('-');
                int lastColon = token.LastIndexOf(':');
                if (lastColon > 0)
                {
                    keys.Add(token);
                    prefix = token[..lastColon];
                }
                else if (prefix is not null)
                {
                    keys.Add(prefix + ":" + token);
                }
            }
        }

        return keys;
    }

    [GeneratedRegex("`([^`]+)`")]
    private static partial Regex Backticked();
}

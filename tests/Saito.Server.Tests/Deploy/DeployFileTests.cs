using System.Diagnostics;
using System.Text.RegularExpressions;
using YamlDotNet.Core;
using YamlDotNet.RepresentationModel;

namespace Saito.Server.Tests.Deploy;

/// <summary>
/// deploy/'s compose files and systemd units, checked without a container engine or a systemd to run them: their
/// syntax (YamlDotNet; <c>docker-compose config</c> and <c>systemd-analyze verify</c> where installed), and the
/// shape the operations guide promises (two instances on one shared subscription, health checks behind every
/// <c>service_healthy</c>, data in the state directory).
/// </summary>
public sealed partial class DeployFileTests
{
    private static readonly string[] s_conditions = ["service_healthy", "service_completed_successfully", "service_started"];

    public static TheoryData<string> ComposeFiles() => [.. DeployFiles.ComposeFiles.Select(Path.GetFileName).OfType<string>()];

    [Fact]
    public void Deploy_has_the_two_compose_files()
    {
        DeployFiles.ComposeFiles.Select(Path.GetFileName).ShouldBe(["compose.postgres.yaml", "compose.sqlserver.yaml"]);
    }

    [Theory]
    [MemberData(nameof(ComposeFiles))]
    public void Every_dependency_waits_on_a_condition_and_every_awaited_health_has_a_check(string file)
    {
        var services = Services(file);

        foreach (var (name, service) in services)
        {
            if (Child(service, "ports") is not null)
            {
                Child(service, "healthcheck").ShouldNotBeNull($"{file}: {name} publishes ports, so it says when it is healthy");
            }

            if (Child(service, "depends_on") is not { } dependsOn)
            {
                continue;
            }

            var dependencies = dependsOn.ShouldBeOfType<YamlMappingNode>($"{file}: {name}'s depends_on names a condition for each service");
            foreach (var (dependency, spec) in dependencies.Children)
            {
                string target = Scalar(dependency);
                services.ShouldContainKey(target, $"{file}: {name} depends on {target}");
                string condition = Scalar(Child(spec, "condition").ShouldNotBeNull($"{file}: {name} -> {target} has a condition"));
                s_conditions.ShouldContain(condition);
                if (condition == "service_healthy")
                {
                    Child(services[target], "healthcheck").ShouldNotBeNull($"{file}: {name} waits for {target} to be healthy, so {target} has a health check");
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(ComposeFiles))]
    public void Two_Saito_instances_share_one_subscription_on_the_external_broker_and_the_archiver_runs_on_a_timer(string file)
    {
        var services = Services(file);
        var saito = services.Where(s => Environment(s.Value).GetValueOrDefault("Saito__Mqtt__Mode") == "external").ToList();

        saito.Count.ShouldBe(2, $"{file}: two Saito instances in external mode");
        var environments = saito.Select(s => Environment(s.Value)).ToList();
        var clientIds = environments.Select(e => e.GetValueOrDefault("Saito__Mqtt__External__ClientId")).ToList();
        clientIds.ShouldAllBe(id => !string.IsNullOrEmpty(id), "each instance has its own client id");
        clientIds.Distinct().Count().ShouldBe(2, "the broker keeps one session per client id");
        environments.Select(e => e.GetValueOrDefault("Saito__Mqtt__External__SharedGroup") ?? "saito").Distinct().ShouldHaveSingleItem();
        environments.ShouldAllBe(e => !string.IsNullOrEmpty(e.GetValueOrDefault("Saito__Mqtt__External__SharedGroup") ?? "saito"));
        foreach (var environment in environments)
        {
            services.ShouldContainKey(environment["Saito__Mqtt__External__Host"], $"{file}: the broker is a service of the file");
            environment["Saito__Auth__KeysPath"].ShouldStartWith("/var/lib/saito/", customMessage: "both instances share the sign-in keys on the mounted volume");
        }

        saito.ShouldAllBe(s => Child(s.Value, "healthcheck") != null);
        services.ShouldContainKey("archiver");
        var archiver = services["archiver"];
        string.Join(' ', Sequence(Child(archiver, "entrypoint"))).ShouldBe("saito-archive-loop");
        Sequence(Child(archiver, "command")).ShouldContain("--older-than");
        Environment(archiver).ShouldContainKey("Saito__Archiver__ExportDirectory");
    }

    [Theory]
    [MemberData(nameof(ComposeFiles))]
    public void The_archiver_finds_the_instances_database_and_is_given_only_settings_it_reads(string file)
    {
        var services = Services(file);
        var archiver = Environment(services["archiver"]).Where(kv => kv.Key.StartsWith("Saito__", StringComparison.Ordinal)).ToDictionary();

        // saito-archiver binds the Storage and Archiver sections only (src/Saito.Archiver/ArchiverConfiguration.cs):
        // anything else given to it would be a setting that silently does nothing.
        archiver.Keys.ShouldAllBe(k => k.StartsWith("Saito__Storage__", StringComparison.Ordinal) || k.StartsWith("Saito__Archiver__", StringComparison.Ordinal));
        foreach (string instance in new[] { "saito-1", "saito-2" })
        {
            var storage = Environment(services[instance]).Where(kv => kv.Key.StartsWith("Saito__Storage__", StringComparison.Ordinal)).ToDictionary();
            storage.ShouldBe(archiver.Where(kv => kv.Key.StartsWith("Saito__Storage__", StringComparison.Ordinal)).ToDictionary(),
                ignoreOrder: true, customMessage: $"{file}: the archiver moves the readings {instance} writes, so both name the same database and tiers");
        }
    }

    [Theory]
    [MemberData(nameof(ComposeFiles))]
    public void Every_variable_a_compose_file_reads_is_in_the_env_example_or_has_a_default(string file)
    {
        string example = File.ReadAllText(Path.Combine(DeployFiles.DeployFolder, ".env.example"));
        string text = File.ReadAllText(Path.Combine(DeployFiles.DeployFolder, file));

        var missing = ComposeVariable().Matches(text)
            .Where(m => !m.Groups["rest"].Value.StartsWith(":-", StringComparison.Ordinal) && !m.Groups["rest"].Value.StartsWith('-'))
            .Select(m => m.Groups["name"].Value)
            .Where(name => !Regex.IsMatch(example, $"^{name}=", RegexOptions.Multiline))
            .Distinct().ToList();
        missing.ShouldBeEmpty($"{file} reads these without a default, so deploy/.env.example sets them");
    }

    [Theory]
    [MemberData(nameof(ComposeFiles))]
    public async Task Docker_compose_accepts_the_file(string file)
    {
        string? program = FindProgram("docker-compose");
        Assert.SkipWhen(program is null, "docker-compose is not installed (Debian: apt-get install docker-compose); the YAML checks above still ran");

        var (code, output) = await RunAsync(program!, DeployFiles.DeployFolder, "-f", file, "--env-file", ".env.example", "config", "-q");

        code.ShouldBe(0, $"docker-compose -f {file} config -q said: {output}");
        output.Trim().ShouldBeEmpty();
    }

    [Fact]
    public void Both_units_run_as_one_dynamic_user_and_keep_their_files_in_the_state_directory()
    {
        foreach (string unit in new[] { "saito.service", "saito-archiver.service" })
        {
            var service = UnitSection(unit, "Service");
            service.ShouldContain("DynamicUser=yes");
            service.ShouldContain("StateDirectory=saito", customMessage: $"{unit}: STATE_DIRECTORY is where Saito keeps its files");
            service.ShouldContain("User=saito", customMessage: $"{unit}: the same user name, so the server and the archiver share the dynamic user and its files");
            service.Where(l => l.StartsWith("Environment=", StringComparison.Ordinal)).ShouldAllBe(
                l => !l.Contains("/var/lib/", StringComparison.Ordinal), $"{unit}: no path into the state directory is needed, Saito finds it");
        }

        UnitSection("saito-archiver.timer", "Timer").ShouldContain(l => l.StartsWith("OnCalendar=", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Systemd_analyze_verifies_the_units()
    {
        string? program = FindProgram("systemd-analyze");
        Assert.SkipWhen(program is null, "systemd-analyze is not installed; the settings in the units are still checked by DeploySettingsTests");
        Assert.SkipWhen(!File.Exists("/usr/bin/dotnet"), "the units start /usr/bin/dotnet, which is not on this machine, and systemd-analyze verify checks that ExecStart exists");

        // verify reads the units beside each other (the timer names its service), from a folder of their own.
        string folder = Directory.CreateTempSubdirectory("saito-units-").FullName;
        try
        {
            foreach (string unit in DeployFiles.SystemdUnits)
            {
                File.Copy(unit, Path.Combine(folder, Path.GetFileName(unit)));
            }

            var units = DeployFiles.SystemdUnits.Select(u => Path.Combine(folder, Path.GetFileName(u))).ToArray();
            var (code, output) = await RunAsync(program!, folder, ["verify", .. units]);

            code.ShouldBe(0, output);
            // Warnings (an unknown key, a bad value) do not change the exit code: any line about our units is one.
            output.Split('\n').Where(l => DeployFiles.SystemdUnits.Any(u => l.Contains(Path.GetFileName(u), StringComparison.Ordinal))).ShouldBeEmpty();
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    private static Dictionary<string, YamlNode> Services(string file)
    {
        var yaml = new YamlStream();
        using (var reader = new StreamReader(Path.Combine(DeployFiles.DeployFolder, file)))
        {
            // MergingParser applies YAML merge keys (<<: *saito), as docker compose does.
            yaml.Load(new MergingParser(new Parser(reader)));
        }

        var root = yaml.Documents.ShouldHaveSingleItem().RootNode.ShouldBeOfType<YamlMappingNode>();
        var services = Child(root, "services").ShouldBeOfType<YamlMappingNode>($"{file} has services");
        return services.Children.ToDictionary(kv => Scalar(kv.Key), kv => kv.Value);
    }

    private static YamlNode? Child(YamlNode node, string key) =>
        node is YamlMappingNode mapping && mapping.Children.TryGetValue(new YamlScalarNode(key), out var value) ? value : null;

    private static string Scalar(YamlNode node) => node.ShouldBeOfType<YamlScalarNode>().Value ?? "";

    private static List<string> Sequence(YamlNode? node) => node switch
    {
        YamlSequenceNode sequence => sequence.Children.Select(Scalar).ToList(),
        YamlScalarNode scalar => [.. (scalar.Value ?? "").Split(' ', StringSplitOptions.RemoveEmptyEntries)],
        _ => [],
    };

    /// <summary>A service's environment, from either of compose's forms (a mapping, or a list of NAME=value).</summary>
    private static Dictionary<string, string> Environment(YamlNode service) => Child(service, "environment") switch
    {
        YamlMappingNode mapping => mapping.Children.ToDictionary(kv => Scalar(kv.Key), kv => Scalar(kv.Value)),
        YamlSequenceNode list => list.Children.Select(Scalar).Select(s => s.Split('=', 2)).ToDictionary(p => p[0], p => p.Length > 1 ? p[1] : ""),
        _ => [],
    };

    private static List<string> UnitSection(string unit, string section)
    {
        var lines = File.ReadAllLines(Path.Combine(DeployFiles.DeployFolder, unit)).Select(l => l.Trim()).ToList();
        int start = lines.IndexOf($"[{section}]");
        start.ShouldBeGreaterThanOrEqualTo(0, $"{unit} has a [{section}] section");
        return lines.Skip(start + 1).TakeWhile(l => !l.StartsWith('[')).Where(l => l.Length > 0 && !l.StartsWith('#')).ToList();
    }

    private static string? FindProgram(string name) =>
        (System.Environment.GetEnvironmentVariable("PATH") ?? "").Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries)
            .Select(directory => Path.Combine(directory, name)).FirstOrDefault(File.Exists);

    private static async Task<(int Code, string Output)> RunAsync(string program, string workingDirectory, params string[] arguments)
    {
        var start = new ProcessStartInfo(program) { WorkingDirectory = workingDirectory, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        timeout.CancelAfter(TimeSpan.FromMinutes(1));
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"could not start {program}");
        var stdout = process.StandardOutput.ReadToEndAsync(timeout.Token);
        var stderr = process.StandardError.ReadToEndAsync(timeout.Token);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }

        return (process.ExitCode, await stdout + await stderr);
    }

    /// <summary><c>${NAME}</c>, <c>${NAME:-default}</c>, <c>${NAME:?message}</c>; not <c>$${...}</c>, which compose leaves to the container's shell.</summary>
    [GeneratedRegex(@"(?<!\$)\$\{(?<name>[A-Za-z_][A-Za-z0-9_]*)(?<rest>[^}]*)\}")]
    private static partial Regex ComposeVariable();
}

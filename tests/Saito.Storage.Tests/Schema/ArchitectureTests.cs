using System.Text.RegularExpressions;
using System.Xml.Linq;

namespace Saito.Storage.Tests.Schema;

/// <summary>
/// docs/architecture.md is the map a newcomer reads first; like the scripts in <c>sql/</c> beside it in
/// <see cref="SqlScriptTests"/>, it is held to the code so it cannot drift: the table "Who may reference whom" names
/// each project's references, every <c>using Saito.*</c> stays inside what those references reach, no project compiles
/// another's files, and every file the page names exists.
/// </summary>
public sealed partial class ArchitectureTests
{
    private const string Map = "docs/architecture.md";

    private static string Root => RepositoryRoot.Path;

    [Fact]
    public void The_map_names_every_project_in_src_and_no_other()
    {
        var onDisk = SourceProjects().Keys.Order(StringComparer.Ordinal).ToArray();
        MapTable().Keys.Order(StringComparer.Ordinal).ToArray().ShouldBe(onDisk, $"{Map}'s table must list every project in src/ once.");
    }

    [Fact]
    public void Every_project_references_what_the_map_says_and_nothing_else()
    {
        var map = MapTable();
        var wrong = new List<string>();
        foreach (var (project, file) in SourceProjects())
        {
            var actual = ProjectReferences(file).Order(StringComparer.Ordinal).ToArray();
            var drawn = map.GetValueOrDefault(project, []).Order(StringComparer.Ordinal).ToArray();
            if (!actual.SequenceEqual(drawn))
            {
                wrong.Add($"{project}: its .csproj references [{string.Join(", ", actual)}], {Map} says [{string.Join(", ", drawn)}]");
            }
        }

        wrong.ShouldBeEmpty($"Change the code or the map ({Map}, \"Who may reference whom\"), so they agree.");
    }

    [Fact]
    public void Every_using_of_a_saito_namespace_stays_inside_what_the_project_may_reach()
    {
        var map = MapTable();
        var projects = map.Keys.OrderByDescending(name => name.Length).ToArray();
        var wrong = new List<string>();
        foreach (var (project, file) in SourceProjects())
        {
            var reach = Reach(project, map);
            string folder = Path.GetDirectoryName(file)!;
            foreach (string source in SourceFiles(folder))
            {
                foreach (Match using_ in SaitoUsing().Matches(File.ReadAllText(source)))
                {
                    string ns = using_.Groups["ns"].Value;
                    string? owner = projects.FirstOrDefault(p => ns == p || ns.StartsWith(p + ".", StringComparison.Ordinal));
                    if (owner is null || !reach.Contains(owner))
                    {
                        wrong.Add($"{Path.GetRelativePath(Root, source)}: using {ns} ({owner ?? "no project of that name"} is not within {project}'s reach)");
                    }
                }
            }
        }

        wrong.ShouldBeEmpty($"A project uses only its own namespaces and those of the projects {Map} lets it reference (directly or through them).");
    }

    [Fact]
    public void No_project_compiles_source_files_from_outside_its_folder()
    {
        var linked = new List<string>();
        foreach (string file in Directory.EnumerateFiles(Root, "*.csproj", SearchOption.AllDirectories).Where(f => !IsBuildOutput(f)))
        {
            string folder = Path.GetDirectoryName(file)!;
            foreach (var item in XDocument.Load(file).Descendants().Where(e => e.Name.LocalName is "Compile" or "Content" or "None"))
            {
                string? include = (string?)item.Attribute("Include") ?? (string?)item.Attribute("Update");
                if (include is not null && include.EndsWith(".cs", StringComparison.Ordinal) &&
                    !Path.GetFullPath(Path.Combine(folder, include.Replace('\\', '/'))).StartsWith(folder + Path.DirectorySeparatorChar, StringComparison.Ordinal))
                {
                    linked.Add($"{Path.GetRelativePath(Root, file)}: {include}");
                }
            }
        }

        linked.ShouldBeEmpty("Share code through a project reference (tests/Saito.Testing for tests and tools), not by linking files.");
    }

    [Fact]
    public void Every_file_the_map_names_exists()
    {
        var missing = new List<string>();
        foreach (Match named in NamedPath().Matches(File.ReadAllText(Path.Combine(Root, Map))))
        {
            string path = named.Groups["path"].Value;
            string relative = path.StartsWith("Saito.", StringComparison.Ordinal) ? "src/" + path : path;
            if (!Exists(relative))
            {
                missing.Add(path);
            }
        }

        missing.ShouldBeEmpty($"{Map} names files that are not there: move the text with the code.");
    }

    /// <summary>The table under "Who may reference whom": project -> the projects it references ("nothing" for none).</summary>
    private static Dictionary<string, string[]> MapTable()
    {
        string[] lines = File.ReadAllLines(Path.Combine(Root, Map));
        int heading = Array.FindIndex(lines, l => l.StartsWith("## Who may reference whom", StringComparison.Ordinal));
        heading.ShouldBeGreaterThanOrEqualTo(0, $"{Map} has lost its section \"## Who may reference whom\".");
        var table = new Dictionary<string, string[]>(StringComparer.Ordinal);
        foreach (string line in lines.Skip(heading + 1).SkipWhile(l => !l.StartsWith('|')).TakeWhile(l => l.StartsWith('|')))
        {
            string[] cells = line.Split('|', StringSplitOptions.TrimEntries);
            var project = ProjectName().Match(cells[1]);
            if (project.Success)
            {
                table.Add(project.Value, [.. ProjectName().Matches(cells[2]).Select(m => m.Value)]);
            }
        }

        table.ShouldNotBeEmpty($"{Map}'s \"Who may reference whom\" has no table of projects.");
        return table;
    }

    private static Dictionary<string, string> SourceProjects() =>
        Directory.EnumerateFiles(Path.Combine(Root, "src"), "*.csproj", SearchOption.AllDirectories)
            .Where(f => !IsBuildOutput(f))
            .ToDictionary(f => Path.GetFileNameWithoutExtension(f), StringComparer.Ordinal);

    private static IEnumerable<string> ProjectReferences(string csproj) =>
        XDocument.Load(csproj).Descendants().Where(e => e.Name.LocalName == "ProjectReference")
            .Select(e => Path.GetFileNameWithoutExtension(((string)e.Attribute("Include")!).Replace('\\', '/')));

    /// <summary>The project itself and everything its references reach, transitively.</summary>
    private static HashSet<string> Reach(string project, Dictionary<string, string[]> map)
    {
        var reach = new HashSet<string>(StringComparer.Ordinal);
        var next = new Stack<string>([project]);
        while (next.TryPop(out string? current))
        {
            if (reach.Add(current))
            {
                foreach (string reference in map.GetValueOrDefault(current, []))
                {
                    next.Push(reference);
                }
            }
        }

        return reach;
    }

    private static IEnumerable<string> SourceFiles(string folder) =>
        Directory.EnumerateFiles(folder, "*.cs", SearchOption.AllDirectories).Where(f => !IsBuildOutput(f));

    private static bool IsBuildOutput(string path)
    {
        string relative = Path.GetRelativePath(Root, path).Replace('\\', '/');
        return relative.Contains("/obj/", StringComparison.Ordinal) || relative.Contains("/bin/", StringComparison.Ordinal) ||
               relative.StartsWith("artifacts/", StringComparison.Ordinal) || relative.Contains("node_modules/", StringComparison.Ordinal);
    }

    /// <summary>A path, or a pattern with <c>*</c> in its file name, relative to the repository's root.</summary>
    private static bool Exists(string relative)
    {
        string full = Path.Combine(Root, relative.TrimEnd('/'));
        string name = Path.GetFileName(full);
        if (!name.Contains('*', StringComparison.Ordinal))
        {
            return File.Exists(full) || Directory.Exists(full);
        }

        string folder = Path.GetDirectoryName(full)!;
        return Directory.Exists(folder) && Directory.EnumerateFileSystemEntries(folder, name).Any();
    }

    [GeneratedRegex(@"^\s*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?(?<ns>Saito(?:\.\w+)+)\s*;", RegexOptions.Multiline)]
    private static partial Regex SaitoUsing();

    [GeneratedRegex(@"Saito\.\w+")]
    private static partial Regex ProjectName();

    /// <summary>A backticked path in the page: from the repository's root, or in src/ from the project's folder down.</summary>
    [GeneratedRegex(@"`(?<path>(?:src|tests|benchmarks|docs|sql|deploy|scripts)/[\w./*-]+|Saito\.\w+/[\w./*-]+)`")]
    private static partial Regex NamedPath();
}

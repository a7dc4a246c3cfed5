using System.Globalization;
using System.Reflection;
using System.Text.RegularExpressions;
using Microsoft.Extensions.Logging;

namespace Saito.Server.Tests.Logging;

/// <summary>
/// Event ids are what an operator filters and alerts on, so each must name one event: every <c>[LoggerMessage]</c> in
/// every Saito assembly is read here and held against the ranges docs/logging.md gives each project.
/// </summary>
public sealed partial class LogEventIdTests
{
    [Fact]
    public void Every_logged_event_has_an_id_of_its_own_inside_its_projects_range()
    {
        var ranges = DocumentedRanges();
        var events = ranges.Keys.SelectMany(project => LoggedEvents(Assembly.Load(project))).ToList();

        events.Count.ShouldBeGreaterThan(100, "the Saito assemblies hold more than 100 [LoggerMessage] methods; fewer means they were not all read");
        events.Where(e => e.Id < 0).Select(e => e.Method).ShouldBeEmpty("every [LoggerMessage] names its event id");
        events.Where(e => e.Id >= 0 && (e.Id < ranges[e.Project].First || e.Id > ranges[e.Project].Last))
            .Select(e => $"{e.Id} {e.Method}: outside {e.Project}'s {ranges[e.Project].First}-{ranges[e.Project].Last}")
            .ShouldBeEmpty("docs/logging.md gives each project its range");
        events.GroupBy(e => e.Id).Where(g => g.Count() > 1)
            .Select(g => $"{g.Key}: {string.Join(", ", g.Select(e => e.Method))}")
            .ShouldBeEmpty("no two events share an id, within a project or across projects");
    }

    [Fact]
    public void Every_project_under_src_has_a_range()
    {
        var projects = Directory.GetDirectories(Path.Combine(RepositoryRoot.Path, "src"))
            .Where(folder => Directory.GetFiles(folder, "*.csproj").Length > 0)
            .Select(Path.GetFileName);

        projects.Except(DocumentedRanges().Keys).ShouldBeEmpty("a new project gets its range in docs/logging.md before it logs");
    }

    private sealed record LoggedEvent(string Project, int Id, string Method);

    private static IEnumerable<LoggedEvent> LoggedEvents(Assembly assembly)
    {
        const BindingFlags all = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static | BindingFlags.Instance | BindingFlags.DeclaredOnly;
        return from type in assembly.GetTypes()
               from method in type.GetMethods(all)
               let attribute = method.GetCustomAttribute<LoggerMessageAttribute>()
               where attribute is not null
               select new LoggedEvent(assembly.GetName().Name!, attribute.EventId, $"{type.FullName}.{method.Name}");
    }

    /// <summary>The table in docs/logging.md: <c>| Saito.Mqtt | 1000-1999 | ... |</c>.</summary>
    private static Dictionary<string, (int First, int Last)> DocumentedRanges()
    {
        var ranges = File.ReadLines(Path.Combine(RepositoryRoot.Path, "docs", "logging.md"))
            .Select(line => RangeRow().Match(line))
            .Where(match => match.Success)
            .ToDictionary(match => match.Groups["project"].Value, match => (First: Number(match, "first"), Last: Number(match, "last")));
        ranges.ShouldNotBeEmpty("docs/logging.md holds the table of ranges");
        var sorted = ranges.OrderBy(r => r.Value.First).ToList();
        sorted.Zip(sorted.Skip(1)).Where(p => p.Second.Value.First <= p.First.Value.Last)
            .Select(p => $"{p.First.Key} and {p.Second.Key}").ShouldBeEmpty("the ranges do not overlap");
        return ranges;
    }

    private static int Number(Match match, string group) => int.Parse(match.Groups[group].Value, CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\|\s*(?<project>Saito\.\w+)\s*\|\s*(?<first>\d+)-(?<last>\d+)\s*\|")]
    private static partial Regex RangeRow();
}

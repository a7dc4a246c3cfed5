using Saito.Ingestion.Pipeline;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>Hubs and their sites, as the credentials file gives them (null: a hub of no site); a hub not listed is not one Saito knows.</summary>
internal sealed class ListedHubSites : Dictionary<string, string?>, IHubSites
{
    public ListedHubSites() : base(StringComparer.Ordinal)
    {
    }

    public string? SiteOf(string hub) => TryGetValue(hub, out string? site) ? site : null;

    public bool Any => Values.Any(s => s is not null);

    public bool IsHub(string hub) => ContainsKey(hub);
}

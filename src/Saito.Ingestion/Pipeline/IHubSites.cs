namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The site each hub belongs to (a school building, a ward: the hubs among which devices may roam). A device is bound
/// to the hub that registered it (<see cref="DeviceHubs.HubOf"/>); when that hub has a site, a message for the
/// device from a hub of another site, or of none, is refused (dead letter <c>device-of-another-site</c>; the rules:
/// <see cref="HubSiteRules"/>). Devices bound
/// to a hub without a site roam everywhere, as before sites existed. Saito's server answers from its credentials file
/// (<c>saito hubs add hub-1 --site north</c>).
/// </summary>
public interface IHubSites
{
    /// <summary>The hub's site, or null when it has none (or is not a hub Saito knows).</summary>
    string? SiteOf(string hub);

    /// <summary>Whether any hub has a site: when none has, nothing is checked and nothing extra is read from the database.</summary>
    bool Any { get; }

    /// <summary>Whether <paramref name="hub"/> is a hub Saito knows (in the credentials file), for a move by staff.</summary>
    bool IsHub(string hub);
}

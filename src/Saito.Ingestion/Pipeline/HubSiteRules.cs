using Saito.Payloads;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Hub sites (docs/security.md): a device bound to a hub of a site takes messages only from hubs of that site, until
/// staff move it; a device bound to a hub of no site (or to none) takes them from every hub, as before sites existed.
/// Ingestion asks before it stores anything of a message (<see cref="GateAsync"/>, and <see cref="OtherSiteAsync"/>
/// once a new serial is registered); the API asks before it moves a device (<see cref="MoveRefusal"/>, <see cref="Moved"/>).
/// A refusal is the detail of the message's <c>device-of-another-site</c> dead letter. Hubs' sites come from
/// <see cref="IHubSites"/> (none registered: no hub has a site); devices' hubs from <see cref="DeviceHubs"/>.
/// </summary>
public sealed class HubSiteRules(DeviceHubs hubs, IHubSites? sites = null)
{
    /// <summary>Whether some hub has a site: when none has, nothing is refused and nothing extra is read from the database.</summary>
    public bool InUse => sites is { Any: true };

    /// <summary>
    /// Why the topic's hub may not send for its device (null: it may), decided before the message is parsed. Devices new
    /// here are judged once registered (<see cref="OtherSiteAsync"/>), except a reader's check-in: it is recorded before
    /// its reader is registered here, so the reader's hub is looked up in the database first. While sites are in use,
    /// every device's hub is read again when <c>Ingestion:DeviceHubRecheckSeconds</c> have passed, and a known device's
    /// before its hello.
    /// </summary>
    public async ValueTask<string?> GateAsync(SaitoTopic topic, bool known, CancellationToken cancellationToken)
    {
        if (InUse)
        {
            // Moves made through another Saito sharing the database are seen within Ingestion:DeviceHubRecheckSeconds.
            if (hubs.RefreshHubsIfDue() is { } refresh)
            {
                await refresh.WaitAsync(cancellationToken);
            }

            if (!known && topic.Kind == TopicKind.CheckIn)
            {
                // A reader new here may be registered already by another Saito sharing the database, through a hub of
                // another site.
                await hubs.RecheckHubAsync(topic.Device, cancellationToken);
            }
            else if (known && topic.Kind == TopicKind.Hello)
            {
                // A hello binds the device to its hub: decided on the hub the database has now, not on one known here
                // from before a move made through another Saito (which this hello would otherwise undo).
                await hubs.RecheckHubAsync(topic.Device, cancellationToken, always: true);
            }
        }

        return known || topic.Kind == TopicKind.CheckIn ? await OtherSiteAsync(topic, cancellationToken) : null;
    }

    /// <summary>
    /// Whether a hello from a device new here registers it before it is judged: a serial new here may be registered
    /// already (by another Saito sharing the database) bound to a hub of another site, and its hello must not bind it to
    /// this hub. Without sites a hello registers it and binds it in one step.
    /// </summary>
    public bool RegistersBeforeHello(bool known) => !known && InUse;

    /// <summary>
    /// Null when the topic's hub may send for its (registered) device: sites are off, the device is bound to this hub
    /// or to none, its hub has no site, or both hubs are of one site. Else why not, for the dead letter. Before refusing,
    /// the device's hub is read again from the database (at most every <c>Ingestion:DeviceHubRecheckSeconds</c>), so a
    /// move by staff or by another Saito instance is seen.
    /// </summary>
    public async ValueTask<string?> OtherSiteAsync(SaitoTopic topic, CancellationToken cancellationToken)
    {
        if (sites is null || hubs.HubOf(topic.Device) is not { } home || home == topic.Hub || Refusal(sites, topic, home) is null)
        {
            return null;
        }

        return await hubs.RecheckHubAsync(topic.Device, cancellationToken) is { } now && now != topic.Hub ? Refusal(sites, topic, now) : null;
    }

    /// <summary>The rule itself: why the topic's hub may not send for a device bound to <paramref name="home"/> (null: it may).</summary>
    public static string? Refusal(IHubSites sites, SaitoTopic topic, string home)
    {
        ArgumentNullException.ThrowIfNull(sites);
        if (sites.SiteOf(home) is not { } site)
        {
            return null;
        }

        string? sender = sites.SiteOf(topic.Hub);
        return sender == site
            ? null
            : FormattableString.Invariant($"device {topic.Device} belongs to hub {home} of site {site}; hub {topic.Hub} is {(sender is null ? "of no site" : "of site " + sender)}, so it may not send for it. Nothing of this message is stored. If the device moved, move it: POST /api/devices/{{id}}/move (docs/security.md)");
    }

    /// <summary>
    /// Why a device may not be moved to <paramref name="hub"/> (null: it may). While some hub has a site, the hub must be
    /// one Saito knows: a hub it does not know has no site, and a device moved to it would take messages from every hub.
    /// </summary>
    public string? MoveRefusal(string hub) =>
        InUse && !sites!.IsHub(hub)
            ? $"There is no hub named {hub} in the credentials file (saito hubs list); a device moved to it would belong to no site."
            : null;

    /// <summary>
    /// A device staff moved to <paramref name="hub"/> (committed): this Saito judges by it at once; another instance sharing
    /// the database within <c>Ingestion:DeviceHubRecheckSeconds</c>.
    /// </summary>
    public void Moved(string serial, string hub) => hubs.Bind(serial, hub);
}

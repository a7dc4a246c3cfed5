using Microsoft.Extensions.Options;
using Saito.Ingestion;
using Saito.Mqtt.Broker;

namespace Saito.Server.Security;

/// <summary>
/// Saito's topic ACL (docs/security.md). Reading topics are <c>{prefix}/{hub}/{device}/{kind}</c>.
/// <list type="bullet">
/// <item>A hub (role <c>hub</c>) publishes and subscribes only under <c>{prefix}/{its name}/</c>.</item>
/// <item>A client with a role in <c>Security:SubscribeRoles</c> (the dashboard, integrations) may subscribe to any reading topic.</item>
/// <item>An anonymous client (only let in on loopback, or with <c>Mqtt:AllowAnonymous=true</c>) may publish readings; it
/// may subscribe to them only while every listener is on loopback (the try-it flow).</item>
/// <item>Nobody else publishes under the prefix or subscribes to a filter that could match a reading topic.</item>
/// </list>
/// </summary>
internal sealed class SaitoTopicAuthorizer : IMqttAuthorizer
{
    private readonly string _prefix;
    private readonly HashSet<string> _subscribeRoles;
    private readonly MqttBrokerOptions _broker;

    public SaitoTopicAuthorizer(IOptions<IngestionOptions> ingestion, IOptions<SecurityOptions> security, IOptions<MqttBrokerOptions> broker)
    {
        _prefix = ingestion.Value.TopicPrefix;
        _subscribeRoles = new HashSet<string>(security.Value.EffectiveSubscribeRoles, StringComparer.Ordinal);
        _broker = broker.Value;
    }

    public bool MayPublish(MqttClientIdentity identity, string topic)
    {
        ArgumentNullException.ThrowIfNull(identity);
        ArgumentNullException.ThrowIfNull(topic);
        if (identity.IsAnonymous)
        {
            return true;
        }

        if (!IsUnderPrefix(topic))
        {
            // Outside Saito's readings: not stored, not read by the dashboard; hubs stay inside their own tree.
            return !identity.Roles.Contains(CredentialStore.HubRole);
        }

        return identity.Roles.Contains(CredentialStore.HubRole) && IsUnderHub(topic, identity.Name);
    }

    public bool MaySubscribe(MqttClientIdentity identity, string filter)
    {
        ArgumentNullException.ThrowIfNull(identity);
        ArgumentNullException.ThrowIfNull(filter);
        if (identity.IsAnonymous)
        {
            return _broker.LoopbackOnly || !CouldMatchReadings(filter);
        }

        if (identity.Roles.Overlaps(_subscribeRoles))
        {
            return true;
        }

        if (identity.Roles.Contains(CredentialStore.HubRole))
        {
            return IsUnderHub(filter, identity.Name);
        }

        return !CouldMatchReadings(filter);
    }

    private bool IsUnderPrefix(string topic) =>
        topic.Length > _prefix.Length && topic[_prefix.Length] == '/' && topic.StartsWith(_prefix, StringComparison.Ordinal);

    /// <summary><c>{prefix}/{hub}/...</c> with both levels literal (no wildcard in either).</summary>
    private bool IsUnderHub(string topicOrFilter, string hub) =>
        IsUnderPrefix(topicOrFilter) &&
        topicOrFilter.AsSpan(_prefix.Length + 1).StartsWith(hub, StringComparison.Ordinal) &&
        topicOrFilter.Length > _prefix.Length + 1 + hub.Length &&
        topicOrFilter[_prefix.Length + 1 + hub.Length] == '/';

    /// <summary>Whether some reading topic could match <paramref name="filter"/>, level by level against the prefix (which may have several levels).</summary>
    private bool CouldMatchReadings(string filter)
    {
        var rest = filter.AsSpan();
        foreach (var range in _prefix.AsSpan().Split('/'))
        {
            var prefixLevel = _prefix.AsSpan()[range];
            int slash = rest.IndexOf('/');
            var level = slash < 0 ? rest : rest[..slash];
            if (level is "#")
            {
                return true;
            }

            if (level is not "+" && !level.SequenceEqual(prefixLevel))
            {
                return false;
            }

            if (slash < 0)
            {
                // The filter ends at the prefix itself: no reading topic (they have levels below it) matches.
                return false;
            }

            rest = rest[(slash + 1)..];
        }

        return true;
    }
}

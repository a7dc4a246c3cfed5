using System.Security.Cryptography;
using System.Text;
using static Saito.Testing.ExternalClients;

namespace Saito.Mqtt.Tests.ExternalClients;

/// <summary>
/// What MQTT does, checked with independent clients only (mosquitto_pub/sub, paho-mqtt, MQTT.js):
/// a message goes from client X through the broker to client Y. Written once, run against every
/// broker: subclasses supply the <see cref="Endpoint"/> (Mosquitto as the reference, Saito's broker).
/// Each test uses its own topics and client ids, so tests do not see each other's messages.
/// </summary>
public abstract class ExternalClientConformanceTests
{
    /// <summary>Six client variants in a ring; neighbours exchange messages both ways at every QoS.
    /// Every family is publisher and subscriber, 3.1.1 meets 5.0, and TCP meets WebSocket.</summary>
    private static readonly string[] s_ring =
        [Mosquitto311.Name, Paho311.Name, MqttJs311.Name, Mosquitto5.Name, Paho5.Name, MqttJs5Ws.Name];

    protected abstract BrokerEndpoint Endpoint { get; }

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    private static ClientOptions AtQoS(int qos) => new() { QoS = qos };

    public static TheoryData<string, string, int> PublisherSubscriberPairs
    {
        get
        {
            var data = new TheoryData<string, string, int>();
            for (int i = 0; i < s_ring.Length; i++)
            {
                string a = s_ring[i];
                string b = s_ring[(i + 1) % s_ring.Length];
                for (int qos = 0; qos <= 2; qos++)
                {
                    data.Add(a, b, qos);
                    data.Add(b, a, qos);
                }
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(PublisherSubscriberPairs), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Message_arrives_intact_at_the_qos_it_was_published_and_subscribed_with(string publisher, string subscriber, int qos)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("pair");
        byte[] payload = Encoding.UTF8.GetBytes($"Grüße from {publisher}: 21.5 °C ✓");

        await using var receiver = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(qos), cancellationToken: Ct);
        receiver.GrantedQoS.ShouldBe([qos]);
        await pub.PublishAsync(Endpoint, new OutgoingMessage(topic, payload), AtQoS(qos), Ct);

        var message = (await receiver.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        message.Topic.ShouldBe(topic);
        message.Payload.ToArray().ShouldBe(payload);
        message.QoS.ShouldBe(qos);
        message.Retain.ShouldBeFalse();
    }

    public static TheoryData<string, string, int, int> QoSDowngrades => new()
    {
        { Paho5.Name, MqttJs311.Name, 2, 1 },
        { MqttJs5.Name, Mosquitto311.Name, 1, 0 },
        { Mosquitto5.Name, Paho311.Name, 2, 0 },
    };

    [Theory]
    [MemberData(nameof(QoSDowngrades), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Delivery_qos_is_the_lower_of_publish_and_subscription_qos(string publisher, string subscriber, int publishQoS, int subscriptionQoS)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("downgrade");

        await using var receiver = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(subscriptionQoS), cancellationToken: Ct);
        await pub.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "downgraded"), AtQoS(publishQoS), Ct);

        var message = (await receiver.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        message.Text.ShouldBe("downgraded");
        message.QoS.ShouldBe(Math.Min(publishQoS, subscriptionQoS));
    }

    public static TheoryData<string, string> RetainedPairs => new()
    {
        { Mosquitto5.Name, Paho311.Name },
        { Paho5.Name, MqttJs5Ws.Name },
        { MqttJs311.Name, Mosquitto311.Name },
    };

    [Theory]
    [MemberData(nameof(RetainedPairs), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Retained_message_reaches_a_subscriber_that_arrives_later(string publisher, string subscriber)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("retained");

        await pub.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "last known value"), new() { QoS = 1, Retain = true }, Ct);
        await using var late = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        var retained = (await late.WaitForMessagesAsync(1, cancellationToken: Ct))[0];
        retained.Text.ShouldBe("last known value");
        retained.Retain.ShouldBeTrue();
        retained.QoS.ShouldBe(1);

        // A message that is merely live carries no retain flag.
        await pub.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "live value"), AtQoS(1), Ct);
        var live = (await late.WaitForMessagesAsync(2, cancellationToken: Ct))[1];
        live.Text.ShouldBe("live value");
        live.Retain.ShouldBeFalse();

        await ClearRetainedAsync(topic);
    }

    [Fact]
    public async Task Empty_retained_message_clears_the_retained_message()
    {
        string topic = UniqueTopic("retained-cleared");
        await Paho5.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "stale"), new() { QoS = 1, Retain = true }, Ct);
        await Mosquitto311.PublishAsync(Endpoint, new OutgoingMessage(topic, ReadOnlyMemory<byte>.Empty), new() { QoS = 1, Retain = true }, Ct);

        await using var late = await MqttJs5.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        // Anything retained would come right after the SUBACK, before this marker.
        await Paho311.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "marker"), AtQoS(1), Ct);

        var first = (await late.WaitForMessagesAsync(1, cancellationToken: Ct))[0];
        first.Text.ShouldBe("marker");
        first.Retain.ShouldBeFalse();
    }

    public static TheoryData<string, string> WillClients => new()
    {
        { Paho311.Name, Mosquitto5.Name },
        { Paho5.Name, MqttJs311.Name },
        { MqttJs5.Name, Paho5.Name },
        { MqttJs311Ws.Name, Paho311.Name },
        { Mosquitto311.Name, MqttJs5.Name },
    };

    [Theory]
    [MemberData(nameof(WillClients), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Will_is_published_when_a_client_drops_without_disconnect(string willClient, string subscriber)
    {
        var (dropping, sub) = Clients(willClient, subscriber);
        string topic = UniqueTopic("will");

        await using var watcher = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        await dropping.ConnectAndDropAsync(Endpoint, new() { ClientId = NewClientId(), Will = new(topic, "sensor-17 went offline", QoS: 1) }, Ct);

        var will = (await watcher.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        will.Topic.ShouldBe(topic);
        will.Text.ShouldBe("sensor-17 went offline");
        will.QoS.ShouldBe(1);
        will.Retain.ShouldBeFalse();
    }

    public static TheoryData<string> PoliteClients => new() { Paho5.Name, MqttJs311.Name, Mosquitto5.Name };

    [Theory]
    [MemberData(nameof(PoliteClients), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Will_is_not_published_after_a_normal_disconnect(string client)
    {
        var polite = Client(client);
        string topic = UniqueTopic("no-will");

        await using var watcher = await Paho311.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        await polite.ConnectAndDisconnectAsync(Endpoint, new() { ClientId = NewClientId(), Will = new(topic, "must not appear", QoS: 1) }, Ct);
        // The DISCONNECT was handled before this marker was even sent, so a will would arrive first.
        await MqttJs5.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "marker"), AtQoS(1), Ct);

        var first = (await watcher.WaitForMessagesAsync(1, cancellationToken: Ct))[0];
        first.Text.ShouldBe("marker");
    }

    [Fact]
    public async Task Retained_will_is_kept_for_subscribers_that_arrive_after_the_drop()
    {
        string topic = UniqueTopic("retained-will");

        await using var watcher = await Paho5.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        await MqttJs5.ConnectAndDropAsync(Endpoint, new() { ClientId = NewClientId(), Will = new(topic, "offline", QoS: 1, Retain: true) }, Ct);
        // Once the will reached a live subscriber, it has been stored as retained too.
        (await watcher.WaitForMessagesAsync(1, cancellationToken: Ct))[0].Retain.ShouldBeFalse();

        await using var late = await Mosquitto311.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        var retained = (await late.WaitForMessagesAsync(1, cancellationToken: Ct))[0];
        retained.Text.ShouldBe("offline");
        retained.Retain.ShouldBeTrue();

        await ClearRetainedAsync(topic);
    }

    public static TheoryData<string, string> PersistentSessions => new()
    {
        { Mosquitto311.Name, Paho5.Name },
        { Mosquitto5.Name, MqttJs311.Name },
        { Paho311.Name, Mosquitto5.Name },
        { Paho5.Name, MqttJs5Ws.Name },
        { MqttJs311.Name, Paho311.Name },
        { MqttJs5.Name, Mosquitto311.Name },
    };

    [Theory]
    [MemberData(nameof(PersistentSessions), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Persistent_session_receives_the_qos1_messages_published_while_it_was_away(string subscriber, string publisher)
    {
        var (sub, pub) = Clients(subscriber, publisher);
        string topic = UniqueTopic("session");
        var session = new ClientOptions
        {
            ClientId = NewClientId(),
            CleanSession = false,
            SessionExpirySeconds = sub.Version == MqttVersion.V500 ? 300 : null,
            QoS = 1,
        };

        var first = await sub.SubscribeAsync(Endpoint, [topic], session, exitAfter: 0, cancellationToken: Ct);
        await first.DisposeAsync();
        string[] texts = ["queued 1", "queued 2", "queued 3"];
        await pub.PublishAsync(Endpoint, [.. texts.Select(t => OutgoingMessage.Text(topic, t))], AtQoS(1), Ct);

        // Same client id, clean session off again: the broker hands over what it kept.
        await using var resumed = await sub.SubscribeAsync(Endpoint, [topic], session, cancellationToken: Ct);
        var received = await resumed.WaitForMessagesAsync(texts.Length, cancellationToken: Ct);
        received.Select(m => m.Text).ShouldBe(texts);
        received.ShouldAllBe(m => m.QoS == 1 && m.Topic == topic);
        if (resumed.SessionPresent is bool present)
        {
            present.ShouldBeTrue("CONNACK should say the session was kept");
        }
    }

    [Fact]
    public async Task Shared_subscription_gives_each_message_to_exactly_one_member()
    {
        string topic = UniqueTopic("shared");
        string done = topic + "/done";
        string[] filters = [$"$share/g{Guid.NewGuid():N}/{topic}", done];

        await using var first = await Paho5.SubscribeAsync(Endpoint, filters, AtQoS(1), cancellationToken: Ct);
        await using var second = await Paho5.SubscribeAsync(Endpoint, filters, AtQoS(1), cancellationToken: Ct);
        string[] texts = [.. Enumerable.Range(1, 20).Select(i => $"reading {i:00}")];
        await Paho5.PublishAsync(Endpoint, [.. texts.Select(t => OutgoingMessage.Text(topic, t))], AtQoS(1), Ct);
        // Both members subscribe to "done" normally, so each gets it, after its share of the readings.
        await Paho5.PublishAsync(Endpoint, OutgoingMessage.Text(done, "done"), AtQoS(1), Ct);

        var toFirst = SharedTexts(await first.WaitUntilAsync(m => m.Any(x => x.Topic == done), "the done marker", cancellationToken: Ct));
        var toSecond = SharedTexts(await second.WaitUntilAsync(m => m.Any(x => x.Topic == done), "the done marker", cancellationToken: Ct));
        toFirst.ShouldNotBeEmpty("each member should get a share");
        toSecond.ShouldNotBeEmpty("each member should get a share");
        toFirst.Concat(toSecond).Order(StringComparer.Ordinal).ShouldBe(texts, ignoreOrder: false, customMessage: "together, every message exactly once");

        List<string> SharedTexts(IReadOnlyList<ReceivedMessage> messages) =>
            [.. messages.Where(m => m.Topic == topic).Select(m => m.Text)];
    }

    [Fact]
    public async Task Single_level_wildcard_matches_exactly_one_level()
    {
        string root = UniqueTopic("plus");
        await using var sub = await Mosquitto5.SubscribeAsync(Endpoint, [$"{root}/+/temperature", $"{root}/done"], AtQoS(1), cancellationToken: Ct);

        // One publisher connection, so the marker comes after everything before it.
        await Paho311.PublishAsync(
            Endpoint,
            [
                OutgoingMessage.Text($"{root}/kitchen/temperature", "one level"),
                OutgoingMessage.Text($"{root}/kitchen/oven/temperature", "two levels"),
                OutgoingMessage.Text($"{root}/temperature", "no level"),
                OutgoingMessage.Text($"{root}/kitchen/humidity", "other leaf"),
                OutgoingMessage.Text($"{root}//temperature", "empty level"),
                OutgoingMessage.Text($"{root}/done", "done"),
            ],
            AtQoS(1),
            Ct);

        var received = await sub.WaitUntilAsync(m => m.Any(x => x.Topic == $"{root}/done"), "the done marker", cancellationToken: Ct);
        received.Select(m => m.Topic).ShouldBe([$"{root}/kitchen/temperature", $"{root}//temperature", $"{root}/done"]);
    }

    [Fact]
    public async Task Multi_level_wildcard_matches_the_parent_and_every_level_below()
    {
        string root = UniqueTopic("hash");
        await using var sub = await MqttJs311.SubscribeAsync(Endpoint, [$"{root}/#"], AtQoS(1), cancellationToken: Ct);

        await MqttJs5.PublishAsync(
            Endpoint,
            [
                OutgoingMessage.Text(root, "parent"),
                OutgoingMessage.Text($"{root}x/a", "sibling with a longer name"),
                OutgoingMessage.Text($"{root}/a", "child"),
                OutgoingMessage.Text($"{root}/a/b/c", "grandchild"),
                OutgoingMessage.Text($"saito-test/elsewhere/{Guid.NewGuid():N}", "elsewhere"),
                OutgoingMessage.Text($"{root}/done", "done"),
            ],
            AtQoS(1),
            Ct);

        var received = await sub.WaitUntilAsync(m => m.Any(x => x.Topic == $"{root}/done"), "the done marker", cancellationToken: Ct);
        received.Select(m => m.Topic).ShouldBe([root, $"{root}/a", $"{root}/a/b/c", $"{root}/done"]);
    }

    [Fact]
    public async Task Wildcards_at_the_start_do_not_match_topics_that_begin_with_a_dollar()
    {
        string id = Guid.NewGuid().ToString("N");
        string hidden = $"$saito-test/{id}/status";
        string visible = $"saito-test/{id}/status";

        await using var everything = await Mosquitto311.SubscribeAsync(Endpoint, ["#"], AtQoS(1), cancellationToken: Ct);
        await using var anyFirstLevel = await Paho311.SubscribeAsync(Endpoint, [$"+/{id}/status"], AtQoS(1), cancellationToken: Ct);
        await using var named = await MqttJs5.SubscribeAsync(Endpoint, [$"$saito-test/{id}/#", $"saito-test/{id}/#"], AtQoS(1), cancellationToken: Ct);
        await Paho5.PublishAsync(Endpoint, [OutgoingMessage.Text(hidden, "hidden"), OutgoingMessage.Text(visible, "visible")], AtQoS(1), Ct);

        // A filter that names the $ level gets both: the broker did route the $ topic.
        (await named.WaitForMessagesAsync(2, cancellationToken: Ct)).Select(m => m.Topic).ShouldBe([hidden, visible]);
        // Delivery is in order, so once "visible" is in, "hidden" would have come before it.
        var all = await everything.WaitUntilAsync(m => m.Any(x => x.Topic == visible), "the visible message", cancellationToken: Ct);
        all.ShouldNotContain(m => m.Topic.StartsWith('$'), "'#' must not match $ topics, $SYS included");
        var plus = await anyFirstLevel.WaitUntilAsync(m => m.Any(x => x.Topic == visible), "the visible message", cancellationToken: Ct);
        plus.Select(m => m.Topic).ShouldBe([visible]);
    }

    public static TheoryData<string, string> LargePayloadPairs => new()
    {
        { Mosquitto5.Name, Paho311.Name },
        { Paho5.Name, MqttJs311.Name },
        // Not to a WebSocket subscriber: Mosquitto 2.0.11 sends 1 MB over WebSocket at ~40 KB/s.
        { MqttJs5Ws.Name, Mosquitto311.Name },
    };

    [Theory]
    [MemberData(nameof(LargePayloadPairs), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task One_megabyte_payload_arrives_byte_for_byte(string publisher, string subscriber)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("large");
        byte[] payload = RandomNumberGenerator.GetBytes(1024 * 1024);

        await using var receiver = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        await pub.PublishAsync(Endpoint, new OutgoingMessage(topic, payload), AtQoS(1), Ct);

        var message = (await receiver.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        message.Payload.Length.ShouldBe(payload.Length);
        message.Sha256.ShouldBe(Convert.ToHexStringLower(SHA256.HashData(payload)));
        message.QoS.ShouldBe(1);
    }

    public static TheoryData<string, string> TlsPairs => new()
    {
        { Mosquitto311Tls.Name, Mosquitto5Tls.Name },
        { MqttJs5Tls.Name, Paho311Tls.Name },
        { Paho5Tls.Name, MqttJs311Tls.Name },
    };

    [Theory]
    [MemberData(nameof(TlsPairs), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task Messages_travel_over_tls_to_clients_that_trust_the_test_ca(string publisher, string subscriber)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("tls");

        await using var receiver = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(2), cancellationToken: Ct);
        await pub.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "encrypted"), AtQoS(2), Ct);

        var message = (await receiver.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        message.Text.ShouldBe("encrypted");
        message.QoS.ShouldBe(2);
    }

    public static TheoryData<string, string> UserPropertyPairs => new()
    {
        { Mosquitto5.Name, Paho5.Name },
        { Paho5.Name, MqttJs5Ws.Name },
        { MqttJs5.Name, Paho5.Name },
    };

    [Theory]
    [MemberData(nameof(UserPropertyPairs), MemberType = typeof(ExternalClientConformanceTests))]
    public async Task User_properties_arrive_unchanged_and_in_order(string publisher, string subscriber)
    {
        var (pub, sub) = Clients(publisher, subscriber);
        string topic = UniqueTopic("user-properties");
        // Distinct keys: MQTT.js keeps user properties in an object, so repeated keys lose their order.
        KeyValuePair<string, string>[] properties = [new("sensor", "t-17"), new("unit", "°C"), new("firmware", "1.4.2")];

        await using var receiver = await sub.SubscribeAsync(Endpoint, [topic], AtQoS(1), cancellationToken: Ct);
        await pub.PublishAsync(Endpoint, OutgoingMessage.Text(topic, "21.5"), new() { QoS = 1, UserProperties = properties }, Ct);

        var message = (await receiver.WaitForMessagesAsync(1, cancellationToken: Ct)).ShouldHaveSingleItem();
        message.Text.ShouldBe("21.5");
        message.UserProperties.ShouldBe(properties);
    }

    private static string UniqueTopic(string test) => $"saito-test/{test}/{Guid.NewGuid():N}";

    /// <summary>23 characters of [0-9a-z]: the most a 3.1.1 server must accept.</summary>
    private static string NewClientId() => "s" + Guid.NewGuid().ToString("N")[..22];

    private ExternalMqttClient Client(string name)
    {
        var client = Named(name);
        client.SkipUnlessSupportedBy(Endpoint);
        return client;
    }

    private (ExternalMqttClient First, ExternalMqttClient Second) Clients(string first, string second) => (Client(first), Client(second));

    /// <summary>Leaves the broker as we found it, so later "#" subscribers are not flooded with old retained messages.</summary>
    private Task ClearRetainedAsync(string topic) =>
        Paho311.PublishAsync(Endpoint, new OutgoingMessage(topic, ReadOnlyMemory<byte>.Empty), new() { QoS = 1, Retain = true }, Ct);
}

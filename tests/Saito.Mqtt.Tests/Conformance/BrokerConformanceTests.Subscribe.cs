using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>SUBSCRIBE, UNSUBSCRIBE, topic matching, subscription options, shared subscriptions.</summary>
public abstract partial class BrokerConformanceTests
{
    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Single_level_wildcard_matches_exactly_one_whole_level(MqttProtocolVersion version)
    {
        string root = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, $"{root}/+/temperature", QoS0);

        string[] topics = [$"{root}/kitchen/temperature", $"{root}/kitchen/oven/temperature", $"{root}/temperature", $"{root}//temperature", $"{root}/hall/temperature/max"];
        foreach (string topic in topics)
        {
            await PublishAsync(publisher, topic, topic);
        }

        // 3.1.1 [MQTT-4.7.1-3] / 5.0 [MQTT-4.7.1-2]: '+' stands for exactly one level, which may be empty.
        var received = await ReceiveAllAsync(subscriber);
        received.Select(m => m.Topic).ShouldBe([$"{root}/kitchen/temperature", $"{root}//temperature"]);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Multi_level_wildcard_matches_the_parent_and_every_level_below(MqttProtocolVersion version)
    {
        string root = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, $"{root}/sport/#", QoS0);

        string[] topics = [$"{root}/sport", $"{root}/sport/tennis", $"{root}/sport/tennis/player1/ranking", $"{root}/sports", $"{root}/other/sport"];
        foreach (string topic in topics)
        {
            await PublishAsync(publisher, topic, topic);
        }

        // 3.1.1 [MQTT-4.7.1-2] / 5.0 [MQTT-4.7.1-1], and section 4.7.1.2: "sport/#" also matches "sport".
        var received = await ReceiveAllAsync(subscriber);
        received.Select(m => m.Topic).ShouldBe([$"{root}/sport", $"{root}/sport/tennis", $"{root}/sport/tennis/player1/ranking"]);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Wildcards_at_the_start_of_a_filter_do_not_match_topics_beginning_with_dollar(MqttProtocolVersion version)
    {
        string id = Guid.NewGuid().ToString("N");
        string dollarTopic = $"$saito{id}/reading";
        string marker = $"{NewTopic()}/marker";
        await using var wildcards = await ConnectedAsync(version);
        await using var explicitly = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(wildcards, "#", QoS0);
        await SubscribeAsync(wildcards, "+/reading", QoS0);
        await SubscribeAsync(explicitly, dollarTopic, QoS0);

        await PublishAsync(publisher, dollarTopic, "dollar");
        await PublishAsync(publisher, marker, "marker");

        // A filter naming the $ topic gets it ...
        Text(await ExpectMessageAsync(explicitly, dollarTopic)).ShouldBe("dollar");

        // ... "#" and "+/…" do not ([MQTT-4.7.2-1], both). Everything "#" receives up to the
        // marker (retained messages of other tests included) is checked.
        while (true)
        {
            var message = await ExpectMessageAsync(wildcards);
            message.Topic.ShouldNotStartWith("$", Case.Sensitive, $"'{message.Topic}' matched a filter starting with a wildcard");
            if (message.Topic == marker)
            {
                break;
            }
        }

        var rest = await ReceiveAllAsync(wildcards);
        rest.ShouldNotContain(m => m.Topic.StartsWith('$'));
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Overlapping_subscriptions_deliver_the_message_at_the_highest_matching_qos(MqttProtocolVersion version)
    {
        if (version == V311)
        {
            Assert.SkipWhen(OverlappingSubscriptionsDeviation is not null, OverlappingSubscriptionsDeviation ?? string.Empty);
        }

        string root = NewTopic();
        string topic = $"{root}/a/b";
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, $"{root}/#", QoS0);
        await SubscribeAsync(subscriber, $"{root}/+/b", QoS2);
        await SubscribeAsync(subscriber, $"{root}/a/+", QoS1);

        await PublishAsync(publisher, topic, "overlap", QoS2);

        // 3.1.1 [MQTT-3.3.5-1] / 5.0 [MQTT-3.3.4-2]: the message is delivered respecting the
        // highest QoS of the matching subscriptions; the server MAY send one copy per matching
        // subscription, each at that subscription's QoS.
        var copies = await ReceiveAllAsync(subscriber);
        copies.Count.ShouldBeInRange(1, 3);
        copies.ShouldAllBe(m => m.Topic == topic && Text(m) == "overlap");
        copies.Max(m => m.QoS).ShouldBe(QoS2);
        if (copies.Count == 3)
        {
            copies.Select(m => m.QoS).OrderBy(q => q).ShouldBe([QoS0, QoS1, QoS2]);
        }
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Subscribing_again_to_the_same_filter_replaces_the_subscription(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS2);
        await SubscribeAsync(subscriber, topic, QoS0);

        await PublishAsync(publisher, topic, "once", QoS2);

        // 3.1.1 [MQTT-3.8.4-3] / 5.0 [MQTT-3.8.4-3]: the new subscription replaces the old one
        // completely: one copy, at the new QoS.
        var received = await ReceiveAllAsync(subscriber);
        received.Count.ShouldBe(1);
        received[0].QoS.ShouldBe(QoS0);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Unsubscribe_is_acknowledged_and_stops_delivery(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS1);
        await PublishAsync(publisher, topic, "before", QoS1);
        Text(await ReceiveAsync(subscriber, topic)).ShouldBe("before");

        // [MQTT-3.10.4-4], [MQTT-3.10.4-5] (both): UNSUBACK with the same packet id, even where
        // nothing matched. 5.0 [MQTT-3.11.3-1]: one reason code per filter, in order:
        // 0x00 Success, 0x11 No subscription existed.
        await subscriber.SendAsync(new UnsubscribePacket { PacketId = 31, TopicFilters = [topic, $"{topic}/never-subscribed"] });
        var unsubAck = await subscriber.ExpectSkippingPublishesAsync<UnsubAckPacket>();
        unsubAck.PacketId.ShouldBe((ushort)31);
        if (version == V500)
        {
            unsubAck.ReasonCodes.ShouldBe([MqttReasonCode.Success, MqttReasonCode.NoSubscriptionExisted]);
        }

        // [MQTT-3.10.4-2] (both): no new messages for the filter.
        await PublishAsync(publisher, topic, "after", QoS1);
        await subscriber.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311, "a/#/b")]
    [InlineData(V311, "a/b#")]
    [InlineData(V311, "a/b+/c")]
    [InlineData(V500, "a/#/b")]
    [InlineData(V500, "a/b#")]
    [InlineData(V500, "a/b+/c")]
    public async Task Invalid_topic_filter_is_refused(MqttProtocolVersion version, string filter)
    {
        await using var subscriber = await ConnectedAsync(version);
        await subscriber.SendAsync(new SubscribePacket { PacketId = 5, Subscriptions = [new MqttSubscription { TopicFilter = $"{NewTopic()}/{filter}", QoS = QoS1 }] });

        // '#' must be last and alone in its level, '+' must fill a whole level
        // (3.1.1 [MQTT-4.7.1-2], [MQTT-4.7.1-3] / 5.0 [MQTT-4.7.1-1], [MQTT-4.7.1-2]). A broker
        // may refuse the subscription in its SUBACK (3.1.1 return code 0x80 Failure; 5.0 a
        // reason code of 0x80 or above, such as 0x8F Topic Filter invalid) or treat the packet
        // as malformed and close the connection (3.1.1 [MQTT-4.8.0-1]; 5.0 [MQTT-4.13.1-1],
        // with DISCONNECT 0x81 Malformed Packet, 0x82 Protocol Error or 0x8F if it sends one).
        MqttPacket reply;
        try
        {
            reply = await subscriber.ExpectAsync<MqttPacket>();
        }
        catch (ShouldAssertException e) when (e.Message.Contains("closed the connection", StringComparison.Ordinal) || e.Message.Contains("connection ended", StringComparison.Ordinal))
        {
            await AssertBrokerStillServesAsync(version);
            return;
        }

        if (reply is DisconnectPacket disconnect)
        {
            version.ShouldBe(V500, "an MQTT 3.1.1 server never sends DISCONNECT");
            disconnect.ReasonCode.ShouldBeOneOf(MqttReasonCode.MalformedPacket, MqttReasonCode.ProtocolError, MqttReasonCode.TopicFilterInvalid);
            (await subscriber.ExpectClosedAsync()).ShouldBeNull();
        }
        else
        {
            var subAck = reply.ShouldBeOfType<SubAckPacket>();
            subAck.PacketId.ShouldBe((ushort)5);
            subAck.ReasonCodes.Count.ShouldBe(1);
            if (version == V311)
            {
                subAck.ReasonCodes[0].ShouldBe(MqttReasonCode.UnspecifiedError, "3.1.1 SUBACK failure is 0x80");
            }
            else
            {
                ((byte)subAck.ReasonCodes[0]).ShouldBeGreaterThanOrEqualTo((byte)0x80);
            }
        }

        await AssertBrokerStillServesAsync(version);
    }

    [Fact]
    public async Task No_local_subscription_does_not_get_its_own_messages_back()
    {
        string topic = NewTopic();
        await using var noLocal = await ConnectedAsync(V500);
        await using var other = await ConnectedAsync(V500);
        await SubscribeAsync(noLocal, new MqttSubscription { TopicFilter = topic, QoS = QoS1, NoLocal = true });
        await SubscribeAsync(other, topic, QoS1);

        // [MQTT-3.8.3-3]: not forwarded to the connection with the publisher's ClientID ...
        await PublishAsync(noLocal, topic, "mine", QoS1);
        Text(await ReceiveAsync(other, topic)).ShouldBe("mine");
        await noLocal.ExpectNothingAsync();

        // ... but messages from others still arrive.
        await PublishAsync(other, topic, "theirs", QoS1);
        Text(await ReceiveAsync(noLocal, topic)).ShouldBe("theirs");
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Forwarded_message_has_retain_cleared_unless_retain_as_published_is_set(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var plain = await ConnectedAsync(version);
        await SubscribeAsync(plain, topic, QoS1);
        RawMqttConnection? asPublished = null;
        if (version == V500)
        {
            asPublished = await ConnectedAsync(version);
            await SubscribeAsync(asPublished, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainAsPublished = true });
        }

        try
        {
            await using var publisher = await ConnectedAsync(version);
            await PublishAsync(publisher, topic, "retained", QoS1, retain: true);

            // 3.1.1 [MQTT-3.3.1-9]: RETAIN 0 on a message sent for an established subscription.
            // 5.0 [MQTT-3.3.1-12]: RETAIN 0 when Retain As Published is 0; [MQTT-3.3.1-13]: as
            // published when it is 1.
            (await ReceiveAsync(plain, topic)).Retain.ShouldBeFalse();
            if (asPublished is not null)
            {
                (await ReceiveAsync(asPublished, topic)).Retain.ShouldBeTrue();
            }
        }
        finally
        {
            if (asPublished is not null)
            {
                await asPublished.DisposeAsync();
            }
        }
    }

    [Fact]
    public async Task Retain_handling_decides_whether_retained_messages_come_at_subscribe()
    {
        string topic = NewTopic();
        await using (var publisher = await ConnectedAsync(V500))
        {
            await PublishAsync(publisher, topic, "retained", QoS1, retain: true);
        }

        // [MQTT-3.3.1-9]: Retain Handling 0 sends the retained messages at every subscribe,
        // including one that replaces an existing subscription ([MQTT-3.8.4-4]); they carry RETAIN 1.
        await using var handling0 = await ConnectedAsync(V500);
        await SubscribeAsync(handling0, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.SendAtSubscribe });
        (await ReceiveAsync(handling0, topic)).Retain.ShouldBeTrue();
        await SubscribeAsync(handling0, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.SendAtSubscribe });
        (await ReceiveAsync(handling0, topic)).Retain.ShouldBeTrue();

        // [MQTT-3.3.1-10]: Retain Handling 1 sends them only when the subscription is new.
        await using var handling1 = await ConnectedAsync(V500);
        await SubscribeAsync(handling1, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.SendAtSubscribeIfNew });
        (await ReceiveAsync(handling1, topic)).Retain.ShouldBeTrue();
        await SubscribeAsync(handling1, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.SendAtSubscribeIfNew });
        await handling1.ExpectNothingAsync();

        // [MQTT-3.3.1-11]: Retain Handling 2 never sends them at subscribe.
        await using var handling2 = await ConnectedAsync(V500);
        await SubscribeAsync(handling2, new MqttSubscription { TopicFilter = topic, QoS = QoS1, RetainHandling = MqttRetainHandling.DoNotSend });
        await handling2.ExpectNothingAsync();
    }

    [Fact]
    public async Task Subscription_identifiers_come_with_the_messages_they_matched()
    {
        string root = NewTopic();
        await using var subscriber = await ConnectedAsync(V500);
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(subscriber, $"{root}/a/#", QoS1, new MqttProperties { SubscriptionIdentifiers = [7] });
        await SubscribeAsync(subscriber, $"{root}/+/b", QoS1, new MqttProperties { SubscriptionIdentifiers = [8] });
        await SubscribeAsync(subscriber, $"{root}/c", QoS1);

        // [MQTT-3.3.4-3]: the identifier of each matching subscription is sent with the message.
        await PublishAsync(publisher, $"{root}/a/x", "seven", QoS1);
        ((await ReceiveAsync(subscriber, $"{root}/a/x")).Properties?.SubscriptionIdentifiers ?? []).ShouldBe([7u]);

        // A subscription without an identifier sends none.
        await PublishAsync(publisher, $"{root}/c", "none", QoS1);
        ((await ReceiveAsync(subscriber, $"{root}/c")).Properties?.SubscriptionIdentifiers ?? []).ShouldBeEmpty();

        // Overlapping: one copy carries both identifiers ([MQTT-3.3.4-4]), or each copy carries
        // its own subscription's ([MQTT-3.3.4-5]).
        await PublishAsync(publisher, $"{root}/a/b", "both", QoS1);
        var copies = await ReceiveAllAsync(subscriber);
        if (copies.Count == 1)
        {
            (copies[0].Properties?.SubscriptionIdentifiers ?? []).Order().ShouldBe([7u, 8u]);
        }
        else
        {
            copies.Count.ShouldBe(2);
            copies.SelectMany(c => c.Properties?.SubscriptionIdentifiers ?? []).Order().ShouldBe([7u, 8u]);
            copies.ShouldAllBe(c => c.Properties != null && c.Properties.SubscriptionIdentifiers != null && c.Properties.SubscriptionIdentifiers.Count == 1);
        }
    }

    [Fact]
    public async Task Shared_subscription_gives_each_message_to_exactly_one_member()
    {
        string topic = NewTopic();
        string shared = $"$share/g{Guid.NewGuid():N}/{topic}";
        await using var memberA = await ConnectedAsync(V500);
        await using var memberB = await ConnectedAsync(V500);
        await using var everything = await ConnectedAsync(V500);
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(memberA, shared, QoS1);
        await SubscribeAsync(memberB, shared, QoS1);
        await SubscribeAsync(everything, topic, QoS1);

        const int count = 20;
        for (int i = 0; i < count; i++)
        {
            await PublishAsync(publisher, topic, $"m{i}", QoS1);
        }

        // Section 4.8.2: each message matching a shared subscription goes to one session of the
        // group only, while a non-shared subscription still gets every message.
        var results = await Task.WhenAll(ReceiveAllAsync(memberA), ReceiveAllAsync(memberB), ReceiveAllAsync(everything));
        var (a, b, all) = (results[0], results[1], results[2]);
        a.Concat(b).Select(Text).Order().ShouldBe(Enumerable.Range(0, count).Select(i => $"m{i}").Order());
        all.Count.ShouldBe(count);

        // Not a MUST, but the point of sharing: with 20 messages both members do some work.
        a.ShouldNotBeEmpty();
        b.ShouldNotBeEmpty();
    }
}

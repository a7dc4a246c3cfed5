using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>PUBLISH at QoS 0, 1 and 2, both directions; ordering; redelivery; flow control.</summary>
public abstract partial class BrokerConformanceTests
{
    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Qos0_message_is_delivered_at_qos0_without_packet_id_or_dup(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS2);

        await PublishAsync(publisher, topic, "qos0", QoS0);

        // [MQTT-4.3.1-1] (both: the sender uses QoS 0, DUP 0); 5.0 [MQTT-3.3.1-2] (DUP 0 for QoS 0);
        // the delivered QoS is the lower of published and granted (3.1.1 [MQTT-3.8.4-6] / 5.0 [MQTT-3.8.4-8]).
        var message = await ExpectMessageAsync(subscriber, topic);
        message.QoS.ShouldBe(QoS0);
        message.Dup.ShouldBeFalse();
        Text(message).ShouldBe("qos0");
        await subscriber.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Qos1_publish_is_acknowledged_with_its_packet_id_and_delivered_once_at_qos1(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS1);

        // Receiver side of QoS 1, the broker receiving: PUBACK with the PUBLISH's packet id
        // (3.1.1 [MQTT-4.3.2-2] / 5.0 [MQTT-4.3.2-4], [MQTT-2.2.1-5]).
        await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8("qos1"), QoS = QoS1, PacketId = 4711 });
        await ExpectAckAsync(publisher, MqttPacketType.PubAck, 4711);

        // Sender side, the broker sending: a new non-zero packet id, QoS 1, DUP 0
        // (3.1.1 [MQTT-4.3.2-1] / 5.0 [MQTT-4.3.2-1], [MQTT-4.3.2-2]).
        var message = await ExpectMessageAsync(subscriber, topic);
        message.QoS.ShouldBe(QoS1);
        message.Dup.ShouldBeFalse();
        Text(message).ShouldBe("qos1");
        await AcknowledgeAsync(subscriber, message);

        // Acknowledged: never sent again on this connection (5.0 [MQTT-4.4.0-1]: resend only on reconnect).
        await subscriber.ExpectNothingAsync();
        await publisher.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Qos2_publish_follows_the_exactly_once_flow_in_both_directions(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS2);

        // The broker receiving QoS 2: PUBREC with the packet id; a duplicate PUBLISH before
        // PUBREL is answered with PUBREC again and MUST NOT be delivered twice; PUBREL gets PUBCOMP.
        // 3.1.1 [MQTT-4.3.3-2]; 5.0 [MQTT-4.3.3-8], [MQTT-4.3.3-10], [MQTT-4.3.3-11].
        var publish = new PublishPacket { Topic = topic, Payload = Utf8("qos2"), QoS = QoS2, PacketId = 815 };
        await publisher.SendAsync(publish);
        await ExpectAckAsync(publisher, MqttPacketType.PubRec, 815);
        publish.Dup = true;
        await publisher.SendAsync(publish);
        await ExpectAckAsync(publisher, MqttPacketType.PubRec, 815);
        await publisher.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 815 });
        await ExpectAckAsync(publisher, MqttPacketType.PubComp, 815);

        // The broker sending QoS 2: PUBLISH (QoS 2, DUP 0), our PUBREC, its PUBREL with the same
        // id, our PUBCOMP. 3.1.1 [MQTT-4.3.3-1]; 5.0 [MQTT-4.3.3-1]..[MQTT-4.3.3-5].
        var message = await ExpectMessageAsync(subscriber, topic);
        message.QoS.ShouldBe(QoS2);
        message.Dup.ShouldBeFalse("DUP is set only when re-delivering ([MQTT-3.3.1-3]), whatever the publisher sent");
        Text(message).ShouldBe("qos2");
        await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = message.PacketId });
        await ExpectAckAsync(subscriber, MqttPacketType.PubRel, message.PacketId);
        await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = message.PacketId });

        // Exactly once: no second copy, no repeated PUBREL.
        await subscriber.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Delivered_qos_is_the_lower_of_the_published_and_the_granted_qos(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var atQoS1 = await ConnectedAsync(version);
        await using var atQoS2 = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(atQoS1, topic, QoS1);
        await SubscribeAsync(atQoS2, topic, QoS2);

        // 3.1.1 [MQTT-3.8.4-6] / 5.0 [MQTT-3.8.4-8].
        await PublishAsync(publisher, topic, "published at 2", QoS2);
        (await ReceiveAsync(atQoS1, topic)).QoS.ShouldBe(QoS1);
        (await ReceiveAsync(atQoS2, topic)).QoS.ShouldBe(QoS2);

        await PublishAsync(publisher, topic, "published at 1", QoS1);
        (await ReceiveAsync(atQoS1, topic)).QoS.ShouldBe(QoS1);
        (await ReceiveAsync(atQoS2, topic)).QoS.ShouldBe(QoS1);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Acknowledgements_and_deliveries_keep_the_order_of_publishing(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS2);

        // Ten QoS 1 and five QoS 2 messages back to back, without waiting for acknowledgements.
        ushort[] qos1Ids = [.. Enumerable.Range(1, 10).Select(i => (ushort)(100 + i))];
        ushort[] qos2Ids = [.. Enumerable.Range(1, 5).Select(i => (ushort)(200 + i))];
        foreach (var (id, i) in qos1Ids.Select((id, i) => (id, i)))
        {
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8($"q1-{i}"), QoS = QoS1, PacketId = id });
        }

        foreach (var (id, i) in qos2Ids.Select((id, i) => (id, i)))
        {
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8($"q2-{i}"), QoS = QoS2, PacketId = id });
        }

        // PUBACKs in the order of the PUBLISHes, then PUBRECs likewise, then PUBCOMPs in the
        // order of the PUBRELs. 3.1.1 [MQTT-4.6.0-2]..[MQTT-4.6.0-4], which bind a server
        // through [MQTT-4.6.0-6]; 5.0 states these rules for clients ([MQTT-4.6.0-2]..[MQTT-4.6.0-4])
        // and every broker keeps them: a client matching acknowledgements to messages relies on it.
        foreach (ushort id in qos1Ids)
        {
            await ExpectAckAsync(publisher, MqttPacketType.PubAck, id);
        }

        foreach (ushort id in qos2Ids)
        {
            await ExpectAckAsync(publisher, MqttPacketType.PubRec, id);
        }

        foreach (ushort id in qos2Ids)
        {
            await publisher.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = id });
        }

        foreach (ushort id in qos2Ids)
        {
            await ExpectAckAsync(publisher, MqttPacketType.PubComp, id);
        }

        // The subscriber gets them in the order they were published, per QoS.
        // 3.1.1 [MQTT-4.6.0-5], [MQTT-4.6.0-6]; 5.0 [MQTT-4.6.0-5], [MQTT-4.6.0-6].
        var received = await ReceiveAllAsync(subscriber);
        received.Where(m => m.QoS == QoS1).Select(Text).ShouldBe(Enumerable.Range(0, 10).Select(i => $"q1-{i}"));
        received.Where(m => m.QoS == QoS2).Select(Text).ShouldBe(Enumerable.Range(0, 5).Select(i => $"q2-{i}"));
        received.Count.ShouldBe(15);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Dup_flag_of_an_incoming_publish_is_not_forwarded(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(version);
        await using var publisher = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS1);

        await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8("dup"), QoS = QoS1, PacketId = 9, Dup = true });
        await ExpectAckAsync(publisher, MqttPacketType.PubAck, 9);

        // [MQTT-3.3.1-3] (both): the outgoing DUP depends only on whether the outgoing PUBLISH is a retransmission.
        var message = await ReceiveAsync(subscriber, topic);
        message.Dup.ShouldBeFalse();
    }

    [Theory]
    [InlineData(V311, QoS1)]
    [InlineData(V311, QoS2)]
    [InlineData(V500, QoS1)]
    [InlineData(V500, QoS2)]
    public async Task Unacknowledged_message_is_redelivered_with_dup_when_the_session_resumes(MqttProtocolVersion version, MqttQoS qos)
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;
        await using var publisher = await ConnectedAsync(version);
        PublishPacket first;
        await using (var subscriber = await ConnectedAsync(version, clientId, cleanStart: version == V500, properties: persistent))
        {
            await SubscribeAsync(subscriber, topic, qos);
            await PublishAsync(publisher, topic, "unacknowledged", qos);
            first = await ExpectMessageAsync(subscriber, topic);
            first.QoS.ShouldBe(qos);
            first.Dup.ShouldBeFalse();
            subscriber.Abort();
        }

        // 3.1.1 and 5.0 [MQTT-4.4.0-1]: on reconnect with a session, unacknowledged PUBLISH packets
        // are re-sent with their original packet identifiers; [MQTT-3.3.1-1]: with DUP set.
        await using var resumed = await OpenAsync();
        var connAck = await resumed.ConnectAsync(version, clientId, cleanStart: false, properties: persistent);
        connAck.ReasonCode.ShouldBe((byte)0);
        connAck.SessionPresent.ShouldBeTrue();
        var again = await ExpectMessageAsync(resumed, topic);
        again.Dup.ShouldBeTrue();
        again.PacketId.ShouldBe(first.PacketId);
        again.QoS.ShouldBe(qos);
        Text(again).ShouldBe("unacknowledged");
        await AcknowledgeAsync(resumed, again);
        await resumed.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Qos2_delivery_in_progress_resumes_with_pubrel_not_the_message_when_the_session_resumes(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;
        await using var publisher = await ConnectedAsync(version);
        ushort packetId;
        await using (var subscriber = await ConnectedAsync(version, clientId, cleanStart: version == V500, properties: persistent))
        {
            await SubscribeAsync(subscriber, topic, QoS2);
            await PublishAsync(publisher, topic, "half way", QoS2);
            var message = await ExpectMessageAsync(subscriber, topic);
            packetId = message.PacketId;
            await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = packetId });
            await ExpectAckAsync(subscriber, MqttPacketType.PubRel, packetId);
            subscriber.Abort(); // before PUBCOMP
        }

        // [MQTT-4.4.0-1] (both): unacknowledged PUBREL packets are re-sent with their original
        // packet identifiers. 5.0 [MQTT-4.3.3-6]: the PUBLISH is not re-sent once PUBREL was.
        await using var resumed = await OpenAsync();
        var connAck = await resumed.ConnectAsync(version, clientId, cleanStart: false, properties: persistent);
        connAck.SessionPresent.ShouldBeTrue();
        await ExpectAckAsync(resumed, MqttPacketType.PubRel, packetId);
        await resumed.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = packetId });
        await resumed.ExpectNothingAsync();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Publisher_resending_pubrel_after_reconnect_completes_the_qos2_flow_once(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;
        await using var subscriber = await ConnectedAsync(version);
        await SubscribeAsync(subscriber, topic, QoS2);
        await using (var publisher = await ConnectedAsync(version, clientId, cleanStart: version == V500, properties: persistent))
        {
            await publisher.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8("exactly once"), QoS = QoS2, PacketId = 77 });
            await ExpectAckAsync(publisher, MqttPacketType.PubRec, 77);
            publisher.Abort(); // before PUBREL
        }

        // The client re-sends its PUBREL on the resumed session ([MQTT-4.4.0-1]); the broker
        // answers PUBCOMP (3.1.1 [MQTT-4.3.3-2] / 5.0 [MQTT-4.3.3-11]) and the message reaches
        // the subscriber once.
        await using var resumed = await OpenAsync();
        (await resumed.ConnectAsync(version, clientId, cleanStart: false, properties: persistent)).SessionPresent.ShouldBeTrue();
        await resumed.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 77 });
        await ExpectAckAsync(resumed, MqttPacketType.PubComp, 77);

        var received = await ReceiveAllAsync(subscriber);
        received.Select(Text).ShouldBe(["exactly once"]);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Messages_for_an_offline_persistent_session_are_kept_until_it_reconnects(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;
        await using (var subscriber = await ConnectedAsync(version, clientId, cleanStart: version == V500, properties: persistent))
        {
            await SubscribeAsync(subscriber, topic, QoS2);
            await subscriber.DisconnectAsync();
        }

        await using var publisher = await ConnectedAsync(version);
        await PublishAsync(publisher, topic, "while away 1", QoS1);
        await PublishAsync(publisher, topic, "while away 2", QoS2);

        // 3.1.1 [MQTT-3.1.2-5]: QoS 1 and 2 messages for a disconnected session are stored and
        // delivered; 5.0 [MQTT-3.1.2-23] (the session outlives the connection) and [MQTT-4.5.0-1].
        await using var resumed = await OpenAsync();
        (await resumed.ConnectAsync(version, clientId, cleanStart: false, properties: persistent)).SessionPresent.ShouldBeTrue();
        var received = await ReceiveAllAsync(resumed);
        received.Select(Text).ShouldBe(["while away 1", "while away 2"]);
    }

    [Fact]
    public async Task Broker_never_has_more_unacknowledged_messages_in_flight_than_the_client_receive_maximum()
    {
        Assert.SkipWhen(ReceiveMaximumDeviation is not null, ReceiveMaximumDeviation ?? string.Empty);
        string topic = NewTopic();
        await using var subscriber = await ConnectedAsync(V500, properties: new MqttProperties { ReceiveMaximum = 2 });
        await using var publisher = await ConnectedAsync(V500);
        await SubscribeAsync(subscriber, topic, QoS2);
        MqttQoS[] levels = [QoS1, QoS2, QoS1, QoS2, QoS1, QoS1];
        foreach (var (qos, i) in levels.Select((qos, i) => (qos, i)))
        {
            await PublishAsync(publisher, topic, $"m{i}", qos);
        }

        // [MQTT-3.3.4-9]: no more than Receive Maximum QoS 1 and 2 PUBLISH packets without their
        // PUBACK / PUBCOMP. [MQTT-3.3.4-10]: other packets are not held back meanwhile.
        // [MQTT-2.2.1-4]: packet ids in flight are distinct.
        var first = await ExpectMessageAsync(subscriber, topic);
        var second = await ExpectMessageAsync(subscriber, topic);
        second.PacketId.ShouldNotBe(first.PacketId);
        (Text(first), Text(second)).ShouldBe(("m0", "m1"));
        await subscriber.ExpectNothingAsync();
        await subscriber.SendAsync(PingReqPacket.Instance);
        await subscriber.ExpectAsync<PingRespPacket>();

        // PUBREC for the QoS 2 message does not free its slot: only PUBCOMP does.
        await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = second.PacketId });
        await ExpectAckAsync(subscriber, MqttPacketType.PubRel, second.PacketId);
        await subscriber.ExpectNothingAsync();
        await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = second.PacketId });
        var third = await ExpectMessageAsync(subscriber, topic);
        Text(third).ShouldBe("m2");
        await subscriber.ExpectNothingAsync();

        // Each completed acknowledgement lets exactly one more through, in order; nothing comes
        // between a PUBREC and its PUBREL while the window is full.
        var inFlight = new List<PublishPacket> { first, third };
        var delivered = new List<string> { "m0", "m1", "m2" };
        while (inFlight.Count > 0)
        {
            var oldest = inFlight[0];
            inFlight.RemoveAt(0);
            if (oldest.QoS == QoS2)
            {
                await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = oldest.PacketId });
                var release = await subscriber.ExpectAsync<PublishAckPacket>();
                (release.Type, release.PacketId).ShouldBe((MqttPacketType.PubRel, oldest.PacketId));
                await subscriber.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = oldest.PacketId });
            }
            else
            {
                await AcknowledgeAsync(subscriber, oldest);
            }

            if (delivered.Count < levels.Length)
            {
                var next = await ExpectMessageAsync(subscriber, topic);
                inFlight.Select(p => p.PacketId).ShouldNotContain(next.PacketId);
                inFlight.Add(next);
                delivered.Add(Text(next));
                await subscriber.ExpectNothingAsync(TimeSpan.FromMilliseconds(100));
            }
        }

        delivered.ShouldBe(levels.Select((_, i) => $"m{i}"));
    }
}

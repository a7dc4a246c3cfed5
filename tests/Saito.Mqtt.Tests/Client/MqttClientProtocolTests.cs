using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;
using static Saito.Mqtt.Tests.Client.ClientTestSupport;

namespace Saito.Mqtt.Tests.Client;

/// <summary>
/// Protocol details checked packet by packet against a <see cref="ScriptedBroker"/>. Where a test must show that
/// something was NOT sent, the client then sends a QoS 0 "sentinel" PUBLISH: the broker's next packet must be that
/// sentinel, so nothing was sent in between (no sleeps).
/// </summary>
public sealed class MqttClientProtocolTests
{
    private static MqttClientOptions Options(ScriptedBroker broker, MqttProtocolVersion version = MqttProtocolVersion.V500) =>
        ClientTestSupport.Options(new BrokerEndpoint("scripted", "127.0.0.1", broker.Port, null, null, null), version);

    private static PublishPacket Publish(ushort id, MqttQoS qos, string text, bool dup = false) =>
        new() { Topic = "t/in", Payload = Utf8(text), QoS = qos, PacketId = id, Dup = dup };

    private static async Task SendSentinelAsync(MqttClient client) =>
        await client.PublishAsync("t/sentinel", Utf8("sentinel"), MqttQoS.AtMostOnce, cancellationToken: TestContext.Current.CancellationToken);

    private static async Task ExpectSentinelAsync(ScriptedConnection connection) =>
        (await connection.ExpectAsync<PublishPacket>()).Topic.ShouldBe("t/sentinel");

    [Fact]
    public async Task Connect_carries_the_configured_session_and_a_reconnect_asks_to_resume_it()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker);
        options.ClientId = "instance-1";
        options.CleanStart = true;
        options.SessionExpiry = TimeSpan.FromMinutes(10);
        options.KeepAlive = TimeSpan.FromSeconds(45);
        options.ReceiveMaximum = 7;
        options.MaxPacketSize = 4096;
        options.UserName = "saito";
        options.Password = "secret";
        options.Will = new MqttWill { Topic = "saito/status", Payload = Utf8("gone"), QoS = MqttQoS.AtLeastOnce, Retain = true };
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (first, connect) = await broker.AcceptSessionAsync();
        await connecting;

        connect.ProtocolVersion.ShouldBe(MqttProtocolVersion.V500);
        connect.ClientId.ShouldBe("instance-1");
        connect.CleanStart.ShouldBeTrue();
        connect.KeepAliveSeconds.ShouldBe((ushort)45);
        connect.Properties.ShouldNotBeNull();
        connect.Properties.SessionExpiryInterval.ShouldBe(600u);
        connect.Properties.ReceiveMaximum.ShouldBe((ushort)7);
        connect.Properties.MaximumPacketSize.ShouldBe(4096u);
        connect.UserName.ShouldBe("saito");
        connect.Password!.Value.ToArray().ShouldBe(Utf8("secret"));
        connect.Will.ShouldNotBeNull();
        connect.Will.Topic.ShouldBe("saito/status");
        connect.Will.QoS.ShouldBe(MqttQoS.AtLeastOnce);
        connect.Will.Retain.ShouldBeTrue();

        first.Drop();
        var (_, reconnect) = await broker.AcceptSessionAsync(sessionPresent: true);

        reconnect.CleanStart.ShouldBeFalse();
        reconnect.ClientId.ShouldBe("instance-1");
    }

    [Fact]
    public async Task Connect_without_credentials_sets_neither_user_name_nor_password()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker, MqttProtocolVersion.V311));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (_, connect) = await broker.AcceptSessionAsync();
        await connecting;

        connect.ProtocolVersion.ShouldBe(MqttProtocolVersion.V311);
        connect.UserName.ShouldBeNull();
        connect.Password.ShouldBeNull();
        connect.Will.ShouldBeNull();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task Unacknowledged_qos_1_publish_is_resent_with_dup_and_the_same_id_when_the_session_resumes(MqttProtocolVersion version)
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker, version);
        options.CleanStart = false;
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (first, _) = await broker.AcceptSessionAsync();
        await connecting;

        var publish = client.PublishAsync("t/out", Utf8("payload"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        var original = await first.ExpectAsync<PublishPacket>();
        original.Dup.ShouldBeFalse();
        first.Drop();

        var (second, _) = await broker.AcceptSessionAsync(sessionPresent: true);
        var resent = await second.ExpectAsync<PublishPacket>();
        resent.Dup.ShouldBeTrue();
        resent.PacketId.ShouldBe(original.PacketId);
        resent.Topic.ShouldBe("t/out");
        resent.Payload.ToArray().ShouldBe(Utf8("payload"));
        publish.IsCompleted.ShouldBeFalse();
        await second.SendAsync(new PublishAckPacket(MqttPacketType.PubAck) { PacketId = resent.PacketId });

        using var cts = TimeoutToken();
        (await publish.WaitAsync(cts.Token)).IsSuccess.ShouldBeTrue();
    }

    [Fact]
    public async Task Qos_2_publish_interrupted_after_pubrec_resends_pubrel_and_completes_at_pubcomp()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker);
        options.CleanStart = false;
        options.SessionExpiry = TimeSpan.FromMinutes(1);
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (first, _) = await broker.AcceptSessionAsync();
        await connecting;

        var publish = client.PublishAsync("t/out", Utf8("exactly once"), MqttQoS.ExactlyOnce, cancellationToken: TestContext.Current.CancellationToken);
        var sent = await first.ExpectAsync<PublishPacket>();
        await first.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = sent.PacketId });
        (await first.ExpectAckAsync(MqttPacketType.PubRel)).PacketId.ShouldBe(sent.PacketId);
        first.Drop();

        var (second, _) = await broker.AcceptSessionAsync(sessionPresent: true);

        // The message is the broker's already: only the release is repeated, never the PUBLISH.
        (await second.ExpectAckAsync(MqttPacketType.PubRel)).PacketId.ShouldBe(sent.PacketId);
        publish.IsCompleted.ShouldBeFalse();
        await second.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = sent.PacketId });
        using var cts = TimeoutToken();
        (await publish.WaitAsync(cts.Token)).IsSuccess.ShouldBeTrue();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311)]
    [InlineData(MqttProtocolVersion.V500)]
    public async Task Acknowledgements_go_out_in_arrival_order_when_the_application_acknowledges_out_of_order(MqttProtocolVersion version)
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker, version));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;
        await connection.SendAsync(Publish(1, MqttQoS.AtLeastOnce, "one"));
        await connection.SendAsync(Publish(2, MqttQoS.ExactlyOnce, "two"));
        await connection.SendAsync(Publish(3, MqttQoS.AtLeastOnce, "three"));
        var one = await client.Messages.NextAsync();
        var two = await client.Messages.NextAsync();
        var three = await client.Messages.NextAsync();

        (await three.AcknowledgeAsync()).ShouldBeTrue();
        (await two.AcknowledgeAsync()).ShouldBeTrue();
        await SendSentinelAsync(client);
        await ExpectSentinelAsync(connection);

        (await one.AcknowledgeAsync()).ShouldBeTrue();
        (await connection.ExpectAckAsync(MqttPacketType.PubAck)).PacketId.ShouldBe((ushort)1);
        (await connection.ExpectAckAsync(MqttPacketType.PubRec)).PacketId.ShouldBe((ushort)2);
        (await connection.ExpectAckAsync(MqttPacketType.PubAck)).PacketId.ShouldBe((ushort)3);
        await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 2 });
        (await connection.ExpectAckAsync(MqttPacketType.PubComp)).PacketId.ShouldBe((ushort)2);
    }

    [Fact]
    public async Task Duplicate_qos_2_publish_before_pubrel_is_delivered_to_the_application_once()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;

        // A copy while the application still holds the message...
        await connection.SendAsync(Publish(7, MqttQoS.ExactlyOnce, "once"));
        await connection.SendAsync(Publish(7, MqttQoS.ExactlyOnce, "once", dup: true));
        await connection.SendAsync(Publish(0, MqttQoS.AtMostOnce, "marker 1"));
        var message = await client.Messages.NextAsync();
        message.Text().ShouldBe("once");
        (await client.Messages.NextAsync()).Text().ShouldBe("marker 1");
        (await message.AcknowledgeAsync()).ShouldBeTrue();
        (await connection.ExpectAckAsync(MqttPacketType.PubRec)).PacketId.ShouldBe((ushort)7);

        // ...and a copy after PUBREC (as if it was lost): answered again, still not delivered.
        await connection.SendAsync(Publish(7, MqttQoS.ExactlyOnce, "once", dup: true));
        (await connection.ExpectAckAsync(MqttPacketType.PubRec)).PacketId.ShouldBe((ushort)7);
        await connection.SendAsync(Publish(0, MqttQoS.AtMostOnce, "marker 2"));
        (await client.Messages.NextAsync()).Text().ShouldBe("marker 2");

        await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = 7 });
        (await connection.ExpectAckAsync(MqttPacketType.PubComp)).PacketId.ShouldBe((ushort)7);

        // Released: the identifier is free, and a new message under it is a new message.
        await connection.SendAsync(Publish(7, MqttQoS.ExactlyOnce, "next"));
        (await client.Messages.NextAsync()).Text().ShouldBe("next");
    }

    [Fact]
    public async Task Unacknowledged_inbound_messages_are_bounded_by_the_receive_maximum()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker, MqttProtocolVersion.V311);
        options.ReceiveMaximum = 2;
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;

        // A 3.1.1 broker knows no receive maximum: the client must hold the line itself.
        for (ushort id = 1; id <= 4; id++)
        {
            await connection.SendAsync(Publish(id, MqttQoS.AtLeastOnce, $"m{id}"));
        }

        var first = await client.Messages.NextAsync();
        var second = await client.Messages.NextAsync();
        var third = client.Messages.WaitToReadAsync(TestContext.Current.CancellationToken).AsTask();
        (await Task.WhenAny(third, Task.Delay(500, TestContext.Current.CancellationToken))).ShouldNotBe(third, "a third message arrived while two were unacknowledged");

        (await second.AcknowledgeAsync()).ShouldBeTrue();
        (await first.AcknowledgeAsync()).ShouldBeTrue();
        (await client.Messages.NextAsync()).Text().ShouldBe("m3");
        (await client.Messages.NextAsync()).Text().ShouldBe("m4");
        (await connection.ExpectAckAsync(MqttPacketType.PubAck)).PacketId.ShouldBe((ushort)1);
        (await connection.ExpectAckAsync(MqttPacketType.PubAck)).PacketId.ShouldBe((ushort)2);
    }

    [Fact]
    public async Task Acknowledgement_of_a_message_from_a_dropped_connection_is_never_sent_on_the_new_one()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker, MqttProtocolVersion.V311);
        options.CleanStart = false;
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (first, _) = await broker.AcceptSessionAsync();
        await connecting;
        await first.SendAsync(Publish(5, MqttQoS.AtLeastOnce, "in hand"));
        var inHand = await client.Messages.NextAsync();
        first.Drop();

        var (second, _) = await broker.AcceptSessionAsync(sessionPresent: true);
        (await inHand.AcknowledgeAsync()).ShouldBeFalse();
        await SendSentinelAsync(client);
        await ExpectSentinelAsync(second);

        // The broker redelivers; that copy is acknowledged normally.
        await second.SendAsync(Publish(5, MqttQoS.AtLeastOnce, "in hand", dup: true));
        var redelivered = await client.Messages.NextAsync();
        redelivered.Dup.ShouldBeTrue();
        (await redelivered.AcknowledgeAsync()).ShouldBeTrue();
        (await second.ExpectAckAsync(MqttPacketType.PubAck)).PacketId.ShouldBe((ushort)5);
    }

    [Fact]
    public async Task Publish_refused_at_pubrec_completes_with_the_reason_and_sends_no_pubrel()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;

        var publish = client.PublishAsync("t/out", Utf8("x"), MqttQoS.ExactlyOnce, cancellationToken: TestContext.Current.CancellationToken);
        var sent = await connection.ExpectAsync<PublishPacket>();
        await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubRec)
        {
            PacketId = sent.PacketId,
            ReasonCode = MqttReasonCode.QuotaExceeded,
            Properties = new MqttProperties { ReasonString = "slow down" },
        });

        using var cts = TimeoutToken();
        var result = await publish.WaitAsync(cts.Token);
        result.ReasonCode.ShouldBe(MqttReasonCode.QuotaExceeded);
        result.ReasonString.ShouldBe("slow down");
        Should.Throw<MqttPublishException>(() => result.EnsureSuccess()).Message.ShouldContain("slow down");
        await SendSentinelAsync(client);
        await ExpectSentinelAsync(connection);
    }

    [Fact]
    public async Task Outbound_qos_1_publishes_wait_for_the_brokers_receive_maximum()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync(connAckProperties: new MqttProperties { ReceiveMaximum = 1 });
        await connecting;

        var firstPublish = client.PublishAsync("t/out", Utf8("1"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        var first = await connection.ExpectAsync<PublishPacket>();
        var secondPublish = client.PublishAsync("t/out", Utf8("2"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        await SendSentinelAsync(client);
        await ExpectSentinelAsync(connection);

        await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubAck) { PacketId = first.PacketId });
        var second = await connection.ExpectAsync<PublishPacket>();
        second.Payload.ToArray().ShouldBe(Utf8("2"));
        await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubAck) { PacketId = second.PacketId });
        using var cts = TimeoutToken();
        await Task.WhenAll(firstPublish, secondPublish).WaitAsync(cts.Token);
    }

    [Fact]
    public async Task Missing_pingresp_closes_the_connection_and_the_client_reconnects()
    {
        await using var broker = new ScriptedBroker();
        var logger = new TestLogger();
        var options = Options(broker, MqttProtocolVersion.V311);
        options.KeepAlive = TimeSpan.FromSeconds(1);
        await using var client = new MqttClient(options, logger);
        var events = new ConnectionEvents(client);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (silent, _) = await broker.AcceptSessionAsync();
        await connecting;
        await events.NextAsync<MqttClientConnectedEventArgs>();

        await silent.ExpectAsync<PingReqPacket>();

        var lost = await events.NextAsync<MqttClientDisconnectedEventArgs>();
        lost.Exception.ShouldBeOfType<TimeoutException>();
        lost.WillReconnect.ShouldBeTrue();
        logger.Count(2012).ShouldBe(1);
        await broker.AcceptSessionAsync();
        (await events.NextAsync<MqttClientConnectedEventArgs>()).IsReconnect.ShouldBeTrue();
    }

    [Fact]
    public async Task Broker_disconnect_with_a_reason_code_is_reported_in_the_disconnected_event()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker));
        var events = new ConnectionEvents(client);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;
        await events.NextAsync<MqttClientConnectedEventArgs>();

        await connection.SendAsync(new DisconnectPacket
        {
            ReasonCode = MqttReasonCode.ServerShuttingDown,
            Properties = new MqttProperties { ReasonString = "maintenance" },
        });

        var lost = await events.NextAsync<MqttClientDisconnectedEventArgs>();
        var reason = lost.Exception.ShouldBeOfType<MqttServerDisconnectException>();
        reason.ReasonCode.ShouldBe(MqttReasonCode.ServerShuttingDown);
        reason.ReasonString.ShouldBe("maintenance");
        lost.WillReconnect.ShouldBeTrue();
    }

    [Fact]
    public async Task Broker_assigned_client_identifier_is_kept_for_reconnects()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker);
        options.ClientId = string.Empty;
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (first, connect) = await broker.AcceptSessionAsync(connAckProperties: new MqttProperties { AssignedClientIdentifier = "given-by-broker" });
        var result = await connecting;

        connect.ClientId.ShouldBe(string.Empty);
        result.ClientId.ShouldBe("given-by-broker");
        client.ClientId.ShouldBe("given-by-broker");
        first.Drop();
        var (_, reconnect) = await broker.AcceptSessionAsync();
        reconnect.ClientId.ShouldBe("given-by-broker");
    }

    [Fact]
    public async Task Publish_with_a_property_the_codec_cannot_write_is_refused_before_it_reaches_the_connection()
    {
        await using var broker = new ScriptedBroker();
        await using var client = new MqttClient(Options(broker));
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        var (connection, _) = await broker.AcceptSessionAsync();
        await connecting;
        var message = new MqttApplicationMessage
        {
            Topic = "t/out",
            QoS = MqttQoS.AtLeastOnce,
            Properties = new MqttProperties { UserProperties = [new MqttUserProperty("big", new string('x', 70_000))] },
        };

        await Should.ThrowAsync<ArgumentException>(() => client.PublishAsync(message, TestContext.Current.CancellationToken));

        client.IsConnected.ShouldBeTrue();
        await SendSentinelAsync(client);
        await ExpectSentinelAsync(connection);
    }

    [Fact]
    public async Task Broker_that_never_answers_connect_fails_the_connect_with_a_timeout()
    {
        await using var broker = new ScriptedBroker();
        var options = Options(broker);
        options.ConnectTimeout = TimeSpan.FromMilliseconds(300);
        await using var client = new MqttClient(options);
        var connecting = client.ConnectAsync(TestContext.Current.CancellationToken);
        await using var mute = await broker.AcceptAsync();
        await mute.ExpectAsync<ConnectPacket>();

        await Should.ThrowAsync<TimeoutException>(connecting);

        client.IsConnected.ShouldBeFalse();
    }
}

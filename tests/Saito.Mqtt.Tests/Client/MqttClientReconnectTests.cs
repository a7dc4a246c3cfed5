using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;
using static Saito.Mqtt.Tests.Client.ClientTestSupport;

namespace Saito.Mqtt.Tests.Client;

/// <summary>The client against a private Mosquitto each, which the test kills, restarts or configures to refuse.</summary>
public sealed class MqttClientReconnectTests
{
    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Client_reconnects_and_resubscribes_after_mosquitto_is_killed_and_restarted(MqttProtocolVersion version)
    {
        await using var broker = await MosquittoInstance.StartAsync();
        var logger = new TestLogger();
        string topic = NewTopic("after-restart");
        await using var subscriber = new MqttClient(Options(broker.Endpoint, version), logger);
        var events = new ConnectionEvents(subscriber);
        await subscriber.ConnectAsync(TestContext.Current.CancellationToken);
        await events.NextAsync<MqttClientConnectedEventArgs>();
        await subscriber.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);

        await broker.StopAsync();

        var lost = await events.NextAsync<MqttClientDisconnectedEventArgs>();
        lost.WillReconnect.ShouldBeTrue();
        lost.ClientInitiated.ShouldBeFalse();
        lost.Exception.ShouldNotBeNull();
        subscriber.IsConnected.ShouldBeFalse();

        // Let at least one attempt fail against the dead port, so the backoff path runs too.
        await logger.WaitForAsync(eventId: 2002);
        await broker.StartAsync();

        var back = await events.NextAsync<MqttClientConnectedEventArgs>();
        back.IsReconnect.ShouldBeTrue();
        back.Result.SessionPresent.ShouldBeFalse();
        logger.Count(2007).ShouldBe(1);
        await using var publisher = new MqttClient(Options(broker.Endpoint, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);
        await publisher.PublishAsync(topic, Utf8("after restart"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        var message = await subscriber.Messages.NextAsync();
        message.Text().ShouldBe("after restart");
        (await message.AcknowledgeAsync()).ShouldBeTrue();
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Qos_1_publish_made_while_the_broker_is_down_is_delivered_once_it_is_back(MqttProtocolVersion version)
    {
        await using var broker = await MosquittoInstance.StartAsync();
        string topic = NewTopic("outage");
        await using var subscriber = new MqttClient(Options(broker.Endpoint, version));
        await using var publisher = new MqttClient(Options(broker.Endpoint, version));
        var subscriberEvents = new ConnectionEvents(subscriber);
        var publisherEvents = new ConnectionEvents(publisher);
        await subscriber.ConnectAsync(TestContext.Current.CancellationToken);
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);
        await subscriberEvents.NextAsync<MqttClientConnectedEventArgs>();
        await publisherEvents.NextAsync<MqttClientConnectedEventArgs>();
        await subscriber.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);

        await broker.StopAsync();
        await publisherEvents.NextAsync<MqttClientDisconnectedEventArgs>();
        // Retained, so it reaches the subscriber whichever of the two clients is back first.
        var publish = publisher.PublishAsync(
            new MqttApplicationMessage { Topic = topic, Payload = Utf8("sent during the outage"), QoS = MqttQoS.AtLeastOnce, Retain = true },
            TestContext.Current.CancellationToken);
        publish.IsCompleted.ShouldBeFalse();
        await subscriberEvents.NextAsync<MqttClientDisconnectedEventArgs>();
        await broker.StartAsync();

        await subscriberEvents.NextAsync<MqttClientConnectedEventArgs>();
        await publisherEvents.NextAsync<MqttClientConnectedEventArgs>();
        using var cts = TimeoutToken();
        var result = await publish.WaitAsync(cts.Token);
        result.IsSuccess.ShouldBeTrue();
        var message = await subscriber.Messages.NextAsync();
        message.Text().ShouldBe("sent during the outage");
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, 5)]
    [InlineData(MqttProtocolVersion.V500, 0x87)]
    public async Task Refused_connection_throws_with_the_connack_code(MqttProtocolVersion version, byte expected)
    {
        await using var broker = await MosquittoInstance.StartAsync("allow_anonymous false");
        await using var client = new MqttClient(Options(broker.Endpoint, version));

        var refused = await Should.ThrowAsync<MqttConnectException>(() => client.ConnectAsync(TestContext.Current.CancellationToken));

        refused.Code.ShouldBe(expected);
        refused.ReasonCode.ShouldBe(MqttReasonCode.NotAuthorized);
        refused.ProtocolVersion.ShouldBe(version);
        refused.Message.ShouldContain("NotAuthorized");
        client.IsConnected.ShouldBeFalse();
    }

    [Fact]
    public async Task Publish_refused_by_the_brokers_acl_returns_the_5_0_reason_code()
    {
        string acl = Path.Combine(Path.GetTempPath(), $"saito-acl-{Guid.NewGuid():N}");
        await File.WriteAllTextAsync(acl, "topic readwrite allowed/#\n", TestContext.Current.CancellationToken);
        try
        {
            await using var broker = await MosquittoInstance.StartAsync($"acl_file {acl}");
            await using var client = new MqttClient(Options(broker.Endpoint, MqttProtocolVersion.V500));
            await client.ConnectAsync(TestContext.Current.CancellationToken);

            var qos1 = await client.PublishAsync("denied/x", Utf8("no"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
            var qos2 = await client.PublishAsync("denied/x", Utf8("no"), MqttQoS.ExactlyOnce, cancellationToken: TestContext.Current.CancellationToken);

            qos1.ReasonCode.ShouldBe(MqttReasonCode.NotAuthorized);
            qos1.IsSuccess.ShouldBeFalse();
            Should.Throw<MqttPublishException>(() => qos1.EnsureSuccess()).Result.ShouldBe(qos1);
            qos2.ReasonCode.ShouldBe(MqttReasonCode.NotAuthorized);
            (await client.PublishAsync("allowed/x", Utf8("yes"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken)).IsSuccess.ShouldBeTrue();
        }
        finally
        {
            File.Delete(acl);
        }
    }
}

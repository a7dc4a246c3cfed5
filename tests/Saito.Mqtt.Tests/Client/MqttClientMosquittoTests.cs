using System.Collections.Concurrent;
using System.Diagnostics;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;
using Saito.Mqtt.Tests.Infrastructure;
using static Saito.Mqtt.Tests.Client.ClientTestSupport;

namespace Saito.Mqtt.Tests.Client;

/// <summary>The client against the shared, real Mosquitto: what any MQTT broker must do with it.</summary>
[Collection(MosquittoCollection.Name)]
public sealed class MqttClientMosquittoTests(MosquittoFixture mosquitto)
{
    private BrokerEndpoint Broker => mosquitto.Endpoint;

    public static TheoryData<MqttProtocolVersion> Versions => [MqttProtocolVersion.V311, MqttProtocolVersion.V500];

    public static TheoryData<MqttProtocolVersion, MqttQoS> VersionsAndQoS
    {
        get
        {
            var data = new TheoryData<MqttProtocolVersion, MqttQoS>();
            foreach (var version in new[] { MqttProtocolVersion.V311, MqttProtocolVersion.V500 })
            {
                foreach (var qos in new[] { MqttQoS.AtMostOnce, MqttQoS.AtLeastOnce, MqttQoS.ExactlyOnce })
                {
                    data.Add(version, qos);
                }
            }

            return data;
        }
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Client_connects_over_tcp_and_disconnects_cleanly(MqttProtocolVersion version)
    {
        await using var client = new MqttClient(Options(Broker, version));
        var events = new ConnectionEvents(client);

        var result = await client.ConnectAsync(TestContext.Current.CancellationToken);

        result.ReasonCode.ShouldBe(MqttReasonCode.Success);
        result.SessionPresent.ShouldBeFalse();
        client.IsConnected.ShouldBeTrue();
        (await events.NextAsync<MqttClientConnectedEventArgs>()).IsReconnect.ShouldBeFalse();

        await client.DisconnectAsync(TestContext.Current.CancellationToken);

        client.IsConnected.ShouldBeFalse();
        var disconnected = await events.NextAsync<MqttClientDisconnectedEventArgs>();
        disconnected.ClientInitiated.ShouldBeTrue();
        disconnected.WillReconnect.ShouldBeFalse();
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Client_connects_over_tls_trusting_the_ca_file_and_exchanges_messages(MqttProtocolVersion version)
    {
        var options = Options(Broker, version);
        options.Port = Broker.TlsPort!.Value;
        options.Tls = new MqttClientTlsOptions { Enabled = true, CaCertificatePath = Broker.CaCertificatePath, TargetHost = "localhost" };
        await using var client = new MqttClient(options);
        await client.ConnectAsync(TestContext.Current.CancellationToken);
        string topic = NewTopic("tls");
        (await client.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken)).AllGranted.ShouldBeTrue();

        var published = await client.PublishAsync(topic, Utf8("over tls"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        published.IsSuccess.ShouldBeTrue();
        var received = await client.Messages.NextAsync();
        received.Text().ShouldBe("over tls");
        (await received.AcknowledgeAsync()).ShouldBeTrue();
    }

    [Fact]
    public async Task Tls_connection_is_refused_when_the_broker_certificate_does_not_chain_to_the_configured_ca()
    {
        string otherCa = Path.Combine(Path.GetTempPath(), $"saito-other-ca-{Guid.NewGuid():N}.crt");
        using (var key = RSA.Create(2048))
        {
            var request = new CertificateRequest("CN=Some Other CA", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
            request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
            using var ca = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(1));
            await File.WriteAllTextAsync(otherCa, ca.ExportCertificatePem(), TestContext.Current.CancellationToken);
        }

        try
        {
            var options = Options(Broker, MqttProtocolVersion.V500);
            options.Port = Broker.TlsPort!.Value;
            options.Tls = new MqttClientTlsOptions { Enabled = true, CaCertificatePath = otherCa, TargetHost = "localhost" };
            await using var client = new MqttClient(options);

            await Should.ThrowAsync<AuthenticationException>(() => client.ConnectAsync(TestContext.Current.CancellationToken));

            client.IsConnected.ShouldBeFalse();
        }
        finally
        {
            File.Delete(otherCa);
        }
    }

    [Fact]
    public async Task Tls_custom_validation_callback_sees_the_broker_certificate_and_decides()
    {
        string? seenSubject = null;
        var options = Options(Broker, MqttProtocolVersion.V311);
        options.Port = Broker.TlsPort!.Value;
        options.Tls = new MqttClientTlsOptions
        {
            Enabled = true,
            TargetHost = "localhost",
            ServerCertificateValidation = (_, certificate, _, _) =>
            {
                seenSubject = certificate?.Subject;
                return seenSubject == "CN=localhost";
            },
        };
        await using var client = new MqttClient(options);

        await client.ConnectAsync(TestContext.Current.CancellationToken);

        seenSubject.ShouldBe("CN=localhost");
        client.IsConnected.ShouldBeTrue();
    }

    [Theory]
    [MemberData(nameof(VersionsAndQoS))]
    public async Task Message_published_at_each_qos_reaches_a_subscriber_at_that_qos(MqttProtocolVersion version, MqttQoS qos)
    {
        string topic = NewTopic("qos");
        await using var subscriber = new MqttClient(Options(Broker, version));
        await using var publisher = new MqttClient(Options(Broker, version));
        await subscriber.ConnectAsync(TestContext.Current.CancellationToken);
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);
        var granted = await subscriber.SubscribeAsync(topic, qos, TestContext.Current.CancellationToken);
        granted.ReasonCodes.ShouldBe([(MqttReasonCode)qos]);

        var result = await publisher.PublishAsync(topic, Utf8($"qos {(int)qos}"), qos, cancellationToken: TestContext.Current.CancellationToken);

        result.IsSuccess.ShouldBeTrue();
        if (qos != MqttQoS.AtMostOnce)
        {
            result.PacketId.ShouldNotBe((ushort)0);
        }

        var received = await subscriber.Messages.NextAsync();
        received.Topic.ShouldBe(topic);
        received.Text().ShouldBe($"qos {(int)qos}");
        received.QoS.ShouldBe(qos);
        received.Dup.ShouldBeFalse();
        (await received.AcknowledgeAsync()).ShouldBeTrue();
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Messages_cross_between_the_client_and_mosquittos_own_command_line_clients_at_qos_2(MqttProtocolVersion version)
    {
        string v = version == MqttProtocolVersion.V500 ? "5" : "311";
        string inbound = NewTopic("from-mosquitto-pub");
        string outbound = NewTopic("to-mosquitto-sub");
        await using var client = new MqttClient(Options(Broker, version));
        await client.ConnectAsync(TestContext.Current.CancellationToken);
        await client.SubscribeAsync(inbound, MqttQoS.ExactlyOnce, TestContext.Current.CancellationToken);

        // An independent subscriber first, so our publish has somewhere to go. It also listens to a probe topic,
        // and counts two messages: the one probe that finds it subscribed, then ours.
        string probe = NewTopic("probe");
        using var sub = StartTool("mosquitto_sub", $"-h 127.0.0.1 -p {Broker.Port} -V {v} -q 2 -C 2 -t {outbound} -t {probe}");
        await WaitForSubscriberAsync(probe);
        await RunToolAsync("mosquitto_pub", $"-h 127.0.0.1 -p {Broker.Port} -V {v} -q 2 -t {inbound} -m from-pub");

        var received = await client.Messages.NextAsync();
        received.Text().ShouldBe("from-pub");
        received.QoS.ShouldBe(MqttQoS.ExactlyOnce);
        await received.AcknowledgeAsync();
        (await client.PublishAsync(outbound, Utf8("from-saito"), MqttQoS.ExactlyOnce, cancellationToken: TestContext.Current.CancellationToken))
            .IsSuccess.ShouldBeTrue();
        using var cts = TimeoutToken();
        await sub.WaitForExitAsync(cts.Token);
        (await sub.StandardOutput.ReadToEndAsync(cts.Token)).Split('\n', StringSplitOptions.RemoveEmptyEntries).ShouldBe(["?", "from-saito"]);
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V311, MqttQoS.ExactlyOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.ExactlyOnce)]
    public async Task Unacknowledged_message_is_redelivered_to_the_persistent_session_and_acknowledged_one_is_not(MqttProtocolVersion version, MqttQoS qos)
    {
        string clientId = NewClientId();
        string topic = NewTopic("manual-ack");
        string sentinel = NewTopic("sentinel");
        await using var publisher = new MqttClient(Options(Broker, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);

        await using (var consumer = new MqttClient(PersistentSession(Broker, version, clientId)))
        {
            await consumer.ConnectAsync(TestContext.Current.CancellationToken);
            await consumer.SubscribeAsync([new MqttSubscription { TopicFilter = topic, QoS = qos }, new MqttSubscription { TopicFilter = sentinel, QoS = qos }],
                TestContext.Current.CancellationToken);
            await publisher.PublishAsync(topic, Utf8("acknowledged"), qos, cancellationToken: TestContext.Current.CancellationToken);
            await publisher.PublishAsync(sentinel, Utf8("-"), qos, cancellationToken: TestContext.Current.CancellationToken);
            await publisher.PublishAsync(topic, Utf8("held"), qos, cancellationToken: TestContext.Current.CancellationToken);

            var first = await consumer.Messages.NextAsync();
            var second = await consumer.Messages.NextAsync();
            var third = await consumer.Messages.NextAsync();
            first.Text().ShouldBe("acknowledged");
            third.Text().ShouldBe("held");
            (await first.AcknowledgeAsync()).ShouldBeTrue();
            (await second.AcknowledgeAsync()).ShouldBeTrue();

            // "held" is never acknowledged; DISCONNECT goes out after the queued acknowledgements.
        }

        await using var resumed = new MqttClient(PersistentSession(Broker, version, clientId));
        var result = await resumed.ConnectAsync(TestContext.Current.CancellationToken);
        result.SessionPresent.ShouldBeTrue();
        await publisher.PublishAsync(sentinel, Utf8("-"), qos, cancellationToken: TestContext.Current.CancellationToken);

        var redelivered = await resumed.Messages.ReadUntilSentinelAsync(sentinel);

        redelivered.Select(m => m.Text()).ShouldBe(["held"]);
        redelivered[0].Dup.ShouldBeTrue();
        (await redelivered[0].AcknowledgeAsync()).ShouldBeTrue();
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Acknowledgement_waits_behind_an_earlier_unacknowledged_message_so_both_are_redelivered(MqttProtocolVersion version)
    {
        string clientId = NewClientId();
        string topic = NewTopic("ordered-ack");
        string sentinel = NewTopic("sentinel");
        await using var publisher = new MqttClient(Options(Broker, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);

        await using (var consumer = new MqttClient(PersistentSession(Broker, version, clientId)))
        {
            await consumer.ConnectAsync(TestContext.Current.CancellationToken);
            await consumer.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
            await publisher.PublishAsync(topic, Utf8("one"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
            await publisher.PublishAsync(topic, Utf8("two"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
            _ = await consumer.Messages.NextAsync();
            var two = await consumer.Messages.NextAsync();

            // Recorded, but PUBACK for "two" may not overtake the missing one for "one".
            (await two.AcknowledgeAsync()).ShouldBeTrue();
        }

        await using var resumed = new MqttClient(PersistentSession(Broker, version, clientId));
        (await resumed.ConnectAsync(TestContext.Current.CancellationToken)).SessionPresent.ShouldBeTrue();
        await resumed.SubscribeAsync(sentinel, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
        await publisher.PublishAsync(sentinel, Utf8("-"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        var redelivered = await resumed.Messages.ReadUntilSentinelAsync(sentinel);

        redelivered.Select(m => m.Text()).ShouldBe(["one", "two"]);
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Out_of_order_acknowledgements_all_reach_the_broker_so_nothing_is_redelivered(MqttProtocolVersion version)
    {
        string clientId = NewClientId();
        string topic = NewTopic("out-of-order");
        string sentinel = NewTopic("sentinel");
        await using var publisher = new MqttClient(Options(Broker, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);

        await using (var consumer = new MqttClient(PersistentSession(Broker, version, clientId)))
        {
            await consumer.ConnectAsync(TestContext.Current.CancellationToken);
            await consumer.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
            for (int i = 1; i <= 3; i++)
            {
                await publisher.PublishAsync(topic, Utf8($"m{i}"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
            }

            var messages = new[] { await consumer.Messages.NextAsync(), await consumer.Messages.NextAsync(), await consumer.Messages.NextAsync() };
            (await messages[2].AcknowledgeAsync()).ShouldBeTrue();
            (await messages[0].AcknowledgeAsync()).ShouldBeTrue();
            (await messages[1].AcknowledgeAsync()).ShouldBeTrue();
        }

        await using var resumed = new MqttClient(PersistentSession(Broker, version, clientId));
        (await resumed.ConnectAsync(TestContext.Current.CancellationToken)).SessionPresent.ShouldBeTrue();
        await resumed.SubscribeAsync(sentinel, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
        await publisher.PublishAsync(sentinel, Utf8("-"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        (await resumed.Messages.ReadUntilSentinelAsync(sentinel)).ShouldBeEmpty();
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Persistent_session_resumes_with_subscriptions_and_the_messages_queued_while_away(MqttProtocolVersion version)
    {
        string clientId = NewClientId();
        string topic = NewTopic("queued");
        await using var publisher = new MqttClient(Options(Broker, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);
        await using (var first = new MqttClient(PersistentSession(Broker, version, clientId)))
        {
            await first.ConnectAsync(TestContext.Current.CancellationToken);
            await first.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
        }

        for (int i = 1; i <= 3; i++)
        {
            await publisher.PublishAsync(topic, Utf8($"while away {i}"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        }

        await using var second = new MqttClient(PersistentSession(Broker, version, clientId));
        var result = await second.ConnectAsync(TestContext.Current.CancellationToken);

        result.SessionPresent.ShouldBeTrue();
        for (int i = 1; i <= 3; i++)
        {
            var message = await second.Messages.NextAsync();
            message.Text().ShouldBe($"while away {i}");
            await message.AcknowledgeAsync();
        }
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Shared_subscription_splits_the_stream_between_two_clients_without_duplicates(MqttProtocolVersion version)
    {
        string topic = NewTopic("shared");
        string filter = $"$share/saito-{Guid.NewGuid():N}/{topic}";
        await using var a = new MqttClient(Options(Broker, version));
        await using var b = new MqttClient(Options(Broker, version));
        await using var publisher = new MqttClient(Options(Broker, version));
        foreach (var client in new[] { a, b, publisher })
        {
            await client.ConnectAsync(TestContext.Current.CancellationToken);
        }

        (await a.SubscribeAsync(filter, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken)).AllGranted.ShouldBeTrue();
        (await b.SubscribeAsync(filter, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken)).AllGranted.ShouldBeTrue();

        const int Count = 40;
        for (int i = 0; i < Count; i++)
        {
            await publisher.PublishAsync(topic, Utf8($"{i}"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        }

        var received = new ConcurrentQueue<(string Client, string Text)>();
        using var allIn = TimeoutToken();
        await Task.WhenAll(ConsumeAsync(a, "a"), ConsumeAsync(b, "b"));

        received.Select(r => r.Text).Order().ShouldBe(Enumerable.Range(0, Count).Select(i => $"{i}").Order());
        received.Count(r => r.Client == "a").ShouldBeGreaterThan(0);
        received.Count(r => r.Client == "b").ShouldBeGreaterThan(0);

        async Task ConsumeAsync(MqttClient client, string name)
        {
            try
            {
                await foreach (var message in client.Messages.ReadAllAsync(allIn.Token))
                {
                    await message.AcknowledgeAsync();
                    received.Enqueue((name, message.Text()));
                    if (received.Count >= Count)
                    {
                        await allIn.CancelAsync();
                    }
                }
            }
            catch (OperationCanceledException) when (allIn.IsCancellationRequested)
            {
                // Everything arrived, or the time ran out (the assertions say which).
            }
        }
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Keep_alive_pings_hold_an_idle_connection_open_past_the_keep_alive(MqttProtocolVersion version)
    {
        var logger = new TestLogger();
        var options = Options(Broker, version);
        options.KeepAlive = TimeSpan.FromSeconds(1);
        await using var client = new MqttClient(options, logger);
        var events = new ConnectionEvents(client);
        await client.ConnectAsync(TestContext.Current.CancellationToken);
        await events.NextAsync<MqttClientConnectedEventArgs>();
        string topic = NewTopic("idle");
        await client.SubscribeAsync(topic, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);

        // Mosquitto drops a client silent for 1.5 keep-alives; four answered pings span well past that.
        await logger.WaitForAsync(eventId: 2013, count: 4);

        events.TryPeekAny(out var unexpected).ShouldBeFalse($"no connection change expected, got {unexpected}");
        client.IsConnected.ShouldBeTrue();
        await client.PublishAsync(topic, Utf8("still here"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        (await client.Messages.NextAsync()).Text().ShouldBe("still here");
    }

    [Theory]
    [MemberData(nameof(Versions))]
    public async Task Subscribe_returns_the_granted_qos_for_each_filter_and_unsubscribe_stops_delivery(MqttProtocolVersion version)
    {
        string topic = NewTopic("sub");
        await using var client = new MqttClient(Options(Broker, version));
        await client.ConnectAsync(TestContext.Current.CancellationToken);

        var granted = await client.SubscribeAsync(
            [
                new MqttSubscription { TopicFilter = topic + "/+/a", QoS = MqttQoS.ExactlyOnce },
                new MqttSubscription { TopicFilter = topic + "/#", QoS = MqttQoS.AtMostOnce },
            ],
            TestContext.Current.CancellationToken);

        granted.ReasonCodes.ShouldBe([MqttReasonCode.GrantedQoS2, MqttReasonCode.GrantedQoS0]);

        var unsubscribed = await client.UnsubscribeAsync([topic + "/#", topic + "/+/a"], TestContext.Current.CancellationToken);
        if (version == MqttProtocolVersion.V500)
        {
            unsubscribed.ReasonCodes.ShouldBe([MqttReasonCode.Success, MqttReasonCode.Success]);
        }
        else
        {
            unsubscribed.ReasonCodes.ShouldBeEmpty();
        }

        string sentinel = NewTopic("sentinel");
        await client.SubscribeAsync(sentinel, MqttQoS.AtLeastOnce, TestContext.Current.CancellationToken);
        await client.PublishAsync(topic + "/x/a", Utf8("after unsubscribe"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        await client.PublishAsync(sentinel, Utf8("-"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);
        (await client.Messages.ReadUntilSentinelAsync(sentinel)).ShouldBeEmpty();
    }

    [Fact]
    public async Task Qos_1_publish_nobody_subscribed_to_reports_the_brokers_5_0_reason_code_as_a_success()
    {
        await using var client = new MqttClient(Options(Broker, MqttProtocolVersion.V500));
        await client.ConnectAsync(TestContext.Current.CancellationToken);

        var result = await client.PublishAsync(NewTopic("nobody"), Utf8("x"), MqttQoS.AtLeastOnce, cancellationToken: TestContext.Current.CancellationToken);

        result.ReasonCode.ShouldBe(MqttReasonCode.NoMatchingSubscribers);
        result.IsSuccess.ShouldBeTrue();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V311, MqttQoS.ExactlyOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.AtLeastOnce)]
    [InlineData(MqttProtocolVersion.V500, MqttQoS.ExactlyOnce)]
    public async Task Acknowledgement_after_the_connection_dropped_is_not_sent_and_the_broker_redelivers(MqttProtocolVersion version, MqttQoS qos)
    {
        var logger = new TestLogger();
        string topic = NewTopic("stale");
        string sentinel = NewTopic("sentinel");
        await using var publisher = new MqttClient(Options(Broker, version));
        await publisher.ConnectAsync(TestContext.Current.CancellationToken);
        await using var consumer = new MqttClient(PersistentSession(Broker, version, NewClientId()), logger);
        var events = new ConnectionEvents(consumer);
        await consumer.ConnectAsync(TestContext.Current.CancellationToken);
        await events.NextAsync<MqttClientConnectedEventArgs>();
        await consumer.SubscribeAsync([new MqttSubscription { TopicFilter = topic, QoS = qos }, new MqttSubscription { TopicFilter = sentinel, QoS = qos }],
            TestContext.Current.CancellationToken);
        await publisher.PublishAsync(topic, Utf8("in hand"), qos, cancellationToken: TestContext.Current.CancellationToken);
        var inHand = await consumer.Messages.NextAsync();
        Task<bool>? ackedWhileDisconnected = null;
        if (qos == MqttQoS.ExactlyOnce)
        {
            // Raised before the reconnect starts: the acknowledgement is certain to come before the redelivery.
            consumer.Disconnected += (_, _) => ackedWhileDisconnected ??= inHand.AcknowledgeAsync().AsTask();
        }

        consumer.AbortConnection();
        (await events.NextAsync<MqttClientDisconnectedEventArgs>()).WillReconnect.ShouldBeTrue();
        var reconnected = await events.NextAsync<MqttClientConnectedEventArgs>();
        reconnected.IsReconnect.ShouldBeTrue();
        reconnected.Result.SessionPresent.ShouldBeTrue();

        if (qos == MqttQoS.ExactlyOnce)
        {
            // Acknowledged before the redelivery arrived: the client answers it with PUBREC and does not deliver it again.
            (ackedWhileDisconnected is not null).ShouldBeTrue("the Disconnected handler acknowledged the message");
            (await ackedWhileDisconnected!).ShouldBeFalse();
            logger.Count(2014).ShouldBe(1);
            await publisher.PublishAsync(sentinel, Utf8("-"), qos, cancellationToken: TestContext.Current.CancellationToken);
            (await consumer.Messages.ReadUntilSentinelAsync(sentinel)).ShouldBeEmpty();
        }
        else
        {
            var redelivered = await consumer.Messages.NextAsync();
            redelivered.Text().ShouldBe("in hand");
            redelivered.Dup.ShouldBeTrue();
            (await inHand.AcknowledgeAsync()).ShouldBeFalse();
            logger.Count(2014).ShouldBe(1);
            (await redelivered.AcknowledgeAsync()).ShouldBeTrue();
        }

        // And the broker is satisfied: a fresh connection to the session finds nothing owed.
        await consumer.DisconnectAsync(TestContext.Current.CancellationToken);
        await consumer.ConnectAsync(TestContext.Current.CancellationToken);
        await publisher.PublishAsync(sentinel, Utf8("-"), qos, cancellationToken: TestContext.Current.CancellationToken);
        (await consumer.Messages.ReadUntilSentinelAsync(sentinel)).ShouldBeEmpty();
    }

    private static Process StartTool(string tool, string arguments)
    {
        var psi = new ProcessStartInfo(tool, arguments) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        return Process.Start(psi) ?? throw new InvalidOperationException($"Could not start {tool}");
    }

    private static async Task RunToolAsync(string tool, string arguments)
    {
        using var process = StartTool(tool, arguments);
        using var cts = TimeoutToken();
        await process.WaitForExitAsync(cts.Token);
        process.ExitCode.ShouldBe(0, await process.StandardError.ReadToEndAsync(cts.Token));
    }

    /// <summary>mosquitto_sub has subscribed once a QoS 1 publish to its probe topic finds a subscriber (5.0 PUBACK 0x00, not 0x10).</summary>
    private async Task WaitForSubscriberAsync(string probeTopic)
    {
        await using var probe = new MqttClient(Options(Broker, MqttProtocolVersion.V500));
        await probe.ConnectAsync(TestContext.Current.CancellationToken);
        using var cts = TimeoutToken();
        while (true)
        {
            cts.Token.ThrowIfCancellationRequested();
            var result = await probe.PublishAsync(probeTopic, Utf8("?"), MqttQoS.AtLeastOnce, cancellationToken: cts.Token);
            if (result.ReasonCode == MqttReasonCode.NoMatchingSubscribers)
            {
                await Task.Delay(50, cts.Token);
                continue;
            }

            return;
        }
    }
}

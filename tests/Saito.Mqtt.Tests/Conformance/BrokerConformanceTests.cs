using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>
/// What an MQTT 3.1.1 / 5.0 broker must do, written once against the OASIS standards and run
/// against every broker we care about: Mosquitto (the reference) and Saito's own. Each test cites
/// the normative statements it checks ([MQTT-x.y.z-n]; the numbering differs between 3.1.1 and
/// 5.0, so both are given where they differ). Where the standard allows several behaviours
/// (closing with or without a DISCONNECT, refusing a bad filter in SUBACK or by closing), the test
/// accepts each of them and nothing else.
/// </summary>
/// <remarks>
/// Tests share one broker: every client id and topic carries a fresh GUID, and state a test needs
/// (a session, a retained message) is made by that test. A deviation of a particular broker from
/// the standard is not papered over here: the subclass overrides the matching
/// <c>…Deviation</c> property with the reason, which skips that one test for that broker.
/// </remarks>
public abstract partial class BrokerConformanceTests
{
    protected const MqttProtocolVersion V311 = MqttProtocolVersion.V311;
    protected const MqttProtocolVersion V500 = MqttProtocolVersion.V500;
    protected const MqttQoS QoS0 = MqttQoS.AtMostOnce;
    protected const MqttQoS QoS1 = MqttQoS.AtLeastOnce;
    protected const MqttQoS QoS2 = MqttQoS.ExactlyOnce;

    /// <summary>
    /// Slack on top of a timer the standard sets (keep alive, will delay, expiry): brokers check
    /// timers on a tick of up to a second, and the test machine may be busy.
    /// </summary>
    protected static readonly TimeSpan TimerSlack = TimeSpan.FromSeconds(1.2);

    /// <summary>
    /// Slack on a wait for something a timer must make happen (a close, a delayed will): the wait ends when it happens,
    /// so this costs only a failing test, and CI's busy two cores can run a broker's timer or this test's reads late.
    /// </summary>
    protected static readonly TimeSpan ArrivalSlack = TimeSpan.FromSeconds(5);

    protected BrokerConformanceTests(BrokerEndpoint broker)
    {
        ArgumentNullException.ThrowIfNull(broker);
        Broker = broker;
    }

    /// <summary>The broker under test.</summary>
    protected BrokerEndpoint Broker { get; }

    /// <summary>
    /// A broker like <see cref="Broker"/> but configured with a maximum packet size small enough
    /// to exceed, for the oversize-packet test. It may be <see cref="Broker"/> itself when that is
    /// configured so. Null when the subclass cannot provide one: that test is then skipped.
    /// </summary>
    protected virtual SizeLimitedBroker? BrokerWithMaximumPacketSize => null;

    /// <summary>
    /// Why the broker under test closes a silent client later than 1.5 x Keep Alive (plus
    /// <see cref="TimerSlack"/>), or null when it does not. Skips the keep-alive timing tests.
    /// </summary>
    protected virtual string? KeepAliveDeviation => null;

    /// <summary>
    /// Why the broker under test closes a 5.0 connection taken over by a new one without
    /// DISCONNECT 0x8E, or null when it sends it. Skips the 5.0 case of the takeover test.
    /// </summary>
    protected virtual string? SessionTakeoverDeviation => null;

    /// <summary>
    /// Why the broker under test ignores the reserved flags of PUBACK and PINGREQ, or null.
    /// Skips those cases of the reserved-flags test.
    /// </summary>
    protected virtual string? ReservedFlagsOfSimplePacketsDeviation => null;

    /// <summary>
    /// Why the broker under test sends a 5.0 client more unacknowledged QoS 1 / 2 messages than
    /// its Receive Maximum, or null. Skips the receive maximum test.
    /// </summary>
    protected virtual string? ReceiveMaximumDeviation => null;

    /// <summary>
    /// Why the broker under test delivers a message matching overlapping 3.1.1 subscriptions
    /// below their highest QoS, or null. Skips the 3.1.1 case of the overlapping test.
    /// </summary>
    protected virtual string? OverlappingSubscriptionsDeviation => null;

    /// <summary>
    /// Why a message the broker under test drops for the client's Maximum Packet Size still
    /// counts against the client's Receive Maximum, or null. Skips that test.
    /// </summary>
    protected virtual string? DroppedMessageHoldsReceiveMaximumSlotDeviation => null;

    protected static CancellationToken Cancellation => TestContext.Current.CancellationToken;

    /// <summary>
    /// A client id of 23 letters and digits: the only kind every server must accept
    /// ([MQTT-3.1.3-5] in both versions).
    /// </summary>
    protected static string NewClientId() => "c" + Guid.NewGuid().ToString("N")[..22];

    /// <summary>A topic (or topic prefix) no other test uses.</summary>
    protected static string NewTopic() => $"conformance/{Guid.NewGuid():N}";

    protected static ReadOnlyMemory<byte> Utf8(string text) => Encoding.UTF8.GetBytes(text);

    protected static string Text(PublishPacket publish)
    {
        ArgumentNullException.ThrowIfNull(publish);
        return Encoding.UTF8.GetString(publish.Payload.Span);
    }

    protected static Task PauseAsync(TimeSpan duration) => Task.Delay(duration, Cancellation);

    /// <summary>Properties for a 5.0 session that outlives its connection.</summary>
    protected static MqttProperties SessionExpiry(uint seconds) => new() { SessionExpiryInterval = seconds };

    /// <summary>A TCP connection to <paramref name="endpoint"/> (default: the broker under test); nothing sent yet.</summary>
    protected Task<RawMqttConnection> OpenAsync(BrokerEndpoint? endpoint = null) =>
        RawMqttConnection.OpenAsync(endpoint ?? Broker, Cancellation);

    /// <summary>A connection that has been accepted (CONNACK success), with a new client id unless one is given.</summary>
    protected async Task<RawMqttConnection> ConnectedAsync(
        MqttProtocolVersion version,
        string? clientId = null,
        bool cleanStart = true,
        ushort keepAliveSeconds = 0,
        MqttProperties? properties = null,
        MqttWill? will = null,
        BrokerEndpoint? endpoint = null)
    {
        var connection = await OpenAsync(endpoint);
        try
        {
            var connAck = await connection.ConnectAsync(version, clientId ?? NewClientId(), cleanStart, keepAliveSeconds, properties, will);
            connAck.ReasonCode.ShouldBe((byte)0, $"CONNACK for {connection.Name}");
            return connection;
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }
    }

    /// <summary>Subscribes to one filter and checks the SUBACK grants <paramref name="qos"/> ([MQTT-3.8.4-1], [MQTT-3.8.4-2] / 5.0 [MQTT-2.2.1-6]).</summary>
    protected static Task<SubAckPacket> SubscribeAsync(RawMqttConnection connection, string filter, MqttQoS qos, MqttProperties? properties = null) =>
        SubscribeAsync(connection, new MqttSubscription { TopicFilter = filter, QoS = qos }, properties);

    protected static async Task<SubAckPacket> SubscribeAsync(RawMqttConnection connection, MqttSubscription subscription, MqttProperties? properties = null)
    {
        var subAck = await SendSubscribeAsync(connection, subscription, properties);
        subAck.ReasonCodes.ShouldBe([(MqttReasonCode)subscription.QoS], $"SUBACK for '{subscription.TopicFilter}'");
        return subAck;
    }

    /// <summary>Subscribes and returns the SUBACK whatever it says.</summary>
    protected static async Task<SubAckPacket> SendSubscribeAsync(RawMqttConnection connection, MqttSubscription subscription, MqttProperties? properties = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ushort id = connection.NextPacketId();
        await connection.SendAsync(new SubscribePacket { PacketId = id, Subscriptions = [subscription], Properties = properties });
        var subAck = await connection.ExpectSkippingPublishesAsync<SubAckPacket>();
        subAck.PacketId.ShouldBe(id, "SUBACK carries the SUBSCRIBE's packet identifier");
        return subAck;
    }

    /// <summary>
    /// Publishes and, as the sender, completes the QoS flow: waits for PUBACK (QoS 1), or PUBREC,
    /// sends PUBREL, waits for PUBCOMP (QoS 2), each with the PUBLISH's packet identifier
    /// ([MQTT-4.3.2-2], [MQTT-4.3.3-2] / 5.0 [MQTT-4.3.2-4], [MQTT-4.3.3-8], [MQTT-4.3.3-11]).
    /// </summary>
    protected static async Task PublishAsync(
        RawMqttConnection connection,
        string topic,
        string payload,
        MqttQoS qos = MqttQoS.AtMostOnce,
        bool retain = false,
        MqttProperties? properties = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ushort id = qos == MqttQoS.AtMostOnce ? (ushort)0 : connection.NextPacketId();
        await connection.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8(payload), QoS = qos, Retain = retain, PacketId = id, Properties = properties });
        switch (qos)
        {
            case MqttQoS.AtLeastOnce:
                await ExpectAckAsync(connection, MqttPacketType.PubAck, id);
                break;
            case MqttQoS.ExactlyOnce:
                await ExpectAckAsync(connection, MqttPacketType.PubRec, id);
                await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubRel) { PacketId = id });
                await ExpectAckAsync(connection, MqttPacketType.PubComp, id);
                break;
        }
    }

    /// <summary>The next non-PUBLISH packet is a <paramref name="type"/> for <paramref name="packetId"/> with a success reason code.</summary>
    protected static async Task<PublishAckPacket> ExpectAckAsync(RawMqttConnection connection, MqttPacketType type, ushort packetId)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var ack = await connection.ExpectSkippingPublishesAsync<PublishAckPacket>();
        ack.Type.ShouldBe(type, $"{connection.Name}: acknowledgement of packet {packetId}");
        ack.PacketId.ShouldBe(packetId, $"{connection.Name}: {type} carries the packet identifier it answers ([MQTT-2.3.1-6] / 5.0 [MQTT-2.2.1-5])");
        ((byte)ack.ReasonCode).ShouldBeLessThan((byte)0x80, $"{connection.Name}: {type} reason code");
        return ack;
    }

    /// <summary>The next packet is a PUBLISH on <paramref name="topic"/> (when given).</summary>
    protected static async Task<PublishPacket> ExpectMessageAsync(RawMqttConnection connection, string? topic = null, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var publish = await connection.ExpectAsync<PublishPacket>(timeout);
        if (topic is not null)
        {
            publish.Topic.ShouldBe(topic, $"{connection.Name}: topic of {RawMqttConnection.Describe(publish)}");
        }

        if (publish.QoS == MqttQoS.AtMostOnce)
        {
            publish.Dup.ShouldBeFalse("The DUP flag MUST be 0 for all QoS 0 messages ([MQTT-3.3.1-2])");
        }
        else
        {
            publish.PacketId.ShouldNotBe((ushort)0, "A QoS > 0 PUBLISH carries a non-zero packet identifier ([MQTT-2.3.1-1] / 5.0 [MQTT-2.2.1-4])");
        }

        return publish;
    }

    /// <summary>
    /// Acknowledges a received PUBLISH as its receiver: PUBACK (QoS 1), or PUBREC, then the
    /// broker's PUBREL with the same identifier, then PUBCOMP (QoS 2).
    /// </summary>
    protected static async Task AcknowledgeAsync(RawMqttConnection connection, PublishPacket publish)
    {
        ArgumentNullException.ThrowIfNull(connection);
        ArgumentNullException.ThrowIfNull(publish);
        switch (publish.QoS)
        {
            case MqttQoS.AtLeastOnce:
                await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubAck) { PacketId = publish.PacketId });
                break;
            case MqttQoS.ExactlyOnce:
                await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubRec) { PacketId = publish.PacketId });
                await ExpectAckAsync(connection, MqttPacketType.PubRel, publish.PacketId);
                await connection.SendAsync(new PublishAckPacket(MqttPacketType.PubComp) { PacketId = publish.PacketId });
                break;
        }
    }

    /// <summary>Receives a PUBLISH, acknowledges it, returns it.</summary>
    protected static async Task<PublishPacket> ReceiveAsync(RawMqttConnection connection, string? topic = null, TimeSpan? timeout = null)
    {
        var publish = await ExpectMessageAsync(connection, topic, timeout);
        await AcknowledgeAsync(connection, publish);
        return publish;
    }

    /// <summary>
    /// Every PUBLISH that arrives until the connection has been quiet for <paramref name="quiet"/>,
    /// each acknowledged as it comes.
    /// </summary>
    protected static async Task<List<PublishPacket>> ReceiveAllAsync(RawMqttConnection connection, TimeSpan? quiet = null)
    {
        var received = new List<PublishPacket>();
        while (true)
        {
            try
            {
                received.Add(await ReceiveAsync(connection, timeout: quiet ?? RawMqttConnection.DefaultQuietPeriod));
            }
            catch (ShouldAssertException e) when (e.Message.Contains("nothing came", StringComparison.Ordinal))
            {
                return received;
            }
        }
    }

    /// <summary>
    /// A broker that was just sent something bad still serves everyone else: a new client can
    /// connect, subscribe, publish and receive. Run after every bad-bytes test.
    /// </summary>
    protected async Task AssertBrokerStillServesAsync(MqttProtocolVersion version, BrokerEndpoint? endpoint = null)
    {
        await using var client = await ConnectedAsync(version, endpoint: endpoint);
        string topic = NewTopic();
        await SubscribeAsync(client, topic, QoS1);
        await PublishAsync(client, topic, "still here", QoS1);
        Text(await ReceiveAsync(client, topic)).ShouldBe("still here");
        await client.DisconnectAsync();
    }

    /// <summary>
    /// The broker closed the connection as the standard requires after a malformed packet or a
    /// protocol error. In 5.0 it SHOULD send a DISCONNECT first ([MQTT-4.13.1-1] and section
    /// 4.13.1); when it does, its reason code must be one of <paramref name="allowedReasons"/>.
    /// In 3.1.1 there is no DISCONNECT from a server: it just closes ([MQTT-4.8.0-1]).
    /// </summary>
    protected static Task ExpectClosedForErrorAsync(RawMqttConnection connection, params MqttReasonCode[] allowedReasons) =>
        ExpectClosedForErrorAsync(connection, RawMqttConnection.DefaultTimeout, allowedReasons);

    /// <inheritdoc cref="ExpectClosedForErrorAsync(RawMqttConnection, MqttReasonCode[])"/>
    protected static async Task ExpectClosedForErrorAsync(RawMqttConnection connection, TimeSpan timeout, params MqttReasonCode[] allowedReasons)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var reason = await connection.ExpectClosedAsync(timeout);
        if (connection.Version == MqttProtocolVersion.V311)
        {
            reason.ShouldBeNull("An MQTT 3.1.1 server never sends DISCONNECT");
        }
        else if (reason is { } code)
        {
            allowedReasons.ShouldContain(code, $"DISCONNECT reason 0x{(byte)code:X2} before closing");
        }
    }
}

/// <summary>A broker whose maximum packet size is known, for the oversize-packet test.</summary>
public sealed record SizeLimitedBroker(BrokerEndpoint Endpoint, int MaximumPacketSize);

using System.Diagnostics;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Conformance;

/// <summary>CONNECT, CONNACK, keep alive, takeover.</summary>
public abstract partial class BrokerConformanceTests
{
    [Fact]
    public async Task Unsupported_protocol_level_is_refused_with_a_connack_then_the_connection_closes()
    {
        await using var connection = await OpenAsync();
        byte[] connect = connection.Encode(new ConnectPacket { ProtocolVersion = V500, ClientId = NewClientId() });
        connect[8] = 6; // Protocol Level, after the fixed header (2) and "MQTT" (6).
        await connection.SendRawAsync(connect);

        // 3.1.1 [MQTT-3.1.2-2]: CONNACK return code 0x01 (unacceptable protocol level), then
        // disconnect. 5.0 [MQTT-3.1.2-2]: MAY send CONNACK 0x84 (Unsupported Protocol Version),
        // then MUST close. A server does not know which form a level-6 client reads, so either
        // form is right; a good server sends one of them.
        var (header, body) = await connection.ExpectFrameAsync();
        header.ShouldBe((byte)0x20, "a CONNACK");
        body.Length.ShouldBeGreaterThanOrEqualTo(2);
        body[0].ShouldBe((byte)0, "Session Present is 0 when refused ([MQTT-3.2.2-4] / 5.0 [MQTT-3.2.2-6])");
        if (body.Length == 2)
        {
            body[1].ShouldBe((byte)MqttConnectReturnCode.UnacceptableProtocolVersion, "3.1.1-form CONNACK return code");
        }
        else
        {
            body[1].ShouldBe((byte)MqttReasonCode.UnsupportedProtocolVersion, "5.0-form CONNACK reason code");
        }

        (await connection.ExpectClosedAsync()).ShouldBeNull();
        await AssertBrokerStillServesAsync(V500);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Wrong_protocol_name_is_not_accepted(MqttProtocolVersion version)
    {
        await using var connection = await OpenAsync();
        connection.Version = version;
        byte[] connect = connection.Encode(new ConnectPacket { ProtocolVersion = version, ClientId = NewClientId() });
        connect[7] = (byte)'X'; // "MQTT" becomes "MQTX".
        await connection.SendRawAsync(connect);

        // 3.1.1 [MQTT-3.1.2-1]: the server MAY disconnect, and MUST NOT go on under this
        // standard. 5.0 [MQTT-3.1.2-1]: it MAY send CONNACK 0x84, then MUST close.
        await ExpectRefusedConnectAsync(connection, MqttReasonCode.UnsupportedProtocolVersion);
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Connect_with_the_reserved_flag_set_is_refused(MqttProtocolVersion version)
    {
        await using var connection = await OpenAsync();
        connection.Version = version;
        byte[] connect = connection.Encode(new ConnectPacket { ProtocolVersion = version, ClientId = NewClientId() });
        connect[9] |= 0x01; // Connect Flags, bit 0 is reserved.
        await connection.SendRawAsync(connect);

        // [MQTT-3.1.2-3] (both): the server MUST validate the reserved flag is 0 and disconnect
        // if not; in 5.0 it is a Malformed Packet, so a CONNACK, if any, says 0x81.
        await ExpectRefusedConnectAsync(connection, MqttReasonCode.MalformedPacket);
        await AssertBrokerStillServesAsync(version);
    }

    [Fact]
    public async Task Zero_length_client_id_without_clean_session_is_rejected_in_3_1_1()
    {
        await using var connection = await OpenAsync();
        var connAck = await connection.ConnectAsync(V311, clientId: "", cleanStart: false);

        // [MQTT-3.1.3-8]: CONNACK 0x02 (identifier rejected), then close.
        connAck.ReasonCode.ShouldBe((byte)MqttConnectReturnCode.IdentifierRejected);
        connAck.SessionPresent.ShouldBeFalse();
        (await connection.ExpectClosedAsync()).ShouldBeNull();
    }

    [Fact]
    public async Task Zero_length_client_id_gets_a_unique_assigned_client_identifier_in_5_0()
    {
        await using var first = await OpenAsync();
        await using var second = await OpenAsync();
        var firstAck = await first.ConnectAsync(V500, clientId: "");
        var secondAck = await second.ConnectAsync(V500, clientId: "");

        // [MQTT-3.1.3-6], [MQTT-3.1.3-7], [MQTT-3.2.2-16]: a server that accepts a zero-length
        // ClientID assigns a unique one and returns it as the Assigned Client Identifier.
        // Accepting is a MAY; refusing is [MQTT-3.1.3-8] with 0x85, then close.
        if (firstAck.ReasonCode == (byte)MqttReasonCode.ClientIdentifierNotValid)
        {
            (await first.ExpectClosedAsync()).ShouldBeNull();
            return;
        }

        firstAck.ReasonCode.ShouldBe((byte)0);
        secondAck.ReasonCode.ShouldBe((byte)0);
        string? firstId = firstAck.Properties?.AssignedClientIdentifier;
        string? secondId = secondAck.Properties?.AssignedClientIdentifier;
        firstId.ShouldNotBeNullOrEmpty();
        secondId.ShouldNotBeNullOrEmpty();
        firstId.ShouldNotBe(secondId);

        // Both connections are alive: neither took the other over.
        await first.SendAsync(PingReqPacket.Instance);
        await first.ExpectAsync<PingRespPacket>();
        await second.SendAsync(PingReqPacket.Instance);
        await second.ExpectAsync<PingRespPacket>();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Second_connection_with_the_same_client_id_takes_over(MqttProtocolVersion version)
    {
        string clientId = NewClientId();
        await using var first = await ConnectedAsync(version, clientId);
        await using var second = await ConnectedAsync(version, clientId);

        // 3.1.1 [MQTT-3.1.4-2]: the server MUST disconnect the existing client.
        // 5.0 [MQTT-3.1.4-3]: it sends the existing client DISCONNECT 0x8E (Session taken over)
        // and MUST close its connection.
        var reason = await first.ExpectClosedAsync();
        if (version == V500)
        {
            Assert.SkipWhen(SessionTakeoverDeviation is not null, SessionTakeoverDeviation ?? string.Empty);
            reason.ShouldBe(MqttReasonCode.SessionTakenOver);
        }
        else
        {
            reason.ShouldBeNull();
        }

        await second.SendAsync(PingReqPacket.Instance);
        await second.ExpectAsync<PingRespPacket>();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Second_connect_on_the_same_connection_closes_it(MqttProtocolVersion version)
    {
        await using var connection = await ConnectedAsync(version);
        await connection.SendAsync(new ConnectPacket { ProtocolVersion = version, ClientId = NewClientId() });

        // [MQTT-3.1.0-2] (both): a second CONNECT is a protocol violation / Protocol Error; close.
        await ExpectClosedForErrorAsync(connection, MqttReasonCode.ProtocolError);
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Packet_before_connect_closes_the_connection_and_is_not_processed(MqttProtocolVersion version)
    {
        string topic = NewTopic();
        await using var watcher = await ConnectedAsync(version);
        await SubscribeAsync(watcher, topic, QoS0);

        await using var connection = await OpenAsync();
        connection.Version = version;
        await connection.SendAsync(new PublishPacket { Topic = topic, Payload = Utf8("before connect") });

        // [MQTT-3.1.0-1] (both): the first packet MUST be CONNECT; anything else is a protocol
        // violation, so the server closes. 5.0 [MQTT-3.14.0-1]: no DISCONNECT before a CONNACK.
        (await connection.ExpectClosedAsync()).ShouldBeNull();
        await watcher.ExpectNothingAsync();
        await AssertBrokerStillServesAsync(version);
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Pingreq_is_answered_with_pingresp(MqttProtocolVersion version)
    {
        await using var connection = await ConnectedAsync(version);

        // [MQTT-3.12.4-1] (both).
        await connection.SendAsync(PingReqPacket.Instance);
        await connection.ExpectAsync<PingRespPacket>();
        await connection.SendAsync(PingReqPacket.Instance);
        await connection.ExpectAsync<PingRespPacket>();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Silent_client_is_disconnected_after_one_and_a_half_keep_alive_periods_but_a_pinging_one_stays(MqttProtocolVersion version)
    {
        Assert.SkipWhen(KeepAliveDeviation is not null, KeepAliveDeviation ?? string.Empty);
        // Keep alive 2 s and a ping every 0.5 s: the pinging client stays in time even if this machine stalls for 2 s.
        await using var silent = await ConnectedAsync(version, keepAliveSeconds: 2);
        await using var pinging = await ConnectedAsync(version, keepAliveSeconds: 2);
        var clock = Stopwatch.StartNew();
        using var stopPinging = CancellationTokenSource.CreateLinkedTokenSource(Cancellation);
        var pings = PingEveryAsync(pinging, TimeSpan.FromMilliseconds(500), stopPinging.Token);

        // 3.1.1 [MQTT-3.1.2-24] / 5.0 [MQTT-3.1.2-22]: no packet within 1.5 x Keep Alive, and
        // the server MUST close the connection as if the network had failed. 5.0 allows
        // DISCONNECT 0x8D (Keep alive timeout) first.
        await ExpectClosedForErrorAsync(silent, TimeSpan.FromSeconds(3) + ArrivalSlack, MqttReasonCode.KeepAliveTimeout);

        clock.Elapsed.ShouldBeGreaterThan(TimeSpan.FromSeconds(2), "closed before even one keep-alive period passed");

        // The client that sent a PINGREQ within every period is still connected.
        await stopPinging.CancelAsync();
        await pings;
        await pinging.SendAsync(PingReqPacket.Instance);
        await pinging.ExpectAsync<PingRespPacket>();
    }

    [Theory]
    [InlineData(V311)]
    [InlineData(V500)]
    public async Task Session_present_says_whether_the_broker_kept_a_session(MqttProtocolVersion version)
    {
        string clientId = NewClientId();
        var persistent = version == V500 ? SessionExpiry(60) : null;

        // Nothing stored yet: clean or not, Session Present is 0.
        // 3.1.1 [MQTT-3.2.2-1], [MQTT-3.2.2-3]; 5.0 [MQTT-3.2.2-2], [MQTT-3.2.2-3].
        (await ConnectAndLeaveAsync(version, clientId, cleanStart: true, properties: persistent)).ShouldBeFalse("clean start");
        if (version == V311)
        {
            // A clean 3.1.1 session ends with its connection: there is still none.
            (await ConnectAndLeaveAsync(version, clientId, cleanStart: false, properties: null)).ShouldBeFalse("no session yet");
        }

        // Now a session exists: resuming it says so. 3.1.1 [MQTT-3.2.2-2]; 5.0 [MQTT-3.2.2-3].
        (await ConnectAndLeaveAsync(version, clientId, cleanStart: false, properties: persistent)).ShouldBeTrue("resumed session");

        // Clean start discards it. 3.1.1 [MQTT-3.1.2-6], [MQTT-3.2.2-1]; 5.0 [MQTT-3.1.2-4], [MQTT-3.2.2-2].
        (await ConnectAndLeaveAsync(version, clientId, cleanStart: true, properties: null)).ShouldBeFalse("clean start again");
        (await ConnectAndLeaveAsync(version, clientId, cleanStart: false, properties: null)).ShouldBeFalse("the clean session ended with its connection");
    }

    /// <summary>Connects, disconnects normally, and returns Session Present.</summary>
    private async Task<bool> ConnectAndLeaveAsync(MqttProtocolVersion version, string clientId, bool cleanStart, MqttProperties? properties)
    {
        await using var connection = await OpenAsync();
        var connAck = await connection.ConnectAsync(version, clientId, cleanStart, properties: properties);
        connAck.ReasonCode.ShouldBe((byte)0);
        await connection.DisconnectAsync();
        return connAck.SessionPresent;
    }

    /// <summary>
    /// The broker refused a CONNECT: it closed the connection, after a CONNACK that is not a
    /// success (in 5.0 with <paramref name="reasonIfAny"/>), or without one.
    /// </summary>
    private static async Task ExpectRefusedConnectAsync(RawMqttConnection connection, MqttReasonCode reasonIfAny)
    {
        try
        {
            var (header, body) = await connection.ExpectFrameAsync();
            header.ShouldBe((byte)0x20, "the only packet a refused CONNECT may get is a CONNACK");
            body.Length.ShouldBeGreaterThanOrEqualTo(2);
            if (body.Length == 2)
            {
                body[1].ShouldNotBe((byte)0, "a CONNACK refusing the connection");
            }
            else
            {
                body[1].ShouldBe((byte)reasonIfAny, "5.0 CONNACK reason code");
            }
        }
        catch (ShouldAssertException e) when (e.Message.Contains("closed the connection", StringComparison.Ordinal) || e.Message.Contains("connection ended", StringComparison.Ordinal))
        {
            // Closed without a CONNACK: allowed.
            return;
        }

        (await connection.ExpectClosedAsync()).ShouldBeNull();
    }

    private static async Task PingEveryAsync(RawMqttConnection connection, TimeSpan period, CancellationToken stop)
    {
        try
        {
            while (!stop.IsCancellationRequested)
            {
                await Task.Delay(period, stop);
                await connection.SendAsync(PingReqPacket.Instance);
                await connection.ExpectAsync<PingRespPacket>();
            }
        }
        catch (OperationCanceledException) when (stop.IsCancellationRequested)
        {
            // Done.
        }
    }
}

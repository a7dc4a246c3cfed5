using Saito.Mqtt.Broker;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Broker;

/// <summary>The decision part of CONNECT, from packet and options alone: no socket, no broker.</summary>
public sealed class ConnectNegotiationTests
{
    private static ConnectPacket Connect(MqttProtocolVersion version, string clientId = "hub-1", bool cleanStart = true,
        ushort keepAlive = 60, MqttProperties? properties = null) =>
        new()
        {
            ProtocolVersion = version,
            ClientId = clientId,
            CleanStart = cleanStart,
            KeepAliveSeconds = keepAlive,
            Properties = properties,
        };

    private static ConnectRefusal Refusal(ConnectDecision decision) =>
        decision.Refusal ?? throw new ShouldAssertException("the CONNECT was accepted; a refusal was expected");

    [Fact]
    public void Empty_client_id_with_a_persistent_3_1_1_session_is_refused_with_identifier_rejected()
    {
        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V311, clientId: "", cleanStart: false), new MqttBrokerOptions());

        var refusal = Refusal(decision);
        refusal.CodeFor(MqttProtocolVersion.V311).ShouldBe((byte)MqttConnectReturnCode.IdentifierRejected);
        refusal.Why.ShouldContain("empty client id");
        decision.ClientId.ShouldBeEmpty();
        decision.LimitHit.ShouldBeNull();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, true)]
    [InlineData(MqttProtocolVersion.V500, true)]
    [InlineData(MqttProtocolVersion.V500, false)]
    public void Empty_client_id_is_assigned_one(MqttProtocolVersion version, bool cleanStart)
    {
        var options = new MqttBrokerOptions();
        var first = ConnectNegotiation.Negotiate(Connect(version, clientId: "", cleanStart: cleanStart), options);
        var second = ConnectNegotiation.Negotiate(Connect(version, clientId: "", cleanStart: cleanStart), options);

        first.Refusal.ShouldBeNull();
        first.ClientId.ShouldStartWith(ConnectNegotiation.AssignedClientIdPrefix);
        first.ClientId.Length.ShouldBeLessThanOrEqualTo(options.MaxClientIdLength);
        first.AssignedClientId.ShouldBe(first.ClientId);
        second.ClientId.ShouldNotBe(first.ClientId);
    }

    [Fact]
    public void An_assigned_client_id_is_told_to_a_5_0_client_in_the_connack()
    {
        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V500, clientId: ""), new MqttBrokerOptions());

        decision.ConnAckProperties.ShouldNotBeNull().AssignedClientIdentifier.ShouldBe(decision.ClientId);
    }

    [Fact]
    public void A_client_id_of_its_own_is_kept_and_not_announced()
    {
        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V500, clientId: "greenhouse-7"), new MqttBrokerOptions());

        decision.ClientId.ShouldBe("greenhouse-7");
        decision.AssignedClientId.ShouldBeNull();
        decision.ConnAckProperties.ShouldNotBeNull().AssignedClientIdentifier.ShouldBeNull();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, (byte)MqttConnectReturnCode.IdentifierRejected)]
    [InlineData(MqttProtocolVersion.V500, (byte)MqttReasonCode.ClientIdentifierNotValid)]
    public void Client_id_over_the_limit_is_refused_and_counted_as_a_limit_hit(MqttProtocolVersion version, byte expected)
    {
        var options = new MqttBrokerOptions { MaxClientIdLength = 8 };

        var decision = ConnectNegotiation.Negotiate(Connect(version, clientId: "nine-char"), options);

        Refusal(decision).CodeFor(version).ShouldBe(expected);
        Refusal(decision).Why.ShouldBe("client id of 9 characters (Mqtt:MaxClientIdLength is 8)");
        decision.LimitHit.ShouldBe(nameof(MqttBrokerOptions.MaxClientIdLength));
        ConnectNegotiation.Negotiate(Connect(version, clientId: "8-chars!"), options).Refusal.ShouldBeNull();
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, (byte)MqttConnectReturnCode.IdentifierRejected)]
    [InlineData(MqttProtocolVersion.V500, (byte)MqttReasonCode.ClientIdentifierNotValid)]
    public void Client_id_with_control_characters_is_refused_without_a_limit_hit(MqttProtocolVersion version, byte expected)
    {
        var decision = ConnectNegotiation.Negotiate(Connect(version, clientId: "hub\n1"), new MqttBrokerOptions());

        Refusal(decision).CodeFor(version).ShouldBe(expected);
        Refusal(decision).Why.ShouldBe("client id with control characters");
        decision.LimitHit.ShouldBeNull();
    }

    [Fact]
    public void Enhanced_authentication_is_refused_with_bad_authentication_method()
    {
        var connect = Connect(MqttProtocolVersion.V500, properties: new MqttProperties { AuthenticationMethod = "SCRAM-SHA-1" });

        var refusal = Refusal(ConnectNegotiation.Negotiate(connect, new MqttBrokerOptions()));

        refusal.CodeFor(MqttProtocolVersion.V500).ShouldBe((byte)MqttReasonCode.BadAuthenticationMethod);
        refusal.CodeFor(MqttProtocolVersion.V311).ShouldBe((byte)MqttConnectReturnCode.NotAuthorized);
    }

    [Fact]
    public void A_bad_client_id_is_refused_before_the_authentication_method_is_looked_at()
    {
        var connect = Connect(MqttProtocolVersion.V500, clientId: "hub\t1", properties: new MqttProperties { AuthenticationMethod = "SCRAM-SHA-1" });

        Refusal(ConnectNegotiation.Negotiate(connect, new MqttBrokerOptions())).Code5.ShouldBe(MqttReasonCode.ClientIdentifierNotValid);
    }

    [Theory]
    [InlineData(6, MqttProtocolVersion.V500, (byte)MqttReasonCode.UnsupportedProtocolVersion)]
    [InlineData(255, MqttProtocolVersion.V500, (byte)MqttReasonCode.UnsupportedProtocolVersion)]
    [InlineData(3, MqttProtocolVersion.V311, (byte)MqttConnectReturnCode.UnacceptableProtocolVersion)]
    [InlineData(0, MqttProtocolVersion.V311, (byte)MqttConnectReturnCode.UnacceptableProtocolVersion)]
    public void Unsupported_protocol_level_is_refused_in_the_connack_the_client_can_read(byte level, MqttProtocolVersion version, byte code)
    {
        ConnectNegotiation.UnsupportedProtocolLevel(level).ShouldBe((version, code));
    }

    [Theory]
    [InlineData(MqttAuthenticationResult.BadUserNameOrPassword, MqttConnectReturnCode.BadUserNameOrPassword, MqttReasonCode.BadUserNameOrPassword)]
    [InlineData(MqttAuthenticationResult.NotAuthorized, MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized)]
    [InlineData(MqttAuthenticationResult.Success, MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized)]
    public void Authentication_refusals_have_the_codes_of_each_version(MqttAuthenticationResult result, MqttConnectReturnCode code311, MqttReasonCode code5)
    {
        // Success without an identity is still a refusal: the connection asks for both.
        var refusal = ConnectNegotiation.NotAuthenticated(result);

        refusal.CodeFor(MqttProtocolVersion.V311).ShouldBe((byte)code311);
        refusal.CodeFor(MqttProtocolVersion.V500).ShouldBe((byte)code5);
    }

    [Fact]
    public void Connection_and_session_limits_refuse_as_server_unavailable_busy_and_quota_exceeded()
    {
        var options = new MqttBrokerOptions { MaxConnections = 3, MaxSessions = 4 };

        var connections = ConnectNegotiation.ConnectionLimitReached(options);
        connections.CodeFor(MqttProtocolVersion.V311).ShouldBe((byte)MqttConnectReturnCode.ServerUnavailable);
        connections.CodeFor(MqttProtocolVersion.V500).ShouldBe((byte)MqttReasonCode.ServerBusy);
        connections.Why.ShouldBe("connection limit of 3 reached");

        var sessions = ConnectNegotiation.SessionLimitReached(options);
        sessions.CodeFor(MqttProtocolVersion.V311).ShouldBe((byte)MqttConnectReturnCode.ServerUnavailable);
        sessions.CodeFor(MqttProtocolVersion.V500).ShouldBe((byte)MqttReasonCode.QuotaExceeded);
        sessions.Why.ShouldBe("session limit of 4 reached (Mqtt:MaxSessions)");
    }

    [Theory]
    [InlineData(true, 0u)]
    [InlineData(false, uint.MaxValue)]
    public void A_3_1_1_session_ends_with_a_clean_session_and_otherwise_never_expires_but_for_the_cap(bool cleanSession, uint requested)
    {
        var options = new MqttBrokerOptions { MaxSessionExpirySeconds = 3600 };

        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V311, cleanStart: cleanSession), options);

        decision.RequestedSessionExpiry.ShouldBe(requested);
        decision.SessionExpiry.ShouldBe(cleanSession ? 0u : 3600u);
        decision.ConnAckProperties.ShouldBeNull("a 3.1.1 CONNACK has no properties");
    }

    [Fact]
    public void A_5_0_session_expiry_over_the_cap_is_clamped_and_the_client_is_told()
    {
        var options = new MqttBrokerOptions { MaxSessionExpirySeconds = 600 };
        var connect = Connect(MqttProtocolVersion.V500, properties: new MqttProperties { SessionExpiryInterval = uint.MaxValue });

        var decision = ConnectNegotiation.Negotiate(connect, options);

        decision.SessionExpiry.ShouldBe(600u);
        decision.ConnAckProperties.ShouldNotBeNull().SessionExpiryInterval.ShouldBe(600u);
    }

    [Fact]
    public void A_5_0_session_expiry_within_the_cap_is_granted_without_saying_so()
    {
        var connect = Connect(MqttProtocolVersion.V500, properties: new MqttProperties { SessionExpiryInterval = 120 });

        var decision = ConnectNegotiation.Negotiate(connect, new MqttBrokerOptions { MaxSessionExpirySeconds = 600 });

        decision.SessionExpiry.ShouldBe(120u);
        decision.ConnAckProperties.ShouldNotBeNull().SessionExpiryInterval.ShouldBeNull();
    }

    [Fact]
    public void A_5_0_client_without_a_session_expiry_gets_a_session_that_ends_with_the_connection()
    {
        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V500, cleanStart: false), new MqttBrokerOptions());

        decision.SessionExpiry.ShouldBe(0u);
    }

    [Theory]
    [InlineData(MqttProtocolVersion.V311, 60, null, 60_000)]
    [InlineData(MqttProtocolVersion.V311, 0, null, 0)]
    [InlineData(MqttProtocolVersion.V311, 10, 30, 10_000)]
    [InlineData(MqttProtocolVersion.V311, 60, 30, 30_000)]
    [InlineData(MqttProtocolVersion.V311, 0, 30, 30_000)]
    [InlineData(MqttProtocolVersion.V500, 60, null, 60_000)]
    [InlineData(MqttProtocolVersion.V500, 10, 30, 30_000)]
    [InlineData(MqttProtocolVersion.V500, 0, 30, 30_000)]
    public void Keep_alive_is_the_clients_unless_the_server_sets_one(MqttProtocolVersion version, int clientSeconds, int? serverSeconds, long expectedMs)
    {
        var options = new MqttBrokerOptions { ServerKeepAliveSeconds = serverSeconds };

        var decision = ConnectNegotiation.Negotiate(Connect(version, keepAlive: (ushort)clientSeconds), options);

        decision.KeepAliveMs.ShouldBe(expectedMs);
        if (version == MqttProtocolVersion.V500)
        {
            decision.ConnAckProperties.ShouldNotBeNull().ServerKeepAlive.ShouldBe((ushort?)serverSeconds);
        }
    }

    [Fact]
    public void Outbound_limits_come_from_the_clients_receive_maximum_packet_size_and_topic_aliases()
    {
        var options = new MqttBrokerOptions { MaxInflightMessages = 64 };
        var connect = Connect(MqttProtocolVersion.V500, properties: new MqttProperties
        {
            ReceiveMaximum = 10,
            MaximumPacketSize = 2048,
            TopicAliasMaximum = 5,
        });

        var decision = ConnectNegotiation.Negotiate(connect, options);

        decision.OutboundInflightLimit.ShouldBe(10);
        decision.ClientMaxPacketSize.ShouldBe(2048);
        decision.ClientTopicAliasMaximum.ShouldBe(5);
    }

    [Fact]
    public void Without_client_limits_the_brokers_inflight_limit_holds_and_nothing_else_is_limited()
    {
        var decision = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V311), new MqttBrokerOptions { MaxInflightMessages = 64 });

        decision.OutboundInflightLimit.ShouldBe(64);
        decision.ClientMaxPacketSize.ShouldBe(int.MaxValue);
        decision.ClientTopicAliasMaximum.ShouldBe(0);
    }

    [Fact]
    public void A_maximum_packet_size_beyond_int_is_treated_as_no_limit()
    {
        var connect = Connect(MqttProtocolVersion.V500, properties: new MqttProperties { MaximumPacketSize = uint.MaxValue });

        ConnectNegotiation.Negotiate(connect, new MqttBrokerOptions()).ClientMaxPacketSize.ShouldBe(int.MaxValue);
    }

    [Fact]
    public void The_5_0_connack_announces_the_brokers_limits()
    {
        var options = new MqttBrokerOptions { ReceiveMaximum = 100, MaxPacketSize = 4096, TopicAliasMaximum = 16 };

        var properties = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V500), options).ConnAckProperties.ShouldNotBeNull();

        properties.ReceiveMaximum.ShouldBe((ushort?)100);
        properties.MaximumPacketSize.ShouldBe(4096u);
        properties.TopicAliasMaximum.ShouldBe((ushort?)16);
        properties.ServerKeepAlive.ShouldBeNull();
    }

    [Fact]
    public void The_5_0_connack_leaves_out_limits_at_the_protocol_default()
    {
        var options = new MqttBrokerOptions { ReceiveMaximum = ushort.MaxValue, TopicAliasMaximum = 0 };

        var properties = ConnectNegotiation.Negotiate(Connect(MqttProtocolVersion.V500), options).ConnAckProperties.ShouldNotBeNull();

        properties.ReceiveMaximum.ShouldBeNull();
        properties.TopicAliasMaximum.ShouldBeNull();
    }
}

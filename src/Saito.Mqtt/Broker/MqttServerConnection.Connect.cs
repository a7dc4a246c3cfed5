using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// CONNECT: the decision from the packet and the options (ConnectNegotiation), then the connection limit,
// authentication and the session (taking it over from an older connection).
internal sealed partial class MqttServerConnection
{
    private async ValueTask<bool> HandleConnectAsync(ConnectPacket connect, CancellationToken token)
    {
        _broker.LeftPending(this);
        Version = connect.ProtocolVersion;
        var options = _broker.Options;
        var decision = ConnectNegotiation.Negotiate(connect, options);
        ClientId = decision.ClientId;
        UserName = connect.UserName;
        if (decision.LimitHit is { } limit)
        {
            _broker.Metrics.LimitHit(limit);
        }

        if (decision.Refusal is { } refusal)
        {
            return await RefuseAsync(refusal, token);
        }

        if (!_broker.TryReserveConnectionSlot())
        {
            return await RefuseAsync(ConnectNegotiation.ConnectionLimitReached(options), token);
        }

        var outcome = await _broker.AuthenticateAsync(this, connect, token);
        if (outcome.Result != MqttAuthenticationResult.Success || outcome.Identity is null)
        {
            _broker.ReleaseConnectionSlot();
            return await RefuseAsync(ConnectNegotiation.NotAuthenticated(outcome.Result), token);
        }

        // A will is a publish the broker makes for the client later: the same topic limits and ACL as the client's own
        // publishes, checked now, since the client is not there to be refused when it is sent.
        if (connect.Will is { } will && WillRefusal(will.Topic, outcome.Identity) is { } willRefusal)
        {
            _broker.ReleaseConnectionSlot();
            return await RefuseAsync(willRefusal, token);
        }

        _outboundInflightLimit = decision.OutboundInflightLimit;
        _clientMaxPacketSize = decision.ClientMaxPacketSize;
        _clientTopicAliasMaximum = decision.ClientTopicAliasMaximum;
        KeepAliveMs = decision.KeepAliveMs;
        _will = connect.Will;

        Identity = outcome.Identity;
        if (_broker.AttachSession(this, decision.ClientId, connect.CleanStart, decision.SessionExpiry, out bool ownedByAnother) is not var (session, present))
        {
            _broker.ReleaseConnectionSlot();
            if (ownedByAnother)
            {
                _broker.Metrics.Denied("session");
                Log.SessionOfAnother(_logger, Identity.Name, LogId, LogText.Safe(decision.ClientId));
                return await RefuseAsync(
                    new ConnectRefusal(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized, "the client id's session belongs to another identity"), token);
            }

            return await RefuseAsync(ConnectNegotiation.SessionLimitReached(options), token);
        }

        Session = session;
        _resendInflight = present;
        await SendControlAsync(new ConnAckPacket { SessionPresent = present, ReasonCode = 0, Properties = decision.ConnAckProperties }, token);
        _connected = true;
        _broker.Connections.Connected();
        Log.Connected(_logger, LogId, Identity.Name, RemoteName, Info.Transport, Version, present);
        Signal();
        return true;
    }

    private async ValueTask<bool> RefuseAsync(ConnectRefusal refusal, CancellationToken token)
    {
        var level = _broker.ConnectRefused(refusal.Code5.ToString(), out long refused, out long total);
        Log.ConnectRefused(_logger, level, LogId, RemoteName, refusal.Why, refused, total);
        await SendControlAsync(new ConnAckPacket { ReasonCode = refusal.CodeFor(Version) }, token);
        return false;
    }

    /// <summary>Why a will to <paramref name="topic"/> is refused (a topic over the limits, or one the client may not publish to); null when it is not.</summary>
    private ConnectRefusal? WillRefusal(string topic, MqttClientIdentity identity)
    {
        if (TopicLimitHit(topic) is { } limit)
        {
            return new ConnectRefusal(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.TopicNameInvalid, $"will topic over Mqtt:{limit}");
        }

        if (!_broker.MayPublish(identity, topic))
        {
            _broker.Metrics.Denied("will");
            Log.PublishDenied(_logger, identity.Name, LogId, LogText.Safe(topic));
            return new ConnectRefusal(MqttConnectReturnCode.NotAuthorized, MqttReasonCode.NotAuthorized, "not authorized for the will's topic");
        }

        return null;
    }
}

using System.Buffers;
using System.Globalization;
using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Codec;

/// <summary>
/// Every field of a packet written out as text, so two packets compare field by field and a failing
/// property shows what differed. Absent and empty property sets read the same.
/// </summary>
internal static class PacketDescription
{
    public static string Of(MqttPacket packet)
    {
        var s = new StringBuilder();
        s.Append(packet.Type);
        switch (packet)
        {
            case ConnectPacket p:
                Field(s, "version", p.ProtocolVersion);
                Field(s, "clean", p.CleanStart);
                Field(s, "keepAlive", p.KeepAliveSeconds);
                Field(s, "clientId", p.ClientId);
                Field(s, "user", p.UserName ?? "(none)");
                Field(s, "password", p.Password is { } password ? Hex(password.Span) : "(none)");
                if (p.Will is { } will)
                {
                    Field(s, "will.topic", will.Topic);
                    Field(s, "will.payload", Hex(will.Payload.Span));
                    Field(s, "will.qos", will.QoS);
                    Field(s, "will.retain", will.Retain);
                    Field(s, "will.properties", Of(will.Properties));
                }

                break;
            case ConnAckPacket p:
                Field(s, "sessionPresent", p.SessionPresent);
                Field(s, "reason", p.ReasonCode);
                break;
            case PublishPacket p:
                Field(s, "topic", p.Topic);
                Field(s, "qos", p.QoS);
                Field(s, "retain", p.Retain);
                Field(s, "dup", p.Dup);
                Field(s, "packetId", p.PacketId);
                Field(s, "payload", Hex(p.Payload.Span));
                break;
            case PublishAckPacket p:
                Field(s, "packetId", p.PacketId);
                Field(s, "reason", (byte)p.ReasonCode);
                break;
            case SubscribePacket p:
                Field(s, "packetId", p.PacketId);
                foreach (var sub in p.Subscriptions)
                {
                    Field(s, "filter", FormattableString.Invariant(
                        $"{sub.TopicFilter} qos={sub.QoS} noLocal={sub.NoLocal} rap={sub.RetainAsPublished} rh={sub.RetainHandling}"));
                }

                break;
            case SubAckPacket p:
                Field(s, "packetId", p.PacketId);
                Field(s, "codes", string.Join(",", p.ReasonCodes.Select(c => ((byte)c).ToString("X2", CultureInfo.InvariantCulture))));
                break;
            case UnsubscribePacket p:
                Field(s, "packetId", p.PacketId);
                Field(s, "filters", string.Join("|", p.TopicFilters));
                break;
            case UnsubAckPacket p:
                Field(s, "packetId", p.PacketId);
                Field(s, "codes", string.Join(",", p.ReasonCodes.Select(c => ((byte)c).ToString("X2", CultureInfo.InvariantCulture))));
                break;
            case DisconnectPacket p:
                Field(s, "reason", (byte)p.ReasonCode);
                break;
            case AuthPacket p:
                Field(s, "reason", (byte)p.ReasonCode);
                break;
        }

        Field(s, "properties", Of(packet.Properties));
        return s.ToString();
    }

    public static string Of(in PublishFrame p) => Of(new PublishPacket
    {
        Topic = p.Topic,
        QoS = p.QoS,
        Retain = p.Retain,
        Dup = p.Dup,
        PacketId = p.PacketId,
        Payload = p.Payload.ToArray(),
        Properties = p.Properties,
    });

    public static string Of(MqttProperties? p)
    {
        if (p is null || p.IsEmpty)
        {
            return "{}";
        }

        var s = new StringBuilder("{");
        Optional(s, "pfi", p.PayloadFormatIndicator);
        Optional(s, "expiry", p.MessageExpiryInterval);
        Optional(s, "contentType", p.ContentType);
        Optional(s, "responseTopic", p.ResponseTopic);
        Optional(s, "correlation", p.CorrelationData is { } cd ? Hex(cd.Span) : null);
        if (p.SubscriptionIdentifiers is { Count: > 0 } ids)
        {
            Field(s, "subIds", string.Join(",", ids));
        }

        Optional(s, "sessionExpiry", p.SessionExpiryInterval);
        Optional(s, "assignedClientId", p.AssignedClientIdentifier);
        Optional(s, "serverKeepAlive", p.ServerKeepAlive);
        Optional(s, "authMethod", p.AuthenticationMethod);
        Optional(s, "authData", p.AuthenticationData is { } ad ? Hex(ad.Span) : null);
        Optional(s, "requestProblem", p.RequestProblemInformation);
        Optional(s, "willDelay", p.WillDelayInterval);
        Optional(s, "requestResponse", p.RequestResponseInformation);
        Optional(s, "responseInfo", p.ResponseInformation);
        Optional(s, "serverReference", p.ServerReference);
        Optional(s, "reasonString", p.ReasonString);
        Optional(s, "receiveMax", p.ReceiveMaximum);
        Optional(s, "topicAliasMax", p.TopicAliasMaximum);
        Optional(s, "topicAlias", p.TopicAlias);
        Optional(s, "maxQoS", p.MaximumQoS);
        Optional(s, "retainAvailable", p.RetainAvailable);
        if (p.UserProperties is { Count: > 0 } users)
        {
            Field(s, "user", string.Join(",", users.Select(u => $"[{u.Name}={u.Value}]")));
        }

        Optional(s, "maxPacketSize", p.MaximumPacketSize);
        Optional(s, "wildcardAvailable", p.WildcardSubscriptionAvailable);
        Optional(s, "subIdAvailable", p.SubscriptionIdentifierAvailable);
        Optional(s, "sharedAvailable", p.SharedSubscriptionAvailable);
        return s.Append(" }").ToString();
    }

    private static void Optional<T>(StringBuilder s, string name, T? value)
    {
        if (value is not null)
        {
            Field(s, name, value);
        }
    }

    private static void Field<T>(StringBuilder s, string name, T value) =>
        s.Append(' ').Append(name).Append('=').Append(Convert.ToString(value, CultureInfo.InvariantCulture));

    private static string Hex(ReadOnlySpan<byte> bytes) => bytes.IsEmpty ? "(empty)" : Convert.ToHexString(bytes);
}

using System.Buffers;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Client;

/// <summary>Everything the broker sends after CONNACK, and the application's acknowledgements.</summary>
public sealed partial class MqttClient
{
    private readonly MqttTopicCache _topics = new(1024);

    // Guarded by _sync. QoS 2 packet identifiers whose PUBREC went out (or whose message the application has),
    // waiting for PUBREL. Part of the session, so it survives reconnects and is cleared with the session.
    private readonly HashSet<ushort> _inboundQoS2Released = [];

    // Bumped whenever the broker reports a new session: packet identifiers from an older epoch are meaningless.
    private long _sessionEpoch;

    /// <summary>The read loop's handler: one packet at a time, in arrival order.</summary>
    private async ValueTask HandleFrameAsync(MqttClientConnection connection, MqttFrame frame)
    {
        var version = connection.Version;
        switch (frame.Type)
        {
            case MqttPacketType.Publish:
                await OnPublishAsync(connection, frame);
                break;
            case MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubComp:
                OnPublishAcknowledgement(connection, (PublishAckPacket)MqttPacketDecoder.Decode(frame, version));
                break;
            case MqttPacketType.PubRel:
                OnPubRel(connection, (PublishAckPacket)MqttPacketDecoder.Decode(frame, version));
                break;
            case MqttPacketType.SubAck:
                var subAck = (SubAckPacket)MqttPacketDecoder.Decode(frame, version);
                OnRequestAcknowledgement(subAck, subAck.PacketId);
                break;
            case MqttPacketType.UnsubAck:
                var unsubAck = (UnsubAckPacket)MqttPacketDecoder.Decode(frame, version);
                OnRequestAcknowledgement(unsubAck, unsubAck.PacketId);
                break;
            case MqttPacketType.PingResp:
                MqttPacketDecoder.Decode(frame, version);
                connection.OnPingResponse();
                MqttClientLog.PingResponse(_logger);
                break;
            case MqttPacketType.Disconnect:
                var disconnect = (DisconnectPacket)MqttPacketDecoder.Decode(frame, version);
                throw new MqttServerDisconnectException(disconnect.ReasonCode, disconnect.Properties?.ReasonString);
            default:
                throw new MqttProtocolException(MqttReasonCode.ProtocolError, $"A broker does not send {frame.Type} to a client");
        }
    }

    private async ValueTask OnPublishAsync(MqttClientConnection connection, MqttFrame frame)
    {
        var publish = MqttPacketDecoder.DecodePublish(frame, connection.Version, _topics);
        if (publish.Topic.Length == 0 || publish.Properties?.TopicAlias is not null)
        {
            // CONNECT sent no Topic Alias Maximum, which means 0: the broker must not use aliases.
            throw new MqttProtocolException(MqttReasonCode.TopicAliasInvalid, "PUBLISH with a topic alias; the client allows none");
        }

        // The frame is only valid until the read loop advances the pipe: the message owns a copy.
        ReadOnlyMemory<byte> payload = publish.Payload.IsEmpty ? ReadOnlyMemory<byte>.Empty : publish.Payload.ToArray();
        ushort id = publish.PacketId;
        if (publish.QoS == MqttQoS.AtMostOnce)
        {
            await DeliverAsync(connection, new MqttReceivedMessage(this, connection, publish, payload, 0));
            return;
        }

        if (publish.QoS == MqttQoS.ExactlyOnce)
        {
            lock (_sync)
            {
                if (_inboundQoS2Released.Contains(id))
                {
                    // The application already has it (PUBREC sent, or acknowledged after a reconnect):
                    // answer PUBREC again, in turn, and do not deliver twice.
                    connection.AckOrder.Enqueue(new PendingAck(MqttPacketType.PubRec, id, null) { Ready = true });
                    SendReadyAcknowledgements(connection);
                    MqttClientLog.DuplicateQoS2(_logger, id);
                    return;
                }

                if (connection.PendingQoS2.ContainsKey(id))
                {
                    // Delivered, waiting for the application: its acknowledgement will answer this copy too.
                    MqttClientLog.DuplicateQoS2(_logger, id);
                    return;
                }
            }
        }

        // Receive maximum: wait (and stop reading) while the application holds that many unacknowledged messages.
        if (!connection.InboundSlots.TryTake())
        {
            MqttClientLog.InboundPaused(_logger, "receive maximum reached");
            connection.SetReadPaused(true);
            try
            {
                await connection.InboundSlots.WaitAsync(connection.Closing);
            }
            finally
            {
                connection.SetReadPaused(false);
            }
        }

        MqttReceivedMessage message;
        lock (_sync)
        {
            message = new MqttReceivedMessage(this, connection, publish, payload, _sessionEpoch);
            var ack = new PendingAck(publish.QoS == MqttQoS.AtLeastOnce ? MqttPacketType.PubAck : MqttPacketType.PubRec, id, message);
            message.Ack = ack;
            connection.AckOrder.Enqueue(ack);
            if (publish.QoS == MqttQoS.ExactlyOnce)
            {
                connection.PendingQoS2[id] = message;
            }
        }

        await DeliverAsync(connection, message);
    }

    private async ValueTask DeliverAsync(MqttClientConnection connection, MqttReceivedMessage message)
    {
        if (_messages.Writer.TryWrite(message))
        {
            return;
        }

        MqttClientLog.InboundPaused(_logger, "the application is not reading Messages");
        connection.SetReadPaused(true);
        try
        {
            await _messages.Writer.WriteAsync(message, connection.Closing);
        }
        finally
        {
            connection.SetReadPaused(false);
        }
    }

    private void OnPubRel(MqttClientConnection connection, PublishAckPacket pubRel)
    {
        lock (_sync)
        {
            bool known = _inboundQoS2Released.Remove(pubRel.PacketId);
            connection.TryEnqueue(new PublishAckPacket(MqttPacketType.PubComp)
            {
                PacketId = pubRel.PacketId,
                ReasonCode = known ? MqttReasonCode.Success : MqttReasonCode.PacketIdentifierNotFound,
            });
        }
    }

    /// <summary>Called by <see cref="MqttReceivedMessage.AcknowledgeAsync"/> for QoS 1 and 2.</summary>
    internal bool Acknowledge(MqttReceivedMessage message, MqttReasonCode reasonCode)
    {
        var connection = message.Connection!;
        var ack = message.Ack!;
        lock (_sync)
        {
            if (message.IsAcknowledged)
            {
                return !connection.IsClosed;
            }

            message.IsAcknowledged = true;
            ack.Ready = true;
            ack.ReasonCode = reasonCode;
            if (connection.IsClosed)
            {
                // Never sent with a stale identifier. For QoS 2 in the same session, remember that the application
                // has the message, so the broker's redelivery (same identifier, MQTT 4.4) gets PUBREC and no second delivery.
                if (message.QoS == MqttQoS.ExactlyOnce && message.SessionEpoch == _sessionEpoch && (byte)reasonCode < 0x80)
                {
                    _inboundQoS2Released.Add(message.PacketId);
                }

                MqttClientLog.StaleAcknowledgement(_logger, message.PacketId, message.Topic);
                return false;
            }

            SendReadyAcknowledgements(connection);
            return true;
        }
    }

    /// <summary>Under the lock: sends the acknowledgements at the head of the arrival order that are ready.</summary>
    private void SendReadyAcknowledgements(MqttClientConnection connection)
    {
        bool v5 = connection.Version == MqttProtocolVersion.V500;
        while (connection.AckOrder.TryPeek(out var head) && head.Ready)
        {
            connection.AckOrder.Dequeue();
            var code = v5 ? head.ReasonCode : MqttReasonCode.Success;
            if (head.Type == MqttPacketType.PubRec)
            {
                connection.PendingQoS2.Remove(head.PacketId);

                // A refusing PUBREC ends the flow (no PUBREL follows); a redelivery would be a new message.
                if ((byte)code < 0x80)
                {
                    _inboundQoS2Released.Add(head.PacketId);
                }
            }

            connection.TryEnqueue(new PublishAckPacket(head.Type) { PacketId = head.PacketId, ReasonCode = code });
            if (head.Message is not null)
            {
                connection.InboundSlots.Release();
            }
        }
    }
}

using System.Buffers;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Connections;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// The send loop: the only writer to the transport.
internal sealed partial class MqttServerConnection
{
    private async ValueTask SendControlAsync(MqttPacket packet, CancellationToken token)
    {
        await _send.WriteAsync(packet, token);
    }

    private async Task SendLoopAsync()
    {
        await Task.Yield();
        var output = _transport.Output;
        var token = _closed.Token;
        try
        {
            while (true)
            {
                bool wrote = false;
                bool finished = false;
                if (Interlocked.CompareExchange(ref _writing, 1, 0) != 0)
                {
                    // The read loop is writing inline; it wakes this loop when it is done.
                    await _send.WaitAsync();
                    token.ThrowIfCancellationRequested();
                    continue;
                }

                try
                {
                    while (_send.TryRead(out var packet))
                    {
                        int size = MqttPacketEncoder.Encode(output, packet, Version);
                        _broker.Metrics.PacketSent(size);
                        wrote = true;
                        if (packet is DisconnectPacket || (packet is ConnAckPacket { ReasonCode: not 0 }))
                        {
                            finished = true;
                            break;
                        }
                    }

                    if (!finished && _connected && Volatile.Read(ref _closing) == 0)
                    {
                        if (!WriteReadyAcks(output, ref wrote))
                        {
                            finished = true;
                        }

                        wrote |= _resendInflight && ResendInflight(output);
                        wrote |= WriteQueuedMessages(output);
                    }

                    if (wrote)
                    {
                        var flush = await output.FlushAsync(token);
                        if (flush.IsCompleted || flush.IsCanceled)
                        {
                            return;
                        }
                    }
                }
                finally
                {
                    Volatile.Write(ref _writing, 0);
                }

                if (finished || (_send.IsDrained && Volatile.Read(ref _closing) != 0))
                {
                    // Everything owed is written (a DISCONNECT or refusing CONNACK included): stop reading too.
                    await _closed.CancelAsync();
                    return;
                }

                if (!wrote)
                {
                    await _send.WaitAsync();
                    token.ThrowIfCancellationRequested();
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Closing.
        }
        catch (Exception ex) when (ex is IOException or ConnectionAbortedException or ObjectDisposedException or InvalidOperationException)
        {
            Log.TransportFailed(_logger, RemoteName, LogId, ex.Message);
            await _closed.CancelAsync();
        }
    }

    /// <summary>
    /// Called by the read loop once a read's packets are handled: writes the acknowledgements that are ready and the
    /// messages the window has room for on this thread, instead of waking the send loop (a thread hop per read, which on a
    /// busy machine is most of a subscriber's round trip). Only when the send loop is not writing and no control packet
    /// waits (those keep their order in the send loop); otherwise the send loop is woken as before.
    /// </summary>
    private async ValueTask WriteInlineAsync(CancellationToken token)
    {
        if (!_sendWanted)
        {
            return;
        }

        _sendWanted = false;
        if (!_connected || _resendInflight || Volatile.Read(ref _closing) != 0 || _send.Count > 0 ||
            Interlocked.CompareExchange(ref _writing, 1, 0) != 0)
        {
            Signal();
            return;
        }

        try
        {
            var output = _transport.Output;
            bool wrote = false;
            if (!WriteReadyAcks(output, ref wrote))
            {
                return;
            }

            wrote |= WriteQueuedMessages(output);
            if (wrote)
            {
                await output.FlushAsync(token);
            }
        }
        finally
        {
            Volatile.Write(ref _writing, 0);
        }

        // Whatever was queued meanwhile (or did not fit in one pass) is the send loop's.
        Signal();
    }

    /// <summary>Writes acknowledgements whose verdicts are in, in arrival order. False when a 3.1.1 client must be dropped.</summary>
    private bool WriteReadyAcks(PipeWriter output, ref bool wrote)
    {
        while (true)
        {
            PendingAck ack;
            lock (_ackLock)
            {
                if (_acks.Count == 0 || !_acks.Peek().Done)
                {
                    return true;
                }

                ack = _acks.Dequeue();
                _pendingAcks--;
                _pendingBytes -= ack.Size;
                if (_ackSpace is { } space)
                {
                    _ackSpace = null;
                    space.TrySetResult();
                }
            }

            if (ack.QoS == MqttQoS.AtMostOnce)
            {
                continue;
            }

            var verdict = ack.Verdict;
            if (!verdict.IsSuccess)
            {
                _broker.Metrics.PublishRefused();
                Log.PublishRefused(_logger, LogId, ack.PacketId, verdict.ReasonCode, verdict.ReasonString);
                if (ack.QoS == MqttQoS.ExactlyOnce)
                {
                    lock (Session!.Sync)
                    {
                        Session.InboundQoS2.Remove(ack.PacketId);
                    }
                }

                if (Version == MqttProtocolVersion.V311)
                {
                    // 3.1.1 has no way to say "not stored": drop the connection unacknowledged so the client resends.
                    _closed.Cancel();
                    return false;
                }
            }

            var properties = verdict.ReasonString is null || verdict.IsSuccess ? null : new MqttProperties { ReasonString = verdict.ReasonString };
            int size = MqttPacketEncoder.EncodePublishAck(output, ack.QoS == MqttQoS.AtLeastOnce ? MqttPacketType.PubAck : MqttPacketType.PubRec,
                ack.PacketId, verdict.ReasonCode, properties, Version);
            _broker.Metrics.PacketSent(size);
            if (verdict.IsSuccess && ack.ReadAt != 0)
            {
                _broker.Metrics.Acknowledged(ack.ReadAt);
            }

            wrote = true;
        }
    }

    /// <summary>After a session resumes: PUBLISH again with DUP what was not acknowledged, PUBREL what was released, in original order.</summary>
    private bool ResendInflight(PipeWriter output)
    {
        _resendInflight = false;
        var session = Session!;
        bool wrote = false;
        lock (session.Sync)
        {
            foreach (var (packetId, inflight) in session.Inflight)
            {
                if (inflight.Released)
                {
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubRel, packetId, MqttReasonCode.Success, null, Version);
                }
                else
                {
                    WritePublish(output, inflight.Outbound, packetId, dup: true, Environment.TickCount64);
                }

                wrote = true;
            }
        }

        return wrote;
    }

    private bool WriteQueuedMessages(PipeWriter output)
    {
        var session = Session!;
        bool wrote = false;
        long now = Environment.TickCount64;
        lock (session.Sync)
        {
            for (int i = 0; i < MaxMessagesPerFlush && session.TryPeekQueued(out var next); i++)
            {
                if (next.QoS != MqttQoS.AtMostOnce && session.InflightCount >= _outboundInflightLimit)
                {
                    break;
                }

                session.DequeueQueued();
                if (next.Message.IsExpired(now))
                {
                    _broker.Metrics.Dropped("expired");
                    continue;
                }

                ushort packetId = 0;
                if (next.QoS != MqttQoS.AtMostOnce)
                {
                    packetId = session.NextPacketId();
                    session.Inflight.Add(packetId, new InflightMessage { Outbound = next, PacketId = packetId });
                }

                if (WritePublish(output, next, packetId, dup: false, now))
                {
                    wrote = true;
                }
                else if (packetId != 0)
                {
                    session.Inflight.Remove(packetId);
                }
            }
        }

        return wrote;
    }

    /// <summary>Encodes one outbound PUBLISH; false when it is too large for the client (dropped, as the standard says).</summary>
    private bool WritePublish(PipeWriter output, in OutboundMessage outbound, ushort packetId, bool dup, long now)
    {
        var message = outbound.Message;
        string topic = message.Topic;
        MqttProperties? properties = null;
        if (Version == MqttProtocolVersion.V500)
        {
            properties = OutboundProperties(outbound, now, ref topic);
        }

        if (_clientMaxPacketSize != int.MaxValue &&
            MqttPacketEncoder.PublishSize(Version, topic, message.Payload.Length, outbound.QoS, properties) > _clientMaxPacketSize)
        {
            _broker.Metrics.Dropped("too_large_for_client");
            return false;
        }

        int size = MqttPacketEncoder.EncodePublish(output, Version, topic, new ReadOnlySequence<byte>(message.Payload), outbound.QoS,
            outbound.Retain, dup, packetId, properties);
        _broker.Metrics.MessageSent(size);
        return true;
    }

    /// <summary>The properties of one outbound 5.0 PUBLISH, built in a reused object (encoding is synchronous).</summary>
    private MqttProperties? OutboundProperties(in OutboundMessage outbound, long now, ref string topic)
    {
        var source = outbound.Message.Properties;
        bool alias = _clientTopicAliasMaximum > 0;
        if (source is null && outbound.SubscriptionIds is null && !alias)
        {
            return null;
        }

        var p = _scratch ??= new MqttProperties();
        p.PayloadFormatIndicator = source?.PayloadFormatIndicator;
        p.ContentType = source?.ContentType;
        p.ResponseTopic = source?.ResponseTopic;
        p.CorrelationData = source?.CorrelationData;
        p.UserProperties = source?.UserProperties;
        p.MessageExpiryInterval = outbound.Message.ExpiresAt is { } at ? (uint)Math.Max(0, (at - now + 999) / 1000) : null;
        p.TopicAlias = null;
        if (outbound.SubscriptionIds is { } ids)
        {
            var scratchIds = _scratchIds ??= [];
            scratchIds.Clear();
            scratchIds.AddRange(ids);
            p.SubscriptionIdentifiers = scratchIds;
        }
        else
        {
            p.SubscriptionIdentifiers = null;
        }

        if (alias)
        {
            _outboundAliases ??= new Dictionary<string, ushort>(StringComparer.Ordinal);
            if (_outboundAliases.TryGetValue(topic, out ushort existing))
            {
                p.TopicAlias = existing;
                topic = string.Empty;
            }
            else if (_outboundAliases.Count < _clientTopicAliasMaximum)
            {
                ushort next = (ushort)(_outboundAliases.Count + 1);
                _outboundAliases[topic] = next;
                p.TopicAlias = next;
            }
        }

        return p;
    }
}

using System.Buffers;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Broker;

// Inbound PUBLISH: checks, routing, the wait for the publish hook, ordered acknowledgements; QoS 1 and 2 acknowledgement flows.
internal sealed partial class MqttServerConnection
{
    private async ValueTask HandlePublishAsync(MqttFrame frame, CancellationToken token)
    {
        long readAt = System.Diagnostics.Stopwatch.GetTimestamp();
        await ThrottleAsync(token);
        var publish = MqttPacketDecoder.DecodePublish(frame, Version, _broker.TopicCache);
        var properties = publish.Properties;
        string topic = ResolveTopicAlias(publish.Topic, properties);
        if (properties?.SubscriptionIdentifiers is not null)
        {
            throw MqttProtocolException.Protocol("A client PUBLISH carries a subscription identifier");
        }

        if (TopicLimitHit(topic) is { } limit)
        {
            await RefusePublishAsync(publish, MqttReasonCode.TopicNameInvalid, $"topic over Mqtt:{limit}", token);
            return;
        }

        if (!_broker.MayPublish(Identity, topic))
        {
            _broker.Metrics.Denied("publish");
            Log.PublishDenied(_logger, Identity.Name, LogId, LogText.Safe(topic));
            await RefusePublishAsync(publish, MqttReasonCode.NotAuthorized, "not authorized for this topic", token);
            return;
        }

        var session = Session!;
        if (publish.QoS == MqttQoS.ExactlyOnce)
        {
            bool duplicate;
            int awaitingRelease;
            PendingAck? original;
            lock (session.Sync)
            {
                duplicate = !session.InboundQoS2.Add(publish.PacketId);
                awaitingRelease = session.InboundQoS2.Count;
                session.InboundQoS2Pending.TryGetValue(publish.PacketId, out original);
            }

            if (duplicate && original is { Completion: { } first } && !first.Task.IsCompleted)
            {
                // The first copy (on this or an earlier connection of the session) still waits for its commit: the
                // PUBREC for this copy goes out with that verdict, in order, never before the data is safe.
                var follower = new PendingAck(publish.PacketId, publish.QoS, 0);
                await EnqueueAckAsync(follower, token);
                _broker.Track(FollowAsync(first.Task, follower));
                return;
            }

            if (duplicate)
            {
                // Method A: routed once already; the client resent before it saw PUBREC. Acknowledge again, in order.
                await EnqueueAckAsync(new PendingAck(publish.PacketId, publish.QoS, 0) { Verdict = MqttPublishVerdict.Accepted, Done = true }, token);
                Signal();
                return;
            }

            if (Version == MqttProtocolVersion.V500 && awaitingRelease + _pendingAcks > _broker.Options.ReceiveMaximum)
            {
                throw new MqttProtocolException(MqttReasonCode.ReceiveMaximumExceeded, "More unacknowledged QoS 2 publishes than the receive maximum");
            }
        }

        long now = Environment.TickCount64;
        byte[] payload = publish.Payload.ToArray();
        var message = MqttMessage.Create(topic, payload, publish.QoS, publish.Retain, properties, session, now);
        _broker.Route(message, now);

        var hook = _broker.PublishHook;
        var pending = new PendingAck(publish.PacketId, publish.QoS, payload.Length)
        {
            ReadAt = hook is null ? 0 : readAt,
            Completion = publish.QoS == MqttQoS.ExactlyOnce ? new TaskCompletionSource<MqttPublishVerdict>(TaskCreationOptions.RunContinuationsAsynchronously) : null,
        };
        if (pending.Completion is not null)
        {
            lock (session.Sync)
            {
                session.InboundQoS2Pending[publish.PacketId] = pending;
            }
        }

        await EnqueueAckAsync(pending, token);
        if (hook is null)
        {
            Complete(pending, MqttPublishVerdict.Accepted, onReadLoop: true);
            return;
        }

        var inbound = new MqttInboundPublish
        {
            ClientId = ClientId,
            UserName = UserName,
            Topic = topic,
            Payload = payload,
            QoS = publish.QoS,
            Retain = publish.Retain,
            Properties = message.Properties,
            ProtocolVersion = Version,
            ReceivedAt = DateTimeOffset.UtcNow,
        };
        ValueTask<MqttPublishVerdict> verdict;
        try
        {
            verdict = hook.OnPublishAsync(inbound, _broker.StoppingToken);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            Log.HookFailed(_logger, LogId, LogText.Safe(topic), ex);
            Complete(pending, MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError, "publish hook failed"), onReadLoop: true);
            return;
        }

        if (verdict.IsCompletedSuccessfully)
        {
            Complete(pending, verdict.Result, onReadLoop: true);
        }
        else
        {
            _broker.HookStarted();
            _ = AwaitVerdictAsync(verdict, pending, topic);
        }
    }

    /// <summary>The limit (<c>MaxTopicLength</c> or <c>MaxTopicLevels</c>) <paramref name="topic"/> is over, counted; null when within both.</summary>
    private string? TopicLimitHit(string topic)
    {
        var options = _broker.Options;
        if (MqttTopic.IsWithinLimits(topic, options.MaxTopicLength, options.MaxTopicLevels))
        {
            return null;
        }

        string limit = topic.Length > options.MaxTopicLength ? nameof(MqttBrokerOptions.MaxTopicLength) : nameof(MqttBrokerOptions.MaxTopicLevels);
        _broker.Metrics.LimitHit(limit);
        return limit;
    }

    private async Task AwaitVerdictAsync(ValueTask<MqttPublishVerdict> verdict, PendingAck pending, string topic)
    {
        MqttPublishVerdict result;
        try
        {
            result = await verdict;
        }
        catch (Exception ex)
        {
            Log.HookFailed(_logger, LogId, LogText.Safe(topic), ex);
            result = MqttPublishVerdict.Failed(MqttReasonCode.UnspecifiedError, "publish hook failed");
        }

        try
        {
            Complete(pending, result);
        }
        finally
        {
            _broker.HookEnded();
        }
    }

    /// <summary>Records the verdict; the acknowledgement goes out inline after the read (<paramref name="onReadLoop"/>) or from the send loop.</summary>
    private void Complete(PendingAck pending, MqttPublishVerdict verdict, bool onReadLoop = false)
    {
        pending.Verdict = verdict;
        pending.Done = true;
        if (pending.Completion is { } completion && Session is { } session)
        {
            lock (session.Sync)
            {
                if (session.InboundQoS2Pending.TryGetValue(pending.PacketId, out var current) && ReferenceEquals(current, pending))
                {
                    session.InboundQoS2Pending.Remove(pending.PacketId);
                }

                if (!verdict.IsSuccess)
                {
                    // Not stored: a copy sent again must be handled afresh, not acknowledged as a duplicate.
                    session.InboundQoS2.Remove(pending.PacketId);
                }
            }

            completion.TrySetResult(verdict);
        }

        if (onReadLoop)
        {
            _sendWanted = true;
        }
        else
        {
            Signal();
        }
    }

    /// <summary>Completes <paramref name="follower"/> with the first copy's verdict when it lands (a completion source never faults here).</summary>
    private Task FollowAsync(Task<MqttPublishVerdict> first, PendingAck follower) =>
        first.ContinueWith(t => Complete(follower, t.Result), CancellationToken.None, TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);

    /// <summary>
    /// A publish the broker refuses before routing (topic over a limit, denied by the ACL). 5.0: a negative
    /// acknowledgement for QoS 1 and 2 (in order with the others), nothing for QoS 0. 3.1.1 has no negative
    /// acknowledgement: the connection is closed, unacknowledged.
    /// </summary>
    private async ValueTask RefusePublishAsync(PublishFrame publish, MqttReasonCode code, string why, CancellationToken token)
    {
        if (Version == MqttProtocolVersion.V311)
        {
            throw new MqttPublishRefusedException(code, why);
        }

        if (publish.QoS == MqttQoS.AtMostOnce)
        {
            _broker.Metrics.Dropped("refused");
            return;
        }

        await EnqueueAckAsync(new PendingAck(publish.PacketId, publish.QoS, 0) { Verdict = MqttPublishVerdict.Failed(code, why), Done = true }, token);
        Signal();
    }

    private async ValueTask EnqueueAckAsync(PendingAck pending, CancellationToken token)
    {
        while (true)
        {
            Task? wait = null;
            lock (_ackLock)
            {
                // Bytes too: a client may hold at most MaxPendingBytesPerClient of payload waiting for the commit
                // (one publish always fits, so a single large one is not stuck).
                bool bytesFit = _pendingBytes == 0 || _pendingBytes + pending.Size <= _broker.Options.MaxPendingBytesPerClient;
                if (_pendingAcks < _broker.Options.ReceiveMaximum && bytesFit)
                {
                    _pendingAcks++;
                    _pendingBytes += pending.Size;
                    _acks.Enqueue(pending);
                    return;
                }

                if (!bytesFit)
                {
                    _broker.Metrics.LimitHit(nameof(MqttBrokerOptions.MaxPendingBytesPerClient));
                }

                // Flow control: stop reading until the hook releases an acknowledgement.
                _ackSpace ??= new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                wait = _ackSpace.Task;
            }

            // Acknowledgements this read loop completed itself (a topic the hook answers at once) are written by it after
            // its batch of packets: write them now, since they are what frees the room. Otherwise more than
            // Mqtt:ReceiveMaximum such publishes in one read waited for each other, and the connection hung.
            await WriteInlineAsync(token);
            await wait.WaitAsync(token);
        }
    }

    private string ResolveTopicAlias(string topic, MqttProperties? properties)
    {
        if (properties?.TopicAlias is not { } alias)
        {
            if (topic.Length == 0)
            {
                throw MqttProtocolException.Protocol("PUBLISH with an empty topic and no topic alias");
            }

            return topic;
        }

        if (alias == 0 || alias > _broker.Options.TopicAliasMaximum)
        {
            throw new MqttProtocolException(MqttReasonCode.TopicAliasInvalid, $"Topic alias {alias} is outside 1..{_broker.Options.TopicAliasMaximum}");
        }

        _inboundAliases ??= [];
        if (topic.Length > 0)
        {
            // A topic over the limits is refused by the caller; kept here it would hold its length for the connection's
            // life (64 aliases of 65,000 characters are 8 MiB per connection).
            if (MqttTopic.IsWithinLimits(topic, _broker.Options.MaxTopicLength, _broker.Options.MaxTopicLevels))
            {
                _inboundAliases[alias] = topic;
            }

            return topic;
        }

        return _inboundAliases.TryGetValue(alias, out var known)
            ? known
            : throw MqttProtocolException.Protocol($"Topic alias {alias} used before it was set");
    }

    private async ValueTask HandleAckAsync(PublishAckPacket ack, CancellationToken token)
    {
        var session = Session!;
        switch (ack.Type)
        {
            case MqttPacketType.PubAck:
                lock (session.Sync)
                {
                    if (session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Outbound.QoS == MqttQoS.AtLeastOnce)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                }

                _sendWanted = true;
                break;
            case MqttPacketType.PubRec:
                bool known;
                lock (session.Sync)
                {
                    known = session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Outbound.QoS == MqttQoS.ExactlyOnce;
                    if (known && (byte)ack.ReasonCode >= 0x80)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                    else if (known)
                    {
                        inflight!.Released = true;
                    }
                }

                if ((byte)ack.ReasonCode < 0x80)
                {
                    await SendControlAsync(new PublishAckPacket(MqttPacketType.PubRel)
                    {
                        PacketId = ack.PacketId,
                        ReasonCode = known ? MqttReasonCode.Success : MqttReasonCode.PacketIdentifierNotFound,
                    }, token);
                }
                else
                {
                    Signal();
                }

                break;
            case MqttPacketType.PubRel:
                bool had;
                lock (session.Sync)
                {
                    had = session.InboundQoS2.Remove(ack.PacketId);
                }

                await SendControlAsync(new PublishAckPacket(MqttPacketType.PubComp)
                {
                    PacketId = ack.PacketId,
                    ReasonCode = had ? MqttReasonCode.Success : MqttReasonCode.PacketIdentifierNotFound,
                }, token);
                break;
            case MqttPacketType.PubComp:
                lock (session.Sync)
                {
                    if (session.Inflight.TryGetValue(ack.PacketId, out var inflight) && inflight.Released)
                    {
                        session.Inflight.Remove(ack.PacketId);
                    }
                }

                _sendWanted = true;
                break;
        }
    }
}

using System.Buffers;
using System.Buffers.Binary;
using System.Diagnostics;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Broker;

/// <summary>
/// One load: <c>Rate</c> is messages per second offered by all publishers together (open loop), 0 as fast as
/// acknowledgements allow (closed loop); <c>UnlimitedQueues</c> starts the brokers with no limit on a subscriber's queue
/// (nothing dropped), otherwise each runs on its defaults.
/// </summary>
internal sealed record BrokerLoadSettings(int Publishers, int MessagesPerPublisher, int PayloadBytes, MqttQoS QoS, int Inflight, MqttProtocolVersion Version, TimeSpan Timeout,
    double Rate = 0, bool UnlimitedQueues = false);

internal sealed record BrokerLoadResult(
    string Broker, BrokerLoadSettings Settings, long Published, long Delivered, double Seconds,
    double AckP50Ms, double AckP99Ms, double AckMaxMs, double EndToEndP50Ms, double EndToEndP99Ms, double BrokerCores, double PublishSeconds = double.NaN)
{
    public double DeliveredPerSecond => Delivered / Seconds;

    /// <summary>Publishes acknowledged per second, over the time the publishers took.</summary>
    public double AcceptedPerSecond => Published / PublishSeconds;
}

/// <summary>
/// Many publisher connections at QoS 1 (or 0/2) into a broker, one subscriber on '#': counts what arrives,
/// and measures publish-to-acknowledge latency at the publishers and publish-to-delivery at the subscriber.
/// </summary>
internal static class BrokerLoad
{
    public static async Task<BrokerLoadResult> RunAsync(string name, string host, int port, BrokerLoadSettings settings, Func<double>? brokerCpuSeconds,
        Action<long, long>? progress, CancellationToken token)
    {
        string topicRoot = "load/" + Guid.NewGuid().ToString("N")[..8];
        long expected = (long)settings.Publishers * settings.MessagesPerPublisher;
        var endToEnd = new long[expected];
        long delivered = 0;

        await using var subscriber = await LoadConnection.ConnectAsync(host, port, "sub-" + topicRoot, settings.Version, token);
        await subscriber.SendAsync(new SubscribePacket
        {
            PacketId = 1,
            Subscriptions = [new MqttSubscription { TopicFilter = topicRoot + "/#", QoS = settings.QoS }],
        }, token);
        if (await subscriber.ReceiveAsync(token) is not SubAckPacket)
        {
            throw new InvalidOperationException("Expected SUBACK");
        }

        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(settings.Timeout);
        var all = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var subscriberTask = Task.Run(async () =>
        {
            var output = subscriber.Output;
            await subscriber.ReceiveManyAsync((in MqttFrame frame) =>
            {
                if (frame.Type == MqttPacketType.PubRel)
                {
                    // QoS 2 delivery to the subscriber: the broker's PUBREL is answered with PUBCOMP, which frees its
                    // packet id (without it the broker's window to this subscriber fills and delivery stops).
                    var release = (PublishAckPacket)MqttPacketDecoder.Decode(frame, settings.Version);
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubComp, release.PacketId, MqttReasonCode.Success, null, settings.Version);
                    return true;
                }

                if (frame.Type != MqttPacketType.Publish)
                {
                    return true;
                }

                var publish = MqttPacketDecoder.DecodePublish(frame, settings.Version, topicCache: null);
                long sent = ReadTimestamp(publish.Payload);
                long index = Interlocked.Increment(ref delivered) - 1;
                if (index < endToEnd.Length)
                {
                    endToEnd[index] = Stopwatch.GetTimestamp() - sent;
                }

                if (publish.QoS == MqttQoS.AtLeastOnce)
                {
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubAck, publish.PacketId, MqttReasonCode.Success, null, settings.Version);
                }
                else if (publish.QoS == MqttQoS.ExactlyOnce)
                {
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubRec, publish.PacketId, MqttReasonCode.Success, null, settings.Version);
                }

                if (index + 1 >= expected)
                {
                    all.TrySetResult();
                }

                return true;
            }, timeout.Token, async () => await output.FlushAsync(timeout.Token));
        }, timeout.Token);

        var publishers = new List<LoadConnection>();
        for (int i = 0; i < settings.Publishers; i++)
        {
            publishers.Add(await LoadConnection.ConnectAsync(host, port, $"pub-{i}-{topicRoot}", settings.Version, token));
        }

        double cpuBefore = brokerCpuSeconds?.Invoke() ?? 0;
        var clock = Stopwatch.StartNew();
        var ackLatencies = new long[settings.Publishers][];
        long published = 0;
        var publishing = publishers.Select((connection, i) => Task.Run(async () =>
        {
            ackLatencies[i] = await PublishAsync(connection, $"{topicRoot}/hub{i}/device/biosensor", settings, () => Interlocked.Increment(ref published), timeout.Token);
        }, timeout.Token)).ToList();

        double seconds;
        double publishedIn;
        using (var ticker = new PeriodicTimer(TimeSpan.FromMilliseconds(250)))
        {
            var publishingDone = Task.WhenAll(publishing);
            var publishSeconds = publishingDone.ContinueWith(_ => clock.Elapsed.TotalSeconds, CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            var done = Task.WhenAll(publishingDone, all.Task);
            long lastDelivered = -1;
            long quietSince = 0;
            while (!done.IsCompleted)
            {
                await Task.WhenAny(done, ticker.WaitForNextTickAsync(timeout.Token).AsTask());
                long now = Interlocked.Read(ref delivered);
                progress?.Invoke(Interlocked.Read(ref published), now);
                if (timeout.IsCancellationRequested || publishingDone.IsFaulted)
                {
                    break;
                }

                // A broker that dropped messages never delivers them all: once publishing is over, two seconds without a
                // delivery end the round.
                if (publishingDone.IsCompleted && now == lastDelivered && Stopwatch.GetElapsedTime(quietSince).TotalSeconds >= 2)
                {
                    break;
                }

                if (now != lastDelivered)
                {
                    lastDelivered = now;
                    quietSince = Stopwatch.GetTimestamp();
                }
            }

            if (publishingDone.IsFaulted)
            {
                await publishingDone;
            }

            publishedIn = publishSeconds.IsCompleted ? await publishSeconds : double.NaN;
            seconds = Math.Max(clock.Elapsed.TotalSeconds - (all.Task.IsCompleted ? 0 : Stopwatch.GetElapsedTime(quietSince).TotalSeconds), 0.001);
        }

        double cpuAfter = brokerCpuSeconds?.Invoke() ?? 0;
        foreach (var connection in publishers)
        {
            await connection.DisposeAsync();
        }

        var acks = ackLatencies.Where(a => a is not null).SelectMany(a => a).ToArray();
        long count = Math.Min(Interlocked.Read(ref delivered), endToEnd.Length);
        var e2e = endToEnd.AsSpan(0, (int)count).ToArray();
        return new BrokerLoadResult(name, settings, Interlocked.Read(ref published), Interlocked.Read(ref delivered), seconds,
            Percentile(acks, 0.50), Percentile(acks, 0.99), Percentile(acks, 1.0), Percentile(e2e, 0.50), Percentile(e2e, 0.99),
            brokerCpuSeconds is null ? double.NaN : (cpuAfter - cpuBefore) / seconds, publishedIn);
    }

    private static async Task<long[]> PublishAsync(LoadConnection connection, string topic, BrokerLoadSettings settings, Func<long> onAck, CancellationToken token)
    {
        int count = settings.MessagesPerPublisher;
        var latencies = new long[settings.QoS == MqttQoS.AtMostOnce ? 0 : count];
        var sentAt = new long[65536];
        using var window = new SemaphoreSlim(settings.Inflight, settings.Inflight);
        int acked = 0;
        var allAcked = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Task receiving = Task.CompletedTask;
        var releases = new List<ushort>();
        if (settings.QoS != MqttQoS.AtMostOnce)
        {
            receiving = Task.Run(async () =>
            {
                await connection.ReceiveManyAsync((in MqttFrame frame) =>
                {
                    if (frame.Type is not (MqttPacketType.PubAck or MqttPacketType.PubComp or MqttPacketType.PubRec))
                    {
                        return true;
                    }

                    var ack = (PublishAckPacket)MqttPacketDecoder.Decode(frame, settings.Version);
                    if (ack.Type == MqttPacketType.PubRec)
                    {
                        releases.Add(ack.PacketId);
                        return true;
                    }

                    latencies[acked] = Stopwatch.GetTimestamp() - sentAt[ack.PacketId];
                    acked++;
                    onAck();
                    window.Release();
                    if (acked == count)
                    {
                        allAcked.TrySetResult();
                        return false;
                    }

                    return true;
                }, token, () => PublishAcknowledgements.SendReleasesAsync(connection, releases, token));
            }, token);
        }

        var payload = new byte[Math.Max(8, settings.PayloadBytes)];
        double perSecond = settings.Rate / settings.Publishers;
        long start = Stopwatch.GetTimestamp();
        int next = 0;
        while (next < count)
        {
            int due = count;
            if (perSecond > 0)
            {
                // Open loop: send what the schedule says is due by now (the window still caps what is unacknowledged).
                due = (int)Math.Min(count, Stopwatch.GetElapsedTime(start).TotalSeconds * perSecond);
                if (due <= next)
                {
                    await Task.Delay(1, token);
                    continue;
                }
            }

            await window.WaitAsync(token);
            int batch = 1;
            while (batch < 64 && next + batch < due && window.CurrentCount > 0 && await window.WaitAsync(0, token))
            {
                batch++;
            }

            int first = next;
            next += batch;
            await connection.SendBatchAsync(output =>
            {
                for (int i = first; i < first + batch; i++)
                {
                    ushort id = (ushort)((i % 65535) + 1);
                    long now = Stopwatch.GetTimestamp();
                    sentAt[id] = now;
                    BinaryPrimitives.WriteInt64LittleEndian(payload, now);
                    MqttPacketEncoder.EncodePublish(output, settings.Version, topic, new ReadOnlySequence<byte>(payload), settings.QoS, false, false,
                        settings.QoS == MqttQoS.AtMostOnce ? (ushort)0 : id, null);
                }
            }, token);
            if (settings.QoS == MqttQoS.AtMostOnce)
            {
                window.Release(batch);
                for (int i = 0; i < batch; i++)
                {
                    onAck();
                }
            }
        }

        if (settings.QoS != MqttQoS.AtMostOnce)
        {
            await allAcked.Task.WaitAsync(token);
        }

        await receiving;
        return latencies;
    }

    private static long ReadTimestamp(ReadOnlySequence<byte> payload)
    {
        Span<byte> bytes = stackalloc byte[8];
        payload.Slice(0, 8).CopyTo(bytes);
        return BinaryPrimitives.ReadInt64LittleEndian(bytes);
    }

    private static double Percentile(long[] ticks, double p)
    {
        if (ticks.Length == 0)
        {
            return double.NaN;
        }

        Array.Sort(ticks);
        int index = (int)Math.Min(ticks.Length - 1, Math.Ceiling(p * ticks.Length) - 1);
        return ticks[Math.Max(0, index)] * 1000.0 / Stopwatch.Frequency;
    }
}

using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Common;

/// <summary>
/// The acknowledgement side of a load publisher (<c>Ingest.IngestPublisher</c>, <c>Classroom.ClassroomPublisher</c>) on a
/// <see cref="LoadConnection"/>: the <see cref="Window"/> of publishes that may be unacknowledged, and a loop that reads
/// PUBACK, PUBREC and PUBCOMP, frees the window, answers the PUBRECs of each read with PUBREL under one flush and,
/// once <see cref="DrainAsync"/> says sending is done, ends the wait when every message sent is acknowledged. What an
/// acknowledgement means to the run (latency, readings) the publisher records in its <see cref="Acknowledged"/> callback.
/// <para>
/// A PUBACK or PUBREC with a reason code of 0x80 or more (MQTT 5: refused) ends its exchange: the packet id is free at
/// once and no PUBREL follows (MQTT 5.0, 4.3.3). At QoS 0 nothing is acknowledged and nothing is received.
/// </para>
/// </summary>
internal sealed class PublishAcknowledgements : IDisposable
{
    private readonly LoadConnection _connection;
    private readonly bool _acknowledging;
    private readonly Func<bool> _allAcknowledged;
    private readonly TaskCompletionSource _drained = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopReceiving;
    private readonly List<ushort> _releases = new();
    private Task _receiving = Task.CompletedTask;
    private bool _doneSending;

    private PublishAcknowledgements(LoadConnection connection, MqttQoS qos, int inflight, Func<bool> allAcknowledged, CancellationToken abort)
    {
        _connection = connection;
        _acknowledging = qos != MqttQoS.AtMostOnce;
        _allAcknowledged = allAcknowledged;
        Window = new SemaphoreSlim(inflight, inflight);
        _stopReceiving = CancellationTokenSource.CreateLinkedTokenSource(abort);
    }

    /// <summary>
    /// A PUBACK (QoS 1) or PUBREC (QoS 2) for <paramref name="packetId"/>; <paramref name="refused"/>: its reason code is
    /// 0x80 or more. Called on the receiving loop, before the window is freed, so the publisher counts it there.
    /// </summary>
    public delegate void Acknowledged(ushort packetId, bool refused);

    /// <summary>One slot per unacknowledged publish: the publisher takes one before sending (at QoS 1/2).</summary>
    public SemaphoreSlim Window { get; }

    /// <summary>
    /// Starts receiving (at QoS 1/2). <paramref name="allAcknowledged"/> says whether every message sent so far is
    /// acknowledged (the publisher counts both, the acknowledgements in <paramref name="onAcknowledged"/>).
    /// </summary>
    public static PublishAcknowledgements Start(LoadConnection connection, MqttQoS qos, int inflight, Acknowledged onAcknowledged,
        Func<bool> allAcknowledged, CancellationToken abort)
    {
        var acks = new PublishAcknowledgements(connection, qos, inflight, allAcknowledged, abort);
        if (acks._acknowledging)
        {
            var token = acks._stopReceiving.Token;
            acks._receiving = Task.Run(() => acks.ReceiveAsync(onAcknowledged, token), CancellationToken.None);
        }

        return acks;
    }

    /// <summary>
    /// Once the last message is sent: waits up to <paramref name="timeout"/> for the acknowledgements still outstanding
    /// (what is left the publisher reports as sent but not acknowledged), then stops receiving.
    /// </summary>
    public async Task DrainAsync(TimeSpan timeout, CancellationToken abort)
    {
        Volatile.Write(ref _doneSending, true);
        if (!_acknowledging || _allAcknowledged())
        {
            _drained.TrySetResult();
        }

        try
        {
            await _drained.Task.WaitAsync(timeout, abort);
        }
        catch (TimeoutException)
        {
            // Reported as sent but not acknowledged.
        }

        await _stopReceiving.CancelAsync();
        try
        {
#pragma warning disable VSTHRD003 // The receive loop is this object's own, started in Start; a console tool has no context to deadlock.
            await _receiving;
#pragma warning restore VSTHRD003
        }
        catch (OperationCanceledException)
        {
            // Stopped on purpose.
        }
    }

    public void Dispose()
    {
        _stopReceiving.Dispose();
        Window.Dispose();
    }

    private async Task ReceiveAsync(Acknowledged onAcknowledged, CancellationToken token)
    {
        var version = _connection.Version;
        await _connection.ReceiveManyAsync((in MqttFrame frame) =>
        {
            if (frame.Type is not (MqttPacketType.PubAck or MqttPacketType.PubRec or MqttPacketType.PubComp))
            {
                return true;
            }

            var ack = (PublishAckPacket)MqttPacketDecoder.Decode(frame, version);
            if (ack.Type == MqttPacketType.PubComp)
            {
                Window.Release(); // QoS 2: the packet id is free again
                return true;
            }

            bool refused = (byte)ack.ReasonCode >= 0x80;
            onAcknowledged(ack.PacketId, refused);
            if (ack.Type == MqttPacketType.PubRec && !refused)
            {
                _releases.Add(ack.PacketId);
            }
            else
            {
                Window.Release();
            }

            if (Volatile.Read(ref _doneSending) && _allAcknowledged())
            {
                _drained.TrySetResult();
            }

            return true;
        }, token, () => SendReleasesAsync(_connection, _releases, token));
    }

    /// <summary>Answers the PUBRECs of one read: a PUBREL for each id in <paramref name="releases"/>, under one flush, and empties it.</summary>
    public static async ValueTask SendReleasesAsync(LoadConnection connection, List<ushort> releases, CancellationToken token)
    {
        if (releases.Count > 0)
        {
            var ids = releases.ToArray();
            releases.Clear();
            await connection.SendBatchAsync(output =>
            {
                foreach (ushort id in ids)
                {
                    MqttPacketEncoder.EncodePublishAck(output, MqttPacketType.PubRel, id, MqttReasonCode.Success, null, connection.Version);
                }
            }, token);
        }
    }
}

using System.Buffers;
using System.Buffers.Text;
using System.Diagnostics;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Ingest;

/// <summary>
/// One hub (or one sensor): a raw MQTT connection (<see cref="LoadConnection"/>) publishing biosensor readings in
/// Saito JSON to <c>saito/{hub}/{device}/biosensor</c>, its messages going round its devices, with at most
/// <see cref="IngestSettings.Inflight"/> publishes unacknowledged. Saito acknowledges only after the commit, so
/// every acknowledgement counted here is a committed message, and its latency is publish-to-commit-to-ack.
/// <para>
/// Every reading is unique: each device's timestamps go up by at least a millisecond per reading, and each
/// device belongs to one publisher. At full speed they start 12 hours back (so a fast device does not run past
/// Saito's future-skew limit); at a fixed rate they follow the clock.
/// </para>
/// </summary>
internal sealed class IngestPublisher
{
    private static readonly byte[] s_ts = "{\"ts\":"u8.ToArray();
    private static readonly byte[] s_ch = ",\"ch\":"u8.ToArray();
    private static readonly byte[] s_hr = ",\"hr\":"u8.ToArray();
    private static readonly byte[] s_sys = ",\"sys\":"u8.ToArray();
    private static readonly byte[] s_dia = ",\"dia\":"u8.ToArray();
    private static readonly byte[] s_temp = ",\"temp\":"u8.ToArray();

    private readonly LoadConnection _connection;
    private readonly IngestSettings _settings;
    private readonly string[] _topics;
    private readonly long[] _lastTs;
    private readonly byte[] _payload;
    private readonly long[] _sentAt = new long[65536];
    private readonly List<long> _latencies = new();
    private readonly bool _followClock;
    private long _sequence;
    private long _sent;
    private long _acked;
    private long _refused;

    public IngestPublisher(LoadConnection connection, IngestSettings settings, int index, string run)
    {
        _connection = connection;
        _settings = settings;
        _topics = Enumerable.Range(0, settings.DevicesPerConnection)
            .Select(d => $"saito/{run}-hub{index:D3}/{run}-h{index:D3}-d{d:D2}/biosensor").ToArray();
        _followClock = settings.Rate > 0;
        long start = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - (_followClock ? 0 : (long)TimeSpan.FromHours(12).TotalMilliseconds);
        _lastTs = Enumerable.Repeat(start, settings.DevicesPerConnection).ToArray();
        _payload = new byte[2 + (settings.ReadingsPerMessage * 96)];
    }

    /// <summary>Messages sent so far.</summary>
    public long Sent => Interlocked.Read(ref _sent);

    /// <summary>Messages acknowledged (committed) so far.</summary>
    public long Acked => Interlocked.Read(ref _acked);

    /// <summary>Messages the broker refused (MQTT 5 reason code 0x80 or above): not stored, so not counted in <see cref="Acked"/>.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Publish-to-acknowledge times in Stopwatch ticks (read after <see cref="RunAsync"/> completes).</summary>
    public List<long> Latencies => _latencies;

    /// <summary>
    /// Publishes until <paramref name="stopSending"/> fires or the message count is reached, then waits up to
    /// <see cref="IngestSettings.DrainTimeout"/> for the acknowledgements still outstanding.
    /// </summary>
    public async Task RunAsync(long startTimestamp, CancellationToken stopSending, CancellationToken abort)
    {
        using var acks = PublishAcknowledgements.Start(_connection, _settings.QoS, _settings.Inflight, OnAcknowledged, () => Acked + Refused == Sent, abort);
        try
        {
            await SendAsync(acks.Window, startTimestamp, stopSending, abort);
        }
        catch (OperationCanceledException) when (stopSending.IsCancellationRequested && !abort.IsCancellationRequested)
        {
            // The duration is over; what was sent is still acknowledged below.
        }

        await acks.DrainAsync(_settings.DrainTimeout, abort);
    }

    /// <summary>
    /// PUBACK (QoS 1) or PUBREC (QoS 2): Saito sends either only once the readings are committed. A refused one
    /// (MQTT 5: Saito could not store the message, or is stopping) is counted apart, so acknowledged stays "committed"
    /// and the run reports acknowledged &lt; sent.
    /// </summary>
    private void OnAcknowledged(ushort packetId, bool refused)
    {
        if (refused)
        {
            Interlocked.Increment(ref _refused);
            return;
        }

        _latencies.Add(Stopwatch.GetTimestamp() - _sentAt[packetId]);
        Interlocked.Increment(ref _acked);
    }

    private async Task SendAsync(SemaphoreSlim window, long startTimestamp, CancellationToken stopSending, CancellationToken abort)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(stopSending, abort);
        var token = linked.Token;
        long limit = _settings.MessagesPerConnection ?? long.MaxValue;
        long next = 0;
        if (_settings.Rate > 0)
        {
            // Open loop: message k is due at start + phase + k / rate, whatever happened to the ones before it. The
            // phase spreads the publishers over the first interval, as real sensors are not in step. Latency counts
            // from the due time, so time spent waiting for the inflight window is not hidden.
            double interval = Stopwatch.Frequency / _settings.Rate;
            long phase = (long)(Random.Shared.NextDouble() * interval);
            while (next < limit)
            {
                long due = startTimestamp + phase + (long)(next * interval);
                var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
                if (wait > TimeSpan.Zero)
                {
                    await Task.Delay(wait, token);
                }

                await window.WaitAsync(token);
                long sequence = next++;
                await _connection.SendBatchAsync(output => Publish(output, sequence, due), abort);
            }

            return;
        }

        while (next < limit)
        {
            await window.WaitAsync(token);
            int batch = 1;
            while (batch < 64 && next + batch < limit && window.CurrentCount > 0 && await window.WaitAsync(0, token))
            {
                batch++;
            }

            long first = next;
            next += batch;
            await _connection.SendBatchAsync(output =>
            {
                for (long i = first; i < first + batch; i++)
                {
                    Publish(output, i, Stopwatch.GetTimestamp());
                }
            }, abort);
        }
    }

    private void Publish(System.IO.Pipelines.PipeWriter output, long message, long sentAt)
    {
        int device = (int)(message % _topics.Length);
        int length = WritePayload(device);
        ushort id = (ushort)((message % 65535) + 1);
        _sentAt[id] = sentAt;
        MqttPacketEncoder.EncodePublish(output, _settings.Version, _topics[device], new ReadOnlySequence<byte>(_payload, 0, length),
            _settings.QoS, false, false, id, null);
        Interlocked.Increment(ref _sent);
    }

    /// <summary>One reading as an object, or an array of them: <c>{"ts":..,"ch":..,"hr":..,"sys":..,"dia":..,"temp":..}</c>.</summary>
    private int WritePayload(int device)
    {
        var span = _payload.AsSpan();
        int at = 0;
        int count = _settings.ReadingsPerMessage;
        if (count > 1)
        {
            span[at++] = (byte)'[';
        }

        long now = _followClock ? DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() : 0;
        for (int r = 0; r < count; r++)
        {
            if (r > 0)
            {
                span[at++] = (byte)',';
            }

            long ts = Math.Max(now, _lastTs[device] + 1);
            _lastTs[device] = ts;
            long seq = _sequence++;
            at += Copy(s_ts, span[at..]);
            at += Format(ts, span[at..]);
            at += Copy(s_ch, span[at..]);
            at += Format(seq % 4, span[at..]);
            at += Copy(s_hr, span[at..]);
            at += Format(58 + (seq * 7 % 45), span[at..]);
            at += Copy(s_sys, span[at..]);
            at += Format(104 + (seq * 11 % 32), span[at..]);
            at += Copy(s_dia, span[at..]);
            at += Format(64 + (seq * 13 % 22), span[at..]);
            at += Copy(s_temp, span[at..]);
            long tenths = 318 + (seq * 17 % 30);
            at += Format(tenths / 10, span[at..]);
            span[at++] = (byte)'.';
            span[at++] = (byte)('0' + (tenths % 10));
            span[at++] = (byte)'}';
        }

        if (count > 1)
        {
            span[at++] = (byte)']';
        }

        return at;
    }

    private static int Copy(byte[] from, Span<byte> to)
    {
        from.CopyTo(to);
        return from.Length;
    }

    private static int Format(long value, Span<byte> to)
    {
        Utf8Formatter.TryFormat(value, to, out int written);
        return written;
    }
}

using System.Buffers;
using System.Diagnostics;
using System.Text;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Classroom;

/// <summary>
/// One MQTT connection of the class (<see cref="LoadConnection"/>): a student's hub publishing for all of the
/// student's sensors, or a single sensor publishing for itself. Open loop: tick k is due at
/// start + phase + k / rate whatever happened before it (the phase spreads the connections over the first
/// interval); at each tick every sensor of the connection takes a reading stamped with the tick's due time
/// (<c>ts</c>), and each device's readings are published as soon as <see cref="ClassroomSettings.ReadingsPerMessage"/>
/// of them are waiting (one reading: an object; more: an array). At QoS 1/2 at most
/// <see cref="ClassroomSettings.Inflight"/> messages are unacknowledged; a message that waits for the window still
/// counts its latency from its due time, so waiting is not hidden.
/// </summary>
internal sealed class ClassroomPublisher
{
    private readonly LoadConnection _connection;
    private readonly ClassroomSettings _settings;
    private readonly ClassroomValues _values;
    private readonly IReadOnlyList<ClassroomSensor> _sensors;
    private readonly Dictionary<ClassroomDevice, List<(ClassroomSensor Sensor, long TsMicros, string Json)>> _buffers = new();
    private readonly long[] _dueAt = new long[65536];
    private readonly int[] _readingsIn = new int[65536];
    private readonly List<(long At, long Ticks, int Readings)> _acks = new();
    private readonly double _phase;
    private long _messages;
    private long _sent;
    private long _sentReadings;
    private long _acked;
    private long _ackedReadings;
    private long _refused;
    private long _lastPublishTicks;

    public ClassroomPublisher(LoadConnection connection, ClassroomSettings settings, ClassroomValues values, IReadOnlyList<ClassroomSensor> sensors, double phase)
    {
        _connection = connection;
        _settings = settings;
        _values = values;
        _sensors = sensors;
        _phase = phase;
        foreach (var sensor in sensors)
        {
            if (!_buffers.ContainsKey(sensor.Device))
            {
                _buffers[sensor.Device] = new List<(ClassroomSensor, long, string)>();
            }
        }
    }

    public long SentMessages => Interlocked.Read(ref _sent);

    public long SentReadings => Interlocked.Read(ref _sentReadings);

    public long AckedMessages => Interlocked.Read(ref _acked);

    public long AckedReadings => Interlocked.Read(ref _ackedReadings);

    /// <summary>Acknowledgements with a failure reason code (MQTT 5): not stored.</summary>
    public long RefusedMessages => Interlocked.Read(ref _refused);

    /// <summary>When the last message went out (Stopwatch ticks).</summary>
    public long LastPublishTicks => Interlocked.Read(ref _lastPublishTicks);

    /// <summary>Each acknowledgement: when it arrived, due-to-acknowledgement in Stopwatch ticks, readings in the message (read after <see cref="RunAsync"/>).</summary>
    public IReadOnlyList<(long At, long Ticks, int Readings)> Acks => _acks;

    /// <summary>
    /// Publishes from <paramref name="start"/> until <paramref name="stopSending"/> fires, sends what the devices
    /// still hold, then (QoS 1/2) waits up to <see cref="ClassroomSettings.DrainTimeout"/> for the acknowledgements.
    /// </summary>
    public async Task RunAsync(long start, long startUnixMicros, CancellationToken stopSending, CancellationToken abort)
    {
        int inflight = _settings.QoS == MqttQoS.AtMostOnce ? 1 : _settings.Inflight;
        using var acks = PublishAcknowledgements.Start(_connection, _settings.QoS, inflight, OnAcknowledged, () => AckedMessages == SentMessages, abort);
        var window = acks.Window;
        try
        {
            await SendAsync(window, start, startUnixMicros, stopSending, abort);
        }
        catch (OperationCanceledException) when (stopSending.IsCancellationRequested && !abort.IsCancellationRequested)
        {
            // The duration is over.
        }

        // What the devices still hold goes out now, in shorter messages.
        var rest = _buffers.Where(b => b.Value.Count > 0).Select(b => (b.Key, b.Value.ToArray())).ToList();
        foreach (var buffer in _buffers.Values)
        {
            buffer.Clear();
        }

        if (rest.Count > 0)
        {
            await PublishAsync(window, rest, Stopwatch.GetTimestamp(), abort);
        }

        await acks.DrainAsync(_settings.DrainTimeout, abort);
    }

    /// <summary>
    /// PUBACK (QoS 1) or PUBREC (QoS 2). Saito's embedded broker sends either only once the readings are committed;
    /// another broker sends it once it has the message. A refused one (MQTT 5) is counted apart: not stored.
    /// </summary>
    private void OnAcknowledged(ushort packetId, bool refused)
    {
        long now = Stopwatch.GetTimestamp();
        int readings = _readingsIn[packetId];
        if (refused)
        {
            Interlocked.Increment(ref _refused);
        }
        else
        {
            _acks.Add((now, now - _dueAt[packetId], readings));
            Interlocked.Add(ref _ackedReadings, readings);
        }

        Interlocked.Increment(ref _acked);
    }

    private async Task SendAsync(SemaphoreSlim window, long start, long startUnixMicros, CancellationToken stopSending, CancellationToken abort)
    {
        using var linked = CancellationTokenSource.CreateLinkedTokenSource(stopSending, abort);
        var token = linked.Token;
        double interval = Stopwatch.Frequency / _settings.Rate;
        var ready = new List<(ClassroomDevice, (ClassroomSensor Sensor, long TsMicros, string Json)[])>();
        var json = new StringBuilder(128);
        for (long tick = 0; ; tick++)
        {
            double offset = (_phase + tick) * interval;
            long due = start + (long)offset;
            var wait = Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due);
            if (wait > TimeSpan.Zero)
            {
                await Task.Delay(wait, token);
            }

            token.ThrowIfCancellationRequested();
            double t = offset / Stopwatch.Frequency;
            long dueMicros = startUnixMicros + (long)(t * 1_000_000);
            ready.Clear();
            foreach (var sensor in _sensors)
            {
                long ts = Math.Max(dueMicros, sensor.LastTsMicros + 1);
                sensor.LastTsMicros = ts;
                json.Clear();
                _values.Append(json, sensor, t, ts);
                var buffer = _buffers[sensor.Device];
                buffer.Add((sensor, ts, json.ToString()));
                if (buffer.Count >= _settings.ReadingsPerMessage)
                {
                    ready.Add((sensor.Device, buffer.ToArray()));
                    buffer.Clear();
                }
            }

            if (ready.Count > 0)
            {
                // Not cut short by the end of the duration: these readings are already registered with the poller.
                await PublishAsync(window, ready, due, abort);
            }
        }
    }

    /// <summary>Takes a window slot per message, then writes them all under one flush.</summary>
    private async Task PublishAsync(SemaphoreSlim window, IReadOnlyList<(ClassroomDevice Device, (ClassroomSensor Sensor, long TsMicros, string Json)[] Readings)> messages,
        long due, CancellationToken token)
    {
        var packets = new List<(string Topic, byte[] Payload, ushort Id, int Readings)>(messages.Count);
        foreach (var (device, readings) in messages)
        {
            if (_settings.QoS != MqttQoS.AtMostOnce)
            {
                await window.WaitAsync(token);
            }

            string payload = readings.Length == 1 ? readings[0].Json : "[" + string.Join(',', readings.Select(r => r.Json)) + "]";
            ushort id = (ushort)((_messages++ % 65535) + 1);
            _dueAt[id] = due;
            _readingsIn[id] = readings.Length;
            foreach (var reading in readings)
            {
                // Known to the poller before it can possibly be committed.
                reading.Sensor.Published(reading.TsMicros, due);
            }

            packets.Add((device.Topic, Encoding.UTF8.GetBytes(payload), id, readings.Length));
        }

        await _connection.SendBatchAsync(output =>
        {
            foreach (var (topic, payload, id, _) in packets)
            {
                MqttPacketEncoder.EncodePublish(output, _settings.Version, topic, new ReadOnlySequence<byte>(payload), _settings.QoS, false, false,
                    _settings.QoS == MqttQoS.AtMostOnce ? (ushort)0 : id, null);
            }
        }, token);
        Interlocked.Add(ref _sentReadings, packets.Sum(p => p.Readings));
        Interlocked.Add(ref _sent, packets.Count);
        Interlocked.Exchange(ref _lastPublishTicks, Stopwatch.GetTimestamp());
    }
}

using System.Diagnostics;
using System.Globalization;
using Saito.LoadTest.Common;
using Saito.LoadTest.Ingest;
using Saito.LoadTest.Results;
using Saito.Mqtt.Packets;
using Spectre.Console;

namespace Saito.LoadTest.Classroom;

internal sealed record ClassroomSettings(
    int Students, int SensorsPerStudent, double Rate, TimeSpan Duration, MqttQoS QoS, int ReadingsPerMessage, bool PerSensor,
    MqttProtocolVersion Version, int Inflight, int Seed, TimeSpan PollInterval, TimeSpan SampleInterval, TimeSpan DrainTimeout);

/// <summary>What a classroom run measured. Latencies are per reading, in Stopwatch ticks.</summary>
internal sealed record ClassroomLoadResult(
    int Connections, long SentMessages, long SentReadings, long AckedMessages, long AckedReadings, long RefusedMessages,
    double PublishSeconds, double Seconds, long Committed, long SeenReadings, long[] AckLatencyTicks, long[] SeenLatencyTicks,
    IReadOnlyList<LatencyPoint> Timeline, CpuUse Cores, (double Mean, double Max) PollMilliseconds, long Polls);

/// <summary>
/// Connects the class (one connection per hub or per sensor), publishes for the duration, keeps the database
/// poller running beside it, and samples publish and commit counts every sampling interval; a progress bar (or, when
/// the output is not a terminal, a line per sample) while it runs.
/// </summary>
internal static class ClassroomLoad
{
    private sealed record Sample(double Seconds, long SentReadings, long Committed);

    public static async Task<ClassroomLoadResult> RunAsync(ClassroomSettings s, ClassroomLayout layout, string host, int port, ClassroomPoller poller,
        bool latencyFromAcks, int? serverPid, CancellationToken token)
    {
        var values = new ClassroomValues(layout, s.Seed);
        var phases = new Random(s.Seed);
        var groups = s.PerSensor
            ? layout.Sensors.Select(x => (IReadOnlyList<ClassroomSensor>)[x]).ToList()
            : layout.Sensors.GroupBy(x => x.Device.Student).Select(g => (IReadOnlyList<ClassroomSensor>)g.ToList()).ToList();
        var connections = new List<LoadConnection>();
        var publishers = new List<ClassroomPublisher>();
        try
        {
            for (int i = 0; i < groups.Count; i++)
            {
                var connection = await LoadConnection.ConnectAsync(host, port, $"{layout.Run}-c{i:D4}", s.Version, token);
                connections.Add(connection);
                publishers.Add(new ClassroomPublisher(connection, s, values, groups[i], phases.NextDouble()));
            }

            return await DriveAsync(s, publishers, poller, latencyFromAcks, serverPid, token);
        }
        finally
        {
            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }
        }
    }

    private static async Task<ClassroomLoadResult> DriveAsync(ClassroomSettings s, List<ClassroomPublisher> publishers, ClassroomPoller poller,
        bool latencyFromAcks, int? serverPid, CancellationToken token)
    {
        var samples = new List<Sample>();
        using var stopSending = new CancellationTokenSource();
        using var stopPolling = CancellationTokenSource.CreateLinkedTokenSource(token);
        var cpu = new CpuMeter(serverPid);
        long start = Stopwatch.GetTimestamp();
        long startUnixMicros = (DateTime.UtcNow.Ticks - DateTime.UnixEpoch.Ticks) / 10;
        stopSending.CancelAfter(s.Duration);
        var polling = Task.Run(() => poller.RunAsync(s.PollInterval, stopPolling.Token), CancellationToken.None);
        samples.Add(new Sample(0, 0, poller.Committed));
        double planned = s.Duration.TotalSeconds;

        long Sent() => publishers.Sum(p => p.SentReadings);

        async Task LoopAsync(ProgressTask? bar)
        {
            var publishing = Task.WhenAll(publishers.Select(p => Task.Run(() => p.RunAsync(start, startUnixMicros, stopSending.Token, token), token)));
            using var ticker = new PeriodicTimer(TimeSpan.FromMilliseconds(250));
            int samplesTaken = 0;
            double drainSince = double.NaN;
            long drainCommitted = -1;
            Task<bool>? tick = null;
            while (true)
            {
                // One wait on the timer at a time: a tick still pending when publishing finished is waited for again.
                tick = tick is { IsCompleted: false } ? tick : ticker.WaitForNextTickAsync(token).AsTask();
                await Task.WhenAny(publishing.IsCompleted ? tick : publishing, tick);
                if (publishing.IsFaulted)
                {
                    await publishing; // surfaces the failure
                }

                double elapsed = Stopwatch.GetElapsedTime(start).TotalSeconds;
                if (bar is not null)
                {
                    bar.Value = Math.Min(elapsed, planned);
                }

                if (elapsed >= (samplesTaken + 1) * s.SampleInterval.TotalSeconds)
                {
                    samplesTaken = (int)(elapsed / s.SampleInterval.TotalSeconds); // on the interval's boundaries, not drifting
                    var previous = samples[^1];
                    var sample = new Sample(elapsed, Sent(), poller.Committed);
                    samples.Add(sample);
                    double dt = sample.Seconds - previous.Seconds;
                    string line = string.Create(CultureInfo.InvariantCulture,
                        $"{elapsed,6:F0} s: published {(sample.SentReadings - previous.SentReadings) / dt,8:N0} readings/s, committed {(sample.Committed - previous.Committed) / dt,8:N0}/s " +
                        $"({sample.Committed:N0} of {sample.SentReadings:N0})");
                    if (bar is not null)
                    {
                        bar.Description = Markup.Escape(line);
                    }
                    else
                    {
                        Console.WriteLine(line);
                    }
                }

                if (!publishing.IsCompleted)
                {
                    continue;
                }

                // Published and (QoS 1/2) acknowledged: wait until the poller has seen every reading that should be
                // stored, or until the committed count has not moved for the drain timeout.
                long expected = s.QoS == MqttQoS.AtMostOnce ? Sent() : publishers.Sum(p => p.AckedReadings);
                if (poller.SeenReadings >= expected)
                {
                    break;
                }

                long committed = poller.Committed;
                if (committed != drainCommitted)
                {
                    drainCommitted = committed;
                    drainSince = elapsed;
                }
                else if (elapsed - drainSince >= s.DrainTimeout.TotalSeconds)
                {
                    break;
                }
            }

            await publishing;
            if (bar is not null)
            {
                bar.Value = planned;
            }
        }

        try
        {
            if (AnsiConsole.Profile.Capabilities.Interactive)
            {
                await AnsiConsole.Progress()
                    .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn())
                    .StartAsync(async context => await LoopAsync(context.AddTask("starting", maxValue: planned)));
            }
            else
            {
                await LoopAsync(null);
            }
        }
        finally
        {
            await stopPolling.CancelAsync();
            await polling;
        }

        await poller.PollOnceAsync(token); // the last word on what is committed
        var cores = cpu.Cores();
        double wall = Stopwatch.GetElapsedTime(start).TotalSeconds;
        samples.Add(new Sample(wall, Sent(), poller.Committed));

        var acks = publishers.SelectMany(p => p.Acks).ToArray();
        var seen = poller.Seen.ToArray();
        var source = latencyFromAcks ? acks.SelectMany(a => Enumerable.Repeat((a.At, a.Ticks), a.Readings)).ToArray() : seen;
        // The run lasts from the first due time to the last commit observed (acknowledged, or seen by the poller).
        double seconds = source.Length > 0 ? (source.Max(x => x.At) - start) / (double)Stopwatch.Frequency : wall;
        double publishSeconds = (publishers.Max(p => p.LastPublishTicks) - start) / (double)Stopwatch.Frequency;
        return new ClassroomLoadResult(publishers.Count, publishers.Sum(p => p.SentMessages), Sent(), publishers.Sum(p => p.AckedMessages),
            publishers.Sum(p => p.AckedReadings), publishers.Sum(p => p.RefusedMessages), Math.Max(publishSeconds, 1e-3), Math.Max(seconds, 1e-3),
            poller.Committed, poller.SeenReadings, acks.SelectMany(a => Enumerable.Repeat(a.Ticks, a.Readings)).ToArray(), seen.Select(x => x.Ticks).ToArray(),
            Timeline(samples, source, start), cores, poller.PollMilliseconds, poller.Polls);
    }

    /// <summary>
    /// One point per sampling interval: the latency of the readings whose commit was observed in it, and the publish
    /// and commit rates over it. An interval in which no commit was observed has no latency to report and no point.
    /// </summary>
    private static List<LatencyPoint> Timeline(List<Sample> samples, (long At, long Ticks)[] latencies, long start)
    {
        var points = new List<LatencyPoint>();
        var byTime = latencies.OrderBy(x => x.At).ToArray();
        int next = 0;
        for (int i = 1; i < samples.Count; i++)
        {
            var a = samples[i - 1];
            var b = samples[i];
            double dt = b.Seconds - a.Seconds;
            if (dt <= 0)
            {
                continue;
            }

            long until = start + (long)(b.Seconds * Stopwatch.Frequency);
            var bucket = new List<long>();
            while (next < byTime.Length && byTime[next].At <= until)
            {
                bucket.Add(byTime[next++].Ticks);
            }

            if (i == samples.Count - 1)
            {
                bucket.AddRange(byTime[next..].Select(x => x.Ticks));
                next = byTime.Length;
            }

            if (bucket.Count == 0)
            {
                continue;
            }

            var ticks = bucket.ToArray();
            points.Add(new LatencyPoint(Math.Round(b.Seconds, 3), IngestLoad.Percentile(ticks, 0.50), IngestLoad.Percentile(ticks, 0.99),
                IngestLoad.Percentile(ticks, 1.0), (b.SentReadings - a.SentReadings) / dt, (b.Committed - a.Committed) / dt));
        }

        return points;
    }
}

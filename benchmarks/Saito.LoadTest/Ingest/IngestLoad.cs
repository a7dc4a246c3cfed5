using System.Diagnostics;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;
using Spectre.Console;

namespace Saito.LoadTest.Ingest;

internal sealed record IngestSettings(
    int Connections, int ReadingsPerMessage, int DevicesPerConnection, double Rate, int Inflight, TimeSpan Duration, long? MessagesPerConnection,
    MqttQoS QoS, MqttProtocolVersion Version, TimeSpan SampleInterval, TimeSpan DrainTimeout);

/// <summary>One look at the server while the load runs.</summary>
internal sealed record IngestSample(double Seconds, long AckedReadings, long ResidentBytes, double ServerCpuSeconds, double ToolCpuSeconds,
    double PostgresCpuSeconds, double MachineBusySeconds);

internal sealed record IngestLoadResult(
    long SentMessages, long AckedMessages, long AckedReadings, double Seconds, long[] LatencyTicks, IReadOnlyList<IngestSample> Samples,
    CpuUse Cores, LatencyQuantiles? Quantiles = null)
{
    /// <summary>
    /// Publish-to-acknowledge at quantile <paramref name="p"/> (0.5, 0.99, 0.999 or 1) in ms: from <see cref="LatencyTicks"/>, or
    /// from <see cref="Quantiles"/> when a generator outside this process measured them.
    /// </summary>
    public double LatencyMs(double p) => Quantiles is not { } q
        ? IngestLoad.Percentile(LatencyTicks, p)
        : p switch
        {
            0.5 => q.P50,
            0.99 => q.P99,
            0.999 => q.P999,
            1.0 => q.Max,
            _ => throw new ArgumentOutOfRangeException(nameof(p), p, "The generator reports p50, p99, p99.9 and the maximum."),
        };
}

/// <summary>Publish-to-acknowledge quantiles in ms, as an outside generator (<see cref="CPublishGenerator"/>) reports them.</summary>
internal readonly record struct LatencyQuantiles(double P50, double P99, double P999, double Max);

/// <summary>
/// Connects the publishers, runs them for the duration (or message count), and samples the server's RSS and CPU
/// every few seconds; progress on the console while it runs.
/// </summary>
internal static class IngestLoad
{
    public static async Task<IngestLoadResult> RunAsync(IngestSettings s, int port, int serverPid, string run, CancellationToken token)
    {
        var connections = new List<LoadConnection>();
        var publishers = new List<IngestPublisher>();
        try
        {
            for (int i = 0; i < s.Connections; i++)
            {
                var connection = await LoadConnection.ConnectAsync("127.0.0.1", port, $"{run}-c{i:D3}", s.Version, token);
                connections.Add(connection);
                publishers.Add(new IngestPublisher(connection, s, i, run));
            }

            return await DriveAsync(s, publishers, serverPid, token);
        }
        finally
        {
            foreach (var connection in connections)
            {
                await connection.DisposeAsync();
            }
        }
    }

    private static async Task<IngestLoadResult> DriveAsync(IngestSettings s, List<IngestPublisher> publishers, int serverPid, CancellationToken token)
    {
        var samples = new List<IngestSample>();
        using var stopSending = new CancellationTokenSource();
        if (s.MessagesPerConnection is null)
        {
            stopSending.CancelAfter(s.Duration);
        }

        long AckedReadings() => publishers.Sum(p => p.Acked) * s.ReadingsPerMessage;
        var cpu = new CpuMeter(serverPid);
        long start = Stopwatch.GetTimestamp();
        samples.Add(Sample(0, 0, serverPid));
        double planned = s.MessagesPerConnection is { } m ? (double)m * s.Connections : s.Duration.TotalSeconds;
        bool byMessages = s.MessagesPerConnection is not null;
        await AnsiConsole.Progress()
            .Columns(new TaskDescriptionColumn(), new ProgressBarColumn(), new PercentageColumn(), new ElapsedTimeColumn())
            .StartAsync(async context =>
            {
                var bar = context.AddTask("starting", maxValue: planned);
                var publishing = Task.WhenAll(publishers.Select(p => Task.Run(() => p.RunAsync(start, stopSending.Token, token), token)));
                using var ticker = new PeriodicTimer(TimeSpan.FromMilliseconds(500));
                long lastSampleAt = start;
                long lastReadings = 0;
                while (!publishing.IsCompleted)
                {
                    await Task.WhenAny(publishing, ticker.WaitForNextTickAsync(token).AsTask());
                    double elapsed = Stopwatch.GetElapsedTime(start).TotalSeconds;
                    bar.Value = byMessages ? publishers.Sum(p => p.Acked) : Math.Min(elapsed, planned);
                    if (Stopwatch.GetElapsedTime(lastSampleAt) >= s.SampleInterval)
                    {
                        long readings = AckedReadings();
                        var sample = Sample(elapsed, readings, serverPid);
                        double rate = (readings - lastReadings) / Stopwatch.GetElapsedTime(lastSampleAt).TotalSeconds;
                        var previous = samples[^1];
                        double dt = sample.Seconds - previous.Seconds;
                        double saitoCores = (sample.ServerCpuSeconds - previous.ServerCpuSeconds) / dt;
                        double restCores = ((sample.MachineBusySeconds - previous.MachineBusySeconds) - (sample.ServerCpuSeconds - previous.ServerCpuSeconds)
                            - (sample.ToolCpuSeconds - previous.ToolCpuSeconds) - (sample.PostgresCpuSeconds - previous.PostgresCpuSeconds)) / dt;
                        samples.Add(sample);
                        lastSampleAt = Stopwatch.GetTimestamp();
                        lastReadings = readings;
                        string line = $"{elapsed,6:F0} s: {readings:N0} readings committed ({rate:N0}/s), Saito RSS {sample.ResidentBytes / 1048576.0:N0} MiB, " +
                            $"Saito {saitoCores:F2} cores, rest of machine {Math.Max(0, restCores):F2}";
                        bar.Description = Markup.Escape(line);
                        if (Console.IsOutputRedirected)
                        {
                            Console.WriteLine(line);
                        }
                    }
                }

                await publishing;
                bar.Value = planned;
            });

        // The run ends with the last acknowledgement (every publisher has drained).
        double seconds = Stopwatch.GetElapsedTime(start).TotalSeconds;
        var cores = cpu.Cores();
        if (seconds - samples[^1].Seconds >= 1)
        {
            samples.Add(Sample(seconds, AckedReadings(), serverPid));
        }
        var latencies = publishers.SelectMany(p => p.Latencies).ToArray();
        return new IngestLoadResult(publishers.Sum(p => p.Sent), publishers.Sum(p => p.Acked), AckedReadings(), seconds, latencies, samples,
            cores);
    }

    /// <summary>The server's RSS and CPU, this tool's CPU, PostgreSQL's and the machine's, now.</summary>
    public static IngestSample Sample(double seconds, long readings, int pid) =>
        new(seconds, readings, ProcStat.ResidentBytes(pid), ProcStat.CpuSeconds(pid), ProcStat.OwnCpuSeconds(), ProcStat.CpuSecondsOfAll("postgres"),
            ProcStat.MachineBusySeconds());

    /// <summary>The p-th quantile in milliseconds (nearest rank); sorts <paramref name="ticks"/>.</summary>
    public static double Percentile(long[] ticks, double p)
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

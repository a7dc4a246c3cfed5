using System.Diagnostics;
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.RegularExpressions;
using Saito.LoadTest.Common;
using Saito.Mqtt.Packets;

namespace Saito.LoadTest.Ingest;

/// <summary>What one run of the C generator measured, and its own JSON line as it printed it.</summary>
/// <param name="Result">the measured phase, as <see cref="IngestLoad"/> reports its own runs (the tool's cores are the generator's)</param>
/// <param name="WarmAcked">messages acknowledged in the warm-up (one reading each; in the database too)</param>
/// <param name="TotalAcked">warm-up and measured together: what the database must hold</param>
/// <param name="Json">the generator's output line</param>
internal sealed record CGeneratorRun(IngestLoadResult Result, long WarmAcked, long TotalAcked, string Json);

/// <summary>
/// <c>ingest --generator c</c>: benchmarks/loadgen-c/saito-pubgen, a C program on libmosquitto that drives every
/// connection from one thread with libmosquitto's external loop. Against Mosquitto the .NET publishers are the
/// bottleneck (Mosquitto acknowledges each publish in a TCP segment of its own and the tool wakes for each one); this
/// generator costs a fraction of that per message, so the Mosquitto reference measures Mosquitto. It publishes what
/// <see cref="IngestPublisher"/> publishes with one reading per message and one device per connection: the same topics,
/// JSON, timestamps and warm-up devices.
/// </summary>
internal static partial class CPublishGenerator
{
    /// <summary>What building it needs, for the messages that say what to install.</summary>
    public const string AptPackages = "gcc make libmosquitto-dev";

    private static readonly string[] s_buildTools = ["make", "cc"];

    /// <summary>
    /// The generator, built with <c>make</c> when its source is newer (or it is missing). Throws, saying what to
    /// <c>apt-get install</c>, when it cannot be built.
    /// </summary>
    public static async Task<string> BuildAsync(CancellationToken token)
    {
        string dir = Path.Combine(LocalServers.RepositoryRoot(), "benchmarks", "loadgen-c");
        string binary = Path.Combine(dir, "saito-pubgen");
        string source = Path.Combine(dir, "saito-pubgen.c");
        bool upToDate = File.Exists(binary) && File.GetLastWriteTimeUtc(binary) >= File.GetLastWriteTimeUtc(source);
        var missing = new List<string>();
        if (!File.Exists("/usr/include/mosquitto.h"))
        {
            missing.Add("libmosquitto-dev (mosquitto.h)");
        }

        missing.AddRange(s_buildTools.Where(tool => !OnPath(tool)).Select(tool => tool == "cc" ? "gcc" : tool));
        if (missing.Count > 0)
        {
            if (upToDate)
            {
                return binary;
            }

            throw new InvalidOperationException(
                $"--generator c builds {binary} on libmosquitto, and this machine lacks {string.Join(", ", missing)}: apt-get install {AptPackages}");
        }

        var make = new ProcessStartInfo("make", ["-C", dir, "--no-print-directory", "saito-pubgen"])
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(make) ?? throw new InvalidOperationException("Could not start make");
        var output = process.StandardOutput.ReadToEndAsync(token);
        string errors = await process.StandardError.ReadToEndAsync(token);
        await process.WaitForExitAsync(token);
        if (process.ExitCode != 0 || !File.Exists(binary))
        {
            throw new InvalidOperationException($"make -C {dir} failed (exit {process.ExitCode}; it needs {AptPackages}):\n{await output}{errors}");
        }

        return binary;
    }

    /// <summary>
    /// Runs <paramref name="binary"/> against the broker on 127.0.0.1:<paramref name="port"/>: a warm-up of
    /// <paramref name="warmupSeconds"/> on devices of its own, then <see cref="IngestSettings.Duration"/> measured. The
    /// broker's (<paramref name="serverPid"/>) CPU and RSS are sampled from the measured phase's start to the generator's
    /// exit. <paramref name="raw"/>: the generator writes and parses MQTT itself (<c>--raw</c>) instead of through libmosquitto.
    /// Throws when the generator reports an error (a refused connection, a disconnect, a publish left unacknowledged):
    /// a run with errors measures nothing.
    /// </summary>
    public static async Task<CGeneratorRun> RunAsync(string binary, bool raw, int port, IngestSettings s, int warmupSeconds, string prefix, int serverPid,
        CancellationToken token)
    {
        var start = new ProcessStartInfo(binary,
        [
            "--host", "127.0.0.1", "--port", Invariant(port), "--connections", Invariant(s.Connections), "--inflight", Invariant(s.Inflight),
            "--warmup", Invariant(warmupSeconds), "--duration", Invariant(s.Duration.TotalSeconds), "--qos", Invariant((int)s.QoS),
            "--mqtt", s.Version == MqttProtocolVersion.V500 ? "5" : "3.1.1", "--prefix", prefix,
            "--progress", Invariant(s.SampleInterval.TotalSeconds), "--drain-timeout", Invariant(s.DrainTimeout.TotalSeconds),
            .. (raw ? ["--raw"] : Array.Empty<string>()),
        ])
        {
            UseShellExecute = false,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var process = Process.Start(start) ?? throw new InvalidOperationException($"Could not start {binary}");
        var samples = new List<IngestSample>();
        CpuMeter? meter = null;
        long measuredAt = 0;
        var log = new StringBuilder();
        var stderr = Task.Run(async () =>
        {
            while (await process.StandardError.ReadLineAsync(token) is { } line)
            {
                Console.WriteLine(line);
                log.AppendLine(line);
                if (line.EndsWith("measured phase started", StringComparison.Ordinal))
                {
                    meter = new CpuMeter(serverPid);
                    measuredAt = Stopwatch.GetTimestamp();
                    samples.Add(IngestLoad.Sample(0, 0, serverPid));
                }
                else if (meter is not null && ProgressLine().Match(line) is { Success: true } progress)
                {
                    samples.Add(IngestLoad.Sample(Stopwatch.GetElapsedTime(measuredAt).TotalSeconds,
                        long.Parse(progress.Groups[1].ValueSpan, CultureInfo.InvariantCulture), serverPid));
                }
            }
        }, token);

        string json;
        CpuUse? cores;
        try
        {
            json = (await process.StandardOutput.ReadToEndAsync(token)).Trim();
            await process.WaitForExitAsync(token);
            // Its error output first: the meter starts when that reader sees the measured phase begin, and on a busy
            // machine the reader can be behind the process.
            await stderr;
            cores = meter?.Cores();
        }
        finally
        {
            if (!process.HasExited)
            {
                process.Kill();
            }
        }

        if (process.ExitCode == 2 || json.Length == 0)
        {
            throw new InvalidOperationException($"{binary} failed (exit {process.ExitCode}):\n{log}");
        }

        using var document = JsonDocument.Parse(json);
        var root = document.RootElement;
        var measured = root.GetProperty("measured");
        long errors = root.GetProperty("errors").GetInt64();
        if (process.ExitCode != 0 || errors > 0)
        {
            throw new InvalidOperationException(
                $"The C generator reported {errors} error(s): {root.GetProperty("connect_failures").GetInt64()} connection(s) refused or not accepted, " +
                $"{root.GetProperty("disconnects").GetInt64()} disconnect(s), {measured.GetProperty("unacked").GetInt64()} publish(es) unacknowledged, " +
                $"{measured.GetProperty("refused").GetInt64()} refused (exit {process.ExitCode}). Its output:\n{log}{json}");
        }

        double seconds = measured.GetProperty("seconds").GetDouble();
        long acked = measured.GetProperty("acked").GetInt64();
        if (samples.Count == 0 || samples[^1].Seconds < seconds - 0.5)
        {
            samples.Add(IngestLoad.Sample(seconds, acked, serverPid));
        }

        var use = (cores ?? new CpuUse(0, 0, 0, 0)) with { Tool = measured.GetProperty("cpu_cores").GetDouble() };
        var quantiles = new LatencyQuantiles(measured.GetProperty("ack_p50_ms").GetDouble(), measured.GetProperty("ack_p99_ms").GetDouble(),
            measured.GetProperty("ack_p999_ms").GetDouble(), measured.GetProperty("ack_max_ms").GetDouble());
        var result = new IngestLoadResult(measured.GetProperty("sent").GetInt64(), acked, acked, seconds, [], samples, use, quantiles);
        return new CGeneratorRun(result, root.GetProperty("warmup").GetProperty("acked").GetInt64(), root.GetProperty("total_acked").GetInt64(), json);
    }

    private static bool OnPath(string tool) =>
        (Environment.GetEnvironmentVariable("PATH") ?? string.Empty).Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Any(dir => File.Exists(Path.Combine(dir, tool)));

    private static string Invariant(double value) => value.ToString(CultureInfo.InvariantCulture);

    /// <summary>saito-pubgen's progress line in the measured phase: <c>saito-pubgen: measured    5 s: 123456 acknowledged (...)</c>.</summary>
    [GeneratedRegex(@"^saito-pubgen: measured +[0-9.]+ s: ([0-9]+) acknowledged")]
    private static partial Regex ProgressLine();
}

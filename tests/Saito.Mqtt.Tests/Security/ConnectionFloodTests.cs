using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Saito.Mqtt.Broker;

namespace Saito.Mqtt.Tests.Security;

/// <summary>
/// Issue 32, item 3: connections that never send CONNECT, re-opened as soon as they are closed, once held the global
/// pending budget so that every hub reconnecting was closed at once (0 of 22 got in). The hubs here are real clients
/// (mosquitto_pub), each retrying as a hub does, from addresses of their own.
/// </summary>
public sealed class ConnectionFloodTests(ITestOutputHelper output)
{
    private const int Hubs = 20;

    private static CancellationToken Token => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(1, 1_000)]
    [InlineData(10, 200)]
    public async Task Twenty_hubs_reconnecting_all_get_in_within_five_seconds_while_silent_connections_flood_from(int addresses, int perAddress)
    {
        await using var saito = await SaitoHost.StartAsync(["Logging:LogLevel:Saito.Mqtt=Error"]);
        var floodFrom = Enumerable.Range(1, addresses).Select(i => IPAddress.Parse($"127.0.0.{i}")).ToArray();
        await using var flood = SilentFlood.Start(new IPEndPoint(IPAddress.Loopback, saito.Port), floodFrom, perAddress);
        await Eventually.TrueAsync(() => flood.Opened >= addresses * perAddress, "every flood connection opened once", TimeSpan.FromSeconds(60));

        var clock = Stopwatch.StartNew();
        var times = await Task.WhenAll(Enumerable.Range(0, Hubs).Select(i => HubGetsInAsync(saito.Port, i, TimeSpan.FromSeconds(20))));
        var all = clock.Elapsed;

        output.WriteLine(
            $"flood: {addresses} address(es) x {perAddress} connections, {flood.Opened} opened in all, {flood.Open} open now; " +
            $"{Hubs} hubs in after {all.TotalMilliseconds:F0} ms (slowest {times.Max().TotalMilliseconds:F0} ms, median " +
            $"{times.Order().ElementAt(Hubs / 2).TotalMilliseconds:F0} ms); evicted for MaxPendingConnections " +
            $"{saito.Broker.Metrics.LimitHits(nameof(MqttBrokerOptions.MaxPendingConnections))}, per address " +
            $"{saito.Broker.Metrics.LimitHits("MaxPendingConnectionsPerAddress")}");
        all.ShouldBeLessThan(TimeSpan.FromSeconds(5), "every hub got in within 5 s of the flood");
        saito.Broker.PendingConnections.ShouldBeLessThanOrEqualTo(saito.Broker.Options.MaxPendingConnections);
    }

    /// <summary>One hub: mosquitto_pub from its own address (127.0.0.101 on), retried as a hub retries until it got in; how long that took.</summary>
    private static async Task<TimeSpan> HubGetsInAsync(int port, int hub, TimeSpan limit)
    {
        var clock = Stopwatch.StartNew();
        string from = $"127.0.0.{101 + hub}";
        while (true)
        {
            var (exitCode, text) = await ExternalCommand.RunAsync(ExternalClientSettings.MosquittoPub,
                ["-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture), "-A", from, "-i", $"flood-hub-{hub}", "-q", "1",
                 "-t", $"flood/hub/{hub}", "-m", "here"], TimeSpan.FromSeconds(10), Token);
            if (exitCode == 0)
            {
                return clock.Elapsed;
            }

            if (clock.Elapsed > limit)
            {
                throw new TimeoutException($"hub {hub} did not get in within {limit.TotalSeconds:F0} s; mosquitto_pub said: {text}");
            }

            await Task.Delay(50, Token);
        }
    }

    /// <summary>
    /// Connections that never send a byte, each re-opened as soon as the broker closes it, from the given source
    /// addresses: the flood of issue 32, at the rate the broker closes them.
    /// </summary>
    private sealed class SilentFlood : IAsyncDisposable
    {
        private readonly CancellationTokenSource _stop = new();
        private readonly List<Task> _loops = [];
        private long _opened;
        private int _open;

        public long Opened => Interlocked.Read(ref _opened);

        public int Open => Volatile.Read(ref _open);

        public static SilentFlood Start(IPEndPoint broker, IReadOnlyList<IPAddress> from, int perAddress)
        {
            var flood = new SilentFlood();
            foreach (var source in from)
            {
                for (int i = 0; i < perAddress; i++)
                {
                    flood._loops.Add(Task.Run(() => flood.HoldAsync(broker, source)));
                }
            }

            return flood;
        }

        private async Task HoldAsync(IPEndPoint broker, IPAddress source)
        {
            var token = _stop.Token;
            var nothing = new byte[1];
            while (!token.IsCancellationRequested)
            {
                using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                try
                {
                    socket.Bind(new IPEndPoint(source, 0));
                    await socket.ConnectAsync(broker, token);
                    Interlocked.Increment(ref _opened);
                    Interlocked.Increment(ref _open);
                    try
                    {
                        // Silent until the broker closes it (0 bytes or a reset), then at once again.
                        while (await socket.ReceiveAsync(nothing, SocketFlags.None, token) > 0)
                        {
                        }
                    }
                    finally
                    {
                        Interlocked.Decrement(ref _open);
                    }
                }
                catch (SocketException)
                {
                    // Refused, reset, or no port left for a moment: try again, as the attacker does.
                    await Task.Delay(10, CancellationToken.None);
                }
                catch (OperationCanceledException) when (token.IsCancellationRequested)
                {
                    return;
                }
            }
        }

        public async ValueTask DisposeAsync()
        {
            await _stop.CancelAsync();
            await Task.WhenAll(_loops).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing);
            _stop.Dispose();
        }
    }
}

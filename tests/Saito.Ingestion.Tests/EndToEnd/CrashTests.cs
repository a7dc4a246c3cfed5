using System.Collections.Concurrent;
using System.Text;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>Acknowledged means durable: kill -9 Saito mid-stream and every acknowledged reading is there after restart.</summary>
public sealed class CrashTests
{
    [Theory]
    [InlineData("sqlite")]
    [InlineData("postgres")]
    public async Task Every_acknowledged_reading_survives_a_kill_9_mid_stream(string provider)
    {
        await using TestStorage storage = provider == "sqlite" ? new SqliteTestStorage() : await PostgresTestStorage.CreateAsync();
        var saito = await SaitoProcess.StartAsync(storage);
        var acknowledged = new ConcurrentBag<long>();
        var start = DateTime.UtcNow.AddMinutes(-2);
        const string device = "wrist-crash";
        try
        {
            await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port, ProtocolVersion = MqttProtocolVersion.V500 },
                TestContext.Current.CancellationToken);

            // 8 publishers in parallel, each reading a unique timestamp; kill once 600 are acknowledged.
            using var stop = new CancellationTokenSource();
            long next = -1;
            var publishers = Enumerable.Range(0, 8).Select(_ => Task.Run(async () =>
            {
                while (!stop.IsCancellationRequested)
                {
                    long i = Interlocked.Increment(ref next);
                    string payload = $"{{\"ts\":{new DateTimeOffset(start).ToUnixTimeMilliseconds() + i},\"hr\":{60 + (i % 100)}}}";
                    try
                    {
                        var result = await client.PublishAsync($"saito/hub-1/{device}/biosensor", Encoding.UTF8.GetBytes(payload), MqttQoS.AtLeastOnce);
                        if (result == MqttReasonCode.Success)
                        {
                            acknowledged.Add(i);
                        }
                    }
                    catch (TestHubDisconnectedException)
                    {
                        return; // the server is gone
                    }
                }
            })).ToArray();

            while (acknowledged.Count < 600)
            {
                await Task.Delay(5, TestContext.Current.CancellationToken);
            }

            await saito.KillAsync();
            stop.Cancel();
            await Task.WhenAll(publishers).WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        }
        finally
        {
            await saito.DisposeAsync();
        }

        // Start Saito again on the same database and read what it has.
        await using var again = await SaitoHost.StartAsync(storage);
        int id = (await again.Store.LoadDevicesAsync(TestContext.Current.CancellationToken))[device];
        var stored = (await again.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, TestContext.Current.CancellationToken))
            .Select(r => (long)(r.Timestamp - start.AddTicks(-(start.Ticks % TimeSpan.TicksPerMillisecond))).TotalMilliseconds)
            .ToHashSet();
        var lost = acknowledged.Where(i => !stored.Contains(i)).Order().ToList();
        lost.ShouldBeEmpty($"{lost.Count} of {acknowledged.Count} acknowledged readings were lost (stored: {stored.Count})");
        acknowledged.Count.ShouldBeGreaterThanOrEqualTo(600);
    }
}

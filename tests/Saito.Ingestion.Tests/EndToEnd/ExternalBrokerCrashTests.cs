using System.Text;
using Saito.Mqtt.Packets;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// External mode acknowledges a message only once it is committed: kill -9 Saito mid-stream, start it again with the
/// same session, and every reading the broker took is stored, once. A message acknowledged before its commit would be
/// gone from the broker and from the database.
/// </summary>
public sealed class ExternalBrokerCrashTests
{
    [Fact]
    public async Task Every_reading_the_broker_took_is_stored_once_after_a_kill_9_of_saito_mid_stream()
    {
        const int total = 3000;
        var token = TestContext.Current.CancellationToken;
        await using var mosquitto = await MosquittoInstance.StartAsync(maxQueuedMessages: 100_000);
        await using var storage = new SqliteTestStorage();
        string[] settings = [.. ExternalBrokerTests.Settings, $"Mqtt:External:Port={mosquitto.Port}", "Mqtt:External:ClientId=saito-crash"];
        var saito = await SaitoServerProcess.StartAsync(new SaitoServerStart
        {
            Arguments = [.. storage.Settings.Concat(settings).Select(s => "--" + s)],
            WorkingDirectory = AppContext.BaseDirectory,
            ReadyLine = SaitoServerProcess.ExternalReadyLine,
            WaitForMqttPort = false,
        }, token);

        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = mosquitto.Port }, token);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 120_000;
        int next = -1, taken = 0;
        try
        {
            // 16 publishers; Saito is killed once the broker has taken a third, while Saito has messages in flight.
            var publishers = Enumerable.Range(0, 16).Select(_ => Task.Run(async () =>
            {
                for (int i = Interlocked.Increment(ref next); i < total; i = Interlocked.Increment(ref next))
                {
                    var payload = Encoding.UTF8.GetBytes($"{{\"ts\":{baseMs + i},\"hr\":{60 + (i % 100)}}}");
                    var result = await hub.PublishAsync("saito/hub-1/wrist-crash/biosensor", payload, MqttQoS.AtLeastOnce, cancellationToken: token);
                    result.ShouldBe(MqttReasonCode.Success);
                    Interlocked.Increment(ref taken);
                }
            }, token)).ToArray();

            while (Volatile.Read(ref taken) < total / 3)
            {
                await Task.Delay(5, token);
            }

            await saito.KillAsync();
            await Task.WhenAll(publishers);
        }
        finally
        {
            await saito.DisposeAsync();
        }

        // The broker kept the session and what was not acknowledged: the next start stores all of it, once.
        await using var again = await SaitoHost.StartAsync(storage, settings);
        (await again.WaitForCountAsync(ReadingKind.Biosensor, total, TimeSpan.FromSeconds(60))).ShouldBe(total);
    }
}

using System.Text;
using Microsoft.Data.Sqlite;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Storage.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>A message the database itself refuses is dead-lettered alone; the messages committed in the same batch are not held back.</summary>
public sealed class DatabaseRefusalTests
{
    [Fact]
    public async Task A_message_the_database_refuses_becomes_a_dead_letter_and_its_batch_mates_are_stored()
    {
        await using var storage = new SqliteTestStorage();
        // A long batch age, so the six messages below share one batch.
        await using var saito = await SaitoServer.StartAsync(storage, ["Storage:BatchAgeMilliseconds=500"]);

        // The database refuses one value: a trigger stands in for any constraint a DBA might add.
        await using (var connection = new SqliteConnection($"Data Source={storage.HotFile}"))
        {
            await connection.OpenAsync(TestContext.Current.CancellationToken);
            await using var trigger = connection.CreateCommand();
            trigger.CommandText = """
                CREATE TRIGGER refuse_test_value BEFORE INSERT ON reading_biosensor
                WHEN NEW.heart_rate = 123.5 BEGIN SELECT RAISE(ABORT, 'heart rate 123.5 refused by a test trigger'); END;
                """;
            await trigger.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
        }

        await using var client = new MqttClient(new MqttClientOptions { Host = "127.0.0.1", Port = saito.Port });
        await client.ConnectAsync(TestContext.Current.CancellationToken);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 10_000;
        double[] heartRates = [70, 71, 123.5, 72, 73, 74];
        var publishes = heartRates.Select((hr, i) => client.PublishAsync("saito/hub-1/wrist-refused/biosensor",
            Encoding.UTF8.GetBytes(FormattableString.Invariant($"{{\"ts\":{baseMs + i},\"hr\":{hr}}}")), MqttQoS.AtLeastOnce,
            cancellationToken: TestContext.Current.CancellationToken)).ToList();

        var results = await Task.WhenAll(publishes).WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        results.ShouldAllBe(r => r.ReasonCode == MqttReasonCode.Success, "every message is accounted for: stored, or stored as a dead letter");

        int id = (await saito.Store.LoadDevicesAsync(TestContext.Current.CancellationToken))["wrist-refused"];
        var stored = await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, TestContext.Current.CancellationToken);
        stored.Select(r => r.HeartRate!.Value).ShouldBe([70, 71, 72, 73, 74], ignoreOrder: true);
        var letter = (await saito.Store.ReadDeadLettersAsync(10, TestContext.Current.CancellationToken)).ShouldHaveSingleItem();
        letter.Reason.ShouldBe("database-rejected");
        letter.Detail.ShouldContain("refused by a test trigger");
        letter.Payload.ShouldContain("123.5");
    }
}

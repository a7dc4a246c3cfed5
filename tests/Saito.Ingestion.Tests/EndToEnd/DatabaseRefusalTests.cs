using System.Text;
using Microsoft.Data.Sqlite;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>A message the database itself refuses is dead-lettered alone; the messages committed in the same batch are not held back.</summary>
public sealed class DatabaseRefusalTests
{
    [Fact]
    public async Task A_message_the_database_refuses_becomes_a_dead_letter_and_its_batch_mates_are_stored()
    {
        await using var storage = new SqliteTestStorage();
        // A long batch age, so the six messages below share one batch.
        await using var saito = await SaitoHost.StartAsync(storage, ["Storage:BatchAgeMilliseconds=500"]);

        await RefuseHeartRateAsync(storage, 123.5, TestContext.Current.CancellationToken);

        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, TestContext.Current.CancellationToken);
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 10_000;
        double[] heartRates = [70, 71, 123.5, 72, 73, 74];
        var publishes = heartRates.Select((hr, i) => client.PublishAsync("saito/hub-1/wrist-refused/biosensor",
            Encoding.UTF8.GetBytes(FormattableString.Invariant($"{{\"ts\":{baseMs + i},\"hr\":{hr}}}")), MqttQoS.AtLeastOnce,
            cancellationToken: TestContext.Current.CancellationToken)).ToList();

        var results = await Task.WhenAll(publishes).WaitAsync(TimeSpan.FromSeconds(30), TestContext.Current.CancellationToken);
        results.ShouldAllBe(r => r == MqttReasonCode.Success, "every message is accounted for: stored, or stored as a dead letter");

        int id = (await saito.Store.LoadDevicesAsync(TestContext.Current.CancellationToken))["wrist-refused"];
        var stored = await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, TestContext.Current.CancellationToken);
        stored.Select(r => r.HeartRate!.Value).ShouldBe([70, 71, 72, 73, 74], ignoreOrder: true);
        var letter = (await saito.Store.ReadDeadLettersAsync(10, TestContext.Current.CancellationToken)).ShouldHaveSingleItem();
        letter.Reason.ShouldBe("database-rejected");
        letter.Detail.ShouldContain("refused by a test trigger");
        letter.Payload.ShouldContain("123.5");
    }

    [Theory]
    [InlineData("sqlite")]
    [InlineData("postgres")]
    public async Task A_refused_message_larger_than_4096_bytes_is_dead_lettered_byte_for_byte(string provider)
    {
        var ct = TestContext.Current.CancellationToken;
        await using TestStorage storage = provider == "sqlite" ? new SqliteTestStorage() : await PostgresTestStorage.CreateAsync();
        await using var saito = await SaitoHost.StartAsync(storage);
        await RefuseHeartRateAsync(storage, 123.5, ct);

        // A byte order mark, then 100 readings with a note of multi-byte text and escapes the parser ignores: about
        // 8 KB, and one reading the database refuses, so the whole message comes back as one dead letter.
        long baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 60_000;
        var json = new StringBuilder("[");
        for (int i = 0; i < 100; i++)
        {
            json.Append(i == 0 ? string.Empty : ",").Append(FormattableString.Invariant(
                $$"""{"ts":{{baseMs + i}},"hr":{{(i == 41 ? 123.5 : 70 + (i % 10))}},"note":"Zoë 体温 😀 \u00e9\n {{i}}"}"""));
        }

        byte[] payload = [0xEF, 0xBB, 0xBF, .. Encoding.UTF8.GetBytes(json.Append(']').ToString())];
        payload.Length.ShouldBeGreaterThan(DeadLetter.MaxPayloadChars + 1000);

        var letter = await PublishAndReadTheDeadLetterAsync(saito, "saito/hub-1/wrist-big/biosensor", payload, ct);

        letter.Reason.ShouldBe("database-rejected");
        letter.OriginalPayload().ShouldBe(payload);
        letter.PayloadBytes.ShouldBeNull("UTF-8 text is kept whole as text");
    }

    [Theory]
    [InlineData("sqlite")]
    [InlineData("postgres")]
    public async Task A_binary_payload_on_a_bad_topic_is_dead_lettered_byte_for_byte(string provider)
    {
        var ct = TestContext.Current.CancellationToken;
        await using TestStorage storage = provider == "sqlite" ? new SqliteTestStorage() : await PostgresTestStorage.CreateAsync();
        await using var saito = await SaitoHost.StartAsync(storage);

        // Every byte value, NUL and bytes that are never UTF-8 among them, 20 times over: 5,120 bytes.
        byte[] payload = Enumerable.Range(0, 20 * 256).Select(i => (byte)(i * 7)).ToArray();

        var letter = await PublishAndReadTheDeadLetterAsync(saito, "saito/hub-1/no-kind", payload, ct);

        letter.Reason.ShouldBe("bad-topic");
        letter.PayloadBytes.ShouldBe(payload);
        letter.OriginalPayload().ShouldBe(payload);
        letter.Payload.Length.ShouldBeLessThanOrEqualTo(DeadLetter.MaxPayloadChars);
        letter.Payload.ShouldNotContain('\0');
    }

    /// <summary>Publishes one message at QoS 1, checks it is acknowledged, and returns the one dead letter stored.</summary>
    private static async Task<DeadLetter> PublishAndReadTheDeadLetterAsync(SaitoHost saito, string topic, byte[] payload, CancellationToken ct)
    {
        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, ct);
        var result = await client.PublishAsync(topic, payload, MqttQoS.AtLeastOnce, cancellationToken: ct).WaitAsync(TimeSpan.FromSeconds(30), ct);
        result.ShouldBe(MqttReasonCode.Success);
        return (await saito.Store.ReadDeadLettersAsync(10, ct)).ShouldHaveSingleItem();
    }

    /// <summary>The database refuses one heart rate: a trigger stands in for any constraint a DBA might add.</summary>
    private static async Task RefuseHeartRateAsync(TestStorage storage, double heartRate, CancellationToken ct)
    {
        string value = heartRate.ToString(System.Globalization.CultureInfo.InvariantCulture);
        if (storage is SqliteTestStorage sqlite)
        {
            await using var connection = new SqliteConnection($"Data Source={sqlite.HotFile}");
            await connection.OpenAsync(ct);
            await using var trigger = connection.CreateCommand();
            trigger.CommandText = $"""
                CREATE TRIGGER refuse_test_value BEFORE INSERT ON reading_biosensor
                WHEN NEW.heart_rate = {value} BEGIN SELECT RAISE(ABORT, 'heart rate {value} refused by a test trigger'); END;
                """;
            await trigger.ExecuteNonQueryAsync(ct);
            return;
        }

        var postgres = (PostgresTestStorage)storage;
        await using var pg = new Npgsql.NpgsqlConnection(postgres.ConnectionString);
        await pg.OpenAsync(ct);
        await using var command = new Npgsql.NpgsqlCommand($"""
            CREATE FUNCTION refuse_test_value() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'heart rate {value} refused by a test trigger'; END $$;
            CREATE TRIGGER refuse_test_value BEFORE INSERT ON reading_biosensor
            FOR EACH ROW WHEN (NEW.heart_rate = {value}) EXECUTE FUNCTION refuse_test_value();
            """, pg);
        await command.ExecuteNonQueryAsync(ct);
    }
}

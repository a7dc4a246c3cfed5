using System.Net;
using System.Text;
using Microsoft.Data.Sqlite;
using Microsoft.Extensions.DependencyInjection;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Packets;
using Saito.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>
/// <c>Mqtt:Mode=external</c> behind a real Mosquitto, when Saito cannot store a message: it never acknowledges it, so
/// nothing is lost, and the message is stored once the cause is gone.
/// <para>
/// The failure is real SQLite refusing every write, made the way a DBA could: triggers that abort any insert into
/// the biosensor table and into dead_letter (so not even the dead letter Saito falls back to can be stored). It is
/// not transient to Saito (SQLITE_CONSTRAINT), so it reaches the consumer as an unexpected error; dropping the
/// triggers removes the cause.
/// </para>
/// </summary>
public sealed class ExternalBrokerFailureTests
{
    [Theory]
    [MemberData(nameof(ExternalBrokerTests.Versions), MemberType = typeof(ExternalBrokerTests))]
    public async Task A_message_saito_cannot_store_is_not_acknowledged_and_is_stored_once_the_cause_is_gone(string protocolVersion)
    {
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, Settings(mosquitto, "saito-refused", protocolVersion));
        await ExternalBrokerTests.WaitForSubscriptionAsync(saito);
        await RefuseWritesAsync(storage, refuse: true);

        await PublishReadingAsync(mosquitto, "wrist-refused");
        await WaitForFailingHealthAsync(saito);
        (await saito.Store.CountAsync(ReadingKind.Biosensor, Storage.StorageTier.Hot, TestContext.Current.CancellationToken)).ShouldBe(0);

        await RefuseWritesAsync(storage, refuse: false);

        // The next try comes within the consumer's longest backoff (10 s), or after a reconnect when the connection
        // dropped meanwhile. A try has two writes: the reading, then (refused) its database-rejected dead letter. When
        // the triggers go between the two, the dead letter is stored and the message acknowledged: a record of it
        // that replays, which is also right (in a full run that happened, and the reading never came).
        var (stored, deadLettered) = await WaitForReadingOrDeadLetterAsync(saito, "saito/hub-1/wrist-refused/biosensor");
        (stored + deadLettered.Count).ShouldBe(1, "the message is stored, or dead-lettered by a try the triggers' removal split, once");
        if (deadLettered.Count == 1)
        {
            deadLettered[0].Detail.ShouldContain("writes refused by the test");
            deadLettered[0].Payload.ShouldContain("\"hr\":71");
        }

        // Health follows the commit a moment later (the consumer clears its failure after the write returns): waited for,
        // not read once (read once, it failed in a full run while the consumer had not yet cleared it).
        await saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_message_the_database_still_refuses_is_dead_lettered_once_dead_letters_can_be_stored_and_health_recovers()
    {
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, Settings(mosquitto, "saito-dead-lettered", "5.0"));
        await ExternalBrokerTests.WaitForSubscriptionAsync(saito);
        await RefuseWritesAsync(storage, refuse: true);
        await PublishReadingAsync(mosquitto, "wrist-dead-lettered");
        await WaitForFailingHealthAsync(saito);

        await ExecuteAsync(storage, "DROP TRIGGER refuse_dead_letter;");
        var (stored, deadLettered) = await WaitForReadingOrDeadLetterAsync(saito, "saito/hub-1/wrist-dead-lettered/biosensor");
        stored.ShouldBe(0);
        deadLettered.Count.ShouldBe(1);
        // The dead letter was a write the database took: /health says so (it stayed 503 until the next reading was committed).
        await saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.OK);
    }

    [Fact]
    public async Task A_message_saito_could_not_store_before_it_stopped_is_sent_again_by_the_broker_and_stored_by_the_next_start()
    {
        // If Saito had acknowledged the message while failing (as success, or as a 5.0 refusal), Mosquitto would have
        // forgotten it, and the next Saito with the same session would never see it.
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var storage = new SqliteTestStorage();
        await using (var first = await SaitoHost.StartAsync(storage, Settings(mosquitto, "saito-redelivered", "5.0")))
        {
            await ExternalBrokerTests.WaitForSubscriptionAsync(first);
            await RefuseWritesAsync(storage, refuse: true);
            await PublishReadingAsync(mosquitto, "wrist-redelivered");
            await WaitForFailingHealthAsync(first);
        }

        await RefuseWritesAsync(storage, refuse: false);
        await using var second = await SaitoHost.StartAsync(storage, Settings(mosquitto, "saito-redelivered", "5.0"));

        (await second.WaitForCountAsync(ReadingKind.Biosensor, 1)).ShouldBe(1);
    }

    [Fact]
    public async Task Stopping_while_a_message_waits_on_an_unreachable_database_ends_without_an_error_and_the_broker_keeps_the_message()
    {
        // From a review: the consumer gave its disconnect the shutdown token, already cancelled when a held message made
        // it wait out the shutdown timeout, so host shutdown threw OperationCanceledException.
        var token = TestContext.Current.CancellationToken;
        await using var mosquitto = await MosquittoInstance.StartAsync();
        await using var database = await PostgresTestStorage.CreateAsync();
        var (proxy, throughProxy) = await TcpProxy.ForPostgresAsync(database.ConnectionString, token);
        await using var _ = proxy;
        var saito = await SaitoHost.StartAsync(database, [.. Settings(mosquitto, "saito-stuck", "5.0"), $"Storage:ConnectionString={throughProxy}"],
            builder => builder.Services.Configure<Microsoft.Extensions.Hosting.HostOptions>(o => o.ShutdownTimeout = TimeSpan.FromSeconds(2)));
        await ExternalBrokerTests.WaitForSubscriptionAsync(saito);
        proxy.Cut();
        await PublishReadingAsync(mosquitto, "wrist-stuck");
        await saito.WaitForHealthAsync((status, _) => status == HttpStatusCode.ServiceUnavailable);

        await Should.NotThrowAsync(() => saito.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(60), token));

        proxy.Start();
        await using var next = await SaitoHost.StartAsync(database, Settings(mosquitto, "saito-stuck", "5.0"));
        (await next.WaitForCountAsync(ReadingKind.Biosensor, 1)).ShouldBe(1);
    }

    /// <summary>Waits up to 90 s until the reading is stored or its message dead-lettered as database-rejected.</summary>
    private static async Task<(long Stored, IReadOnlyList<DeadLetter> DeadLettered)> WaitForReadingOrDeadLetterAsync(SaitoHost saito, string topic)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(90);
        while (true)
        {
            long stored = await saito.Store.CountAsync(ReadingKind.Biosensor, Storage.StorageTier.Hot, CancellationToken.None);
            var deadLettered = (await saito.Store.ReadDeadLettersAsync(100, CancellationToken.None))
                .Where(d => d.Topic == topic && d.Reason == "database-rejected").ToList();
            if (stored > 0 || deadLettered.Count > 0 || DateTime.UtcNow > deadline)
            {
                return (stored, deadLettered);
            }

            await Task.Delay(50, TestContext.Current.CancellationToken);
        }
    }

    private static string[] Settings(MosquittoInstance mosquitto, string clientId, string protocolVersion) =>
    [
        .. ExternalBrokerTests.Settings,
        $"Mqtt:External:Port={mosquitto.Port}",
        $"Mqtt:External:ClientId={clientId}",
        $"Mqtt:External:ProtocolVersion={protocolVersion}",
    ];

    private static async Task PublishReadingAsync(MosquittoInstance mosquitto, string device)
    {
        await using var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = mosquitto.Port }, TestContext.Current.CancellationToken);
        var result = await hub.PublishAsync($"saito/hub-1/{device}/biosensor",
            Encoding.UTF8.GetBytes($"{{\"ts\":{DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000},\"hr\":71}}"), MqttQoS.AtLeastOnce,
            cancellationToken: TestContext.Current.CancellationToken);
        result.ShouldBe(MqttReasonCode.Success, "Mosquitto took the message and has a subscriber for it");
    }

    /// <summary>Waits until Saito has tried the message and says on /health that it holds it.</summary>
    private static Task<string> WaitForFailingHealthAsync(SaitoHost saito) =>
        saito.WaitForHealthAsync((code, body) => code == HttpStatusCode.ServiceUnavailable && body.Contains("not acknowledged", StringComparison.Ordinal));

    private static Task RefuseWritesAsync(SqliteTestStorage storage, bool refuse) => ExecuteAsync(storage, refuse
        ? """
          CREATE TRIGGER refuse_biosensor BEFORE INSERT ON reading_biosensor BEGIN SELECT RAISE(ABORT, 'writes refused by the test'); END;
          CREATE TRIGGER refuse_dead_letter BEFORE INSERT ON dead_letter BEGIN SELECT RAISE(ABORT, 'writes refused by the test'); END;
          """
        : "DROP TRIGGER refuse_biosensor; DROP TRIGGER refuse_dead_letter;");

    private static async Task ExecuteAsync(SqliteTestStorage storage, string sql)
    {
        await using var connection = new SqliteConnection($"Data Source={storage.HotFile};Pooling=False");
        await connection.OpenAsync(TestContext.Current.CancellationToken);
        await using var command = connection.CreateCommand();
        command.CommandText = sql;
        await command.ExecuteNonQueryAsync(TestContext.Current.CancellationToken);
    }
}

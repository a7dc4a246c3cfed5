using Microsoft.Extensions.Logging.Abstractions;
using Saito.LoadTest.Common;
using Saito.Storage;
using Saito.Storage.Sqlite;

namespace Saito.LoadTest.Tests.Classroom;

/// <summary><c>classroom --quick</c> end to end: against the Saito.Server it starts (SQLite, PostgreSQL) and through Mosquitto.</summary>
[Collection(ClassroomRuns.Name)]
public sealed class ClassroomCommandTests(PostgresServer postgres) : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("saito-classroom-test-").FullName;

    public void Dispose()
    {
        Microsoft.Data.Sqlite.SqliteConnection.ClearAllPools();
        Directory.Delete(_dir, recursive: true);
    }

    [Fact]
    public async Task Quick_class_on_sqlite_commits_every_acknowledged_reading_and_times_it_by_puback()
    {
        var outcome = await ClassroomOutcome.RunAsync(Path.Combine(_dir, "out"), "--quick", "--work", Path.Combine(_dir, "db"));

        outcome.ShouldHaveStoredEverything("sqlite", "qos1-hub", threads: 4, latencySource: "puback");
        outcome.Details.GetProperty("store_count").GetInt64().ShouldBe(outcome.Published, "Saito's own count agrees");
        // The poller, watching the database beside the PUBACKs, saw every one of them committed too.
        outcome.Details.GetProperty("db_latency").GetProperty("readings").GetInt64().ShouldBe(outcome.Published);
        Directory.Exists(Path.Combine(_dir, "db")).ShouldBeFalse("the SQLite files are deleted without --keep");
    }

    [Fact]
    public async Task Quick_class_on_postgres_with_a_connection_per_sensor_at_qos_2_over_mqtt_5_commits_everything()
    {
        var outcome = await ClassroomOutcome.RunAsync(Path.Combine(_dir, "out"),
            "--quick", "--db", "postgres", "--pg", postgres.ConnectionString, "--connection", "sensor", "--qos", "2", "--mqtt", "5");

        outcome.ShouldHaveStoredEverything("postgres", "qos2-sensor-mqtt5", threads: 20, latencySource: "puback");
        outcome.Details.GetProperty("store_count").GetInt64().ShouldBe(outcome.Published);
    }

    [Fact]
    public async Task Quick_class_through_mosquitto_into_an_external_saito_is_timed_by_the_database_poller()
    {
        await using var mosquitto = await MosquittoInstance.StartAsync(maxQueuedMessages: 100000);
        string hot = Path.Combine(_dir, "hot");
        var token = TestContext.Current.CancellationToken;
        await using var saito = await LocalServers.StartExternalSaitoAsync(null, "127.0.0.1", mosquitto.Port,
            [$"--Storage:HotPath={hot}", $"--Storage:ArchivePath={Path.Combine(_dir, "archive")}"], [], Path.Combine(_dir, "saito.log"),
            TimeSpan.FromSeconds(60), token);

        var outcome = await ClassroomOutcome.RunAsync(Path.Combine(_dir, "out"),
            "--quick", "--broker", $"127.0.0.1:{mosquitto.Port}", "--sqlite-hot", hot, "--readings-per-message", "5", "--poll-ms", "50");

        outcome.ShouldHaveStoredEverything("sqlite", "qos1-hub-x5", threads: 4, latencySource: "db-poller");
        outcome.Details.GetProperty("broker").GetString().ShouldBe($"127.0.0.1:{mosquitto.Port}");
        outcome.Details.TryGetProperty("store_count", out var count).ShouldBeTrue();
        count.ValueKind.ShouldBe(System.Text.Json.JsonValueKind.Null, "not Saito's database to count whole");
    }

    [Fact]
    public async Task Readings_a_broker_acknowledged_but_nobody_stored_fail_the_run()
    {
        await using var mosquitto = await MosquittoInstance.StartAsync(maxQueuedMessages: 100000);
        string hot = Path.Combine(_dir, "hot");
        var storage = new StorageOptions { HotPath = hot, ArchivePath = Path.Combine(_dir, "archive") };
        await using (var store = new SqliteReadingStore(storage, NullLogger<SqliteReadingStore>.Instance))
        {
            await store.EnsureSchemaAsync(TestContext.Current.CancellationToken); // a Saito database, but no Saito consuming
        }

        var outcome = await ClassroomOutcome.RunAsync(Path.Combine(_dir, "out"),
            "--quick", "--duration", "2", "--broker", $"127.0.0.1:{mosquitto.Port}", "--sqlite-hot", hot, "--drain-seconds", "5");

        outcome.ExitCode.ShouldBe(1);
        outcome.Published.ShouldBeGreaterThan(0);
        outcome.Details.GetProperty("acked_readings").GetInt64().ShouldBe(outcome.Published, "Mosquitto acknowledges what it receives");
        outcome.Details.GetProperty("committed_readings").GetInt64().ShouldBe(0);
        outcome.Details.GetProperty("passed").GetBoolean().ShouldBeFalse();
        outcome.Row.GetProperty("rows").GetInt64().ShouldBe(0);
        outcome.Row.GetProperty("p50_ms").ValueKind.ShouldBe(System.Text.Json.JsonValueKind.Null, "no commit, no latency");
    }
}

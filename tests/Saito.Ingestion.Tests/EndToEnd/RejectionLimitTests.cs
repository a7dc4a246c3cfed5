using System.Text;
using Saito.Ingestion.Parsing;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Storage.Readings;

namespace Saito.Ingestion.Tests.EndToEnd;

/// <summary>What a hostile or broken client can make Saito write: bounded per message, over the real pipeline.</summary>
public sealed class RejectionLimitTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task A_message_of_10000_bad_readings_writes_100_dead_letters_and_one_summary_and_its_good_readings()
    {
        await using var storage = new SqliteTestStorage();
        // Above the default 10,000 readings per message, so that all 10,005 elements are read.
        await using var saito = await SaitoServer.StartAsync(storage, ["Ingestion:MaxReadingsPerMessage=20000"]);
        long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        // 6,000 elements that are not objects, 4,000 readings stamped in 1970, and 5 good readings among them.
        var elements = new List<string>();
        elements.AddRange(Enumerable.Repeat("0", 6000));
        elements.AddRange(Enumerable.Repeat("""{"ts":1,"hr":70}""", 4000));
        elements.InsertRange(5000, Enumerable.Range(0, 5).Select(i => FormattableString.Invariant($$"""{"ts":{{nowMs - 1000 + i}},"hr":{{70 + i}}}""")));
        byte[] payload = Encoding.UTF8.GetBytes("[" + string.Join(",", elements) + "]");

        await using var client = new MqttClient(new MqttClientOptions { Host = "127.0.0.1", Port = saito.Port });
        await client.ConnectAsync(Ct);
        var result = await client.PublishAsync("saito/hub-1/wrist-hostile/biosensor", payload, MqttQoS.AtLeastOnce, cancellationToken: Ct)
            .WaitAsync(TimeSpan.FromSeconds(60), Ct);

        result.ReasonCode.ShouldBe(MqttReasonCode.Success);
        var letters = await saito.Store.ReadDeadLettersAsync(20_000, Ct);
        letters.Count.ShouldBe(101);
        var summary = letters[0]; // newest first: the summary is written last
        summary.Reason.ShouldBe(DeadLetterReasons.TooManyRejections);
        summary.Detail.ShouldContain("9900 more reading(s) or record(s) of this message were rejected after the first 100 dead letters");
        summary.Detail.ShouldContain("most common: wrong-type (5900), timestamp-past (4000)");
        summary.OriginalPayload().ShouldBe(payload);
        letters.Skip(1).ShouldAllBe(l => l.Reason == DeadLetterReasons.WrongType);
        int id = (await saito.Store.LoadDevicesAsync(Ct))["wrist-hostile"];
        var stored = await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, id, Ct);
        stored.Select(r => r.HeartRate!.Value).ShouldBe([70, 71, 72, 73, 74], ignoreOrder: true);
    }
}

using System.Text;
using Saito.Mqtt.Packets;
using Saito.Storage;
using Saito.Readings;

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
        await using var saito = await SaitoHost.StartAsync(storage, ["Ingestion:MaxReadingsPerMessage=20000"]);
        long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        // 6,000 elements that are not objects, 4,000 readings stamped in 1970, and 5 good readings among them.
        var elements = new List<string>();
        elements.AddRange(Enumerable.Repeat("0", 6000));
        elements.AddRange(Enumerable.Repeat("""{"ts":1,"hr":70}""", 4000));
        elements.InsertRange(5000, Enumerable.Range(0, 5).Select(i => FormattableString.Invariant($$"""{"ts":{{nowMs - 1000 + i}},"hr":{{70 + i}}}""")));
        byte[] payload = Encoding.UTF8.GetBytes("[" + string.Join(",", elements) + "]");

        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, Ct);
        var result = await client.PublishAsync("saito/hub-1/wrist-hostile/biosensor", payload, MqttQoS.AtLeastOnce, cancellationToken: Ct)
            .WaitAsync(TimeSpan.FromSeconds(60), Ct);

        result.ShouldBe(MqttReasonCode.Success);
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

    [Fact]
    public async Task Garbage_on_new_serials_leaves_dead_letters_and_no_devices_and_does_not_use_up_the_hub_s_new_devices()
    {
        // From a review: a new serial was registered before its payload was read, so garbage on invented serials made
        // permanent device rows (bounded in rate by Ingestion:MaxNewDevicesPerHubPerHour, not in total).
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, ["Ingestion:MaxNewDevicesPerHubPerHour=2"]);
        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, Ct);
        // Readings, and check-ins from fingerprint readers never seen (a reader is a device too).
        (string Kind, string Payload)[] garbage =
        [
            ("biosensor", "not json"), ("biosensor", """{"ts":1,"hr":72}"""), ("biosensor", """[0,0,0]"""), ("biosensor", """{"hr":"fast"}"""),
            ("biosensor", "[]"), ("checkin", "not json"), ("checkin", """{"owner":"someone"}"""),
            ("checkin", """{"owner":17}"""), // readable, but the registry has no owner 17: unknown-owner
        ];
        for (int i = 0; i < garbage.Length; i++)
        {
            var result = await client.PublishAsync($"saito/hub-1/junk-{i}/{garbage[i].Kind}", Encoding.UTF8.GetBytes(garbage[i].Payload), MqttQoS.AtLeastOnce, cancellationToken: Ct)
                .WaitAsync(TimeSpan.FromSeconds(30), Ct);
            result.ShouldBe(MqttReasonCode.Success);
        }

        (await saito.Store.LoadDevicesAsync(Ct)).ShouldBeEmpty();
        var letters = await saito.Store.ReadDeadLettersAsync(100, Ct);
        letters.Select(l => l.Topic).Distinct().Count().ShouldBe(garbage.Length, "each bad payload is recorded");
        letters.ShouldNotContain(l => l.Reason == DeadLetterReasons.TooManyNewDevices);
        letters.Count(l => l.Reason == DeadLetterReasons.BadCheckIn).ShouldBe(2);
        letters.Count(l => l.Reason == DeadLetterReasons.UnknownOwner).ShouldBe(1);

        // A message with a good reading among bad ones registers its device, and its good reading is stored under it.
        long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000;
        byte[] mixed = Encoding.UTF8.GetBytes(FormattableString.Invariant($$"""[0,{"ts":{{nowMs}},"hr":72}]"""));
        (await client.PublishAsync("saito/hub-1/wrist-real/biosensor", mixed, MqttQoS.AtLeastOnce, cancellationToken: Ct)
            .WaitAsync(TimeSpan.FromSeconds(30), Ct)).ShouldBe(MqttReasonCode.Success);
        var devices = await saito.Store.LoadDevicesAsync(Ct);
        devices.Keys.ShouldBe(["wrist-real"]);
        var stored = await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, devices["wrist-real"], Ct);
        stored.Single().HeartRate.ShouldBe(72);
        stored.Single().DeviceId.ShouldBe(devices["wrist-real"]);
    }

    [Fact]
    public async Task A_hub_past_its_new_devices_per_hour_gets_a_dead_letter_for_a_new_serial_or_hello_while_known_devices_flow()
    {
        await using var storage = new SqliteTestStorage();
        await using var saito = await SaitoHost.StartAsync(storage, ["Ingestion:MaxNewDevicesPerHubPerHour=3"]);
        await using var client = await TestHub.ConnectAsync(new TestHubOptions { Port = saito.Port }, Ct);
        long nowMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 1000;
        int sent = 0;
        async Task PublishAsync(string hub, string device)
        {
            byte[] payload = Encoding.UTF8.GetBytes(FormattableString.Invariant($$"""{"ts":{{nowMs + sent++}},"hr":72}"""));
            var result = await client.PublishAsync($"saito/{hub}/{device}/biosensor", payload, MqttQoS.AtLeastOnce, cancellationToken: Ct)
                .WaitAsync(TimeSpan.FromSeconds(30), Ct);
            result.ShouldBe(MqttReasonCode.Success);
        }

        foreach (string device in new[] { "wrist-1", "wrist-2", "wrist-3", "wrist-4", "wrist-1", "wrist-5" })
        {
            await PublishAsync("hub-1", device);
        }

        await PublishAsync("hub-2", "wrist-6");
        var hello = await client.PublishAsync("saito/hub-1/wrist-7/hello", """{"kind":"biosensor"}"""u8.ToArray(), MqttQoS.AtLeastOnce, cancellationToken: Ct)
            .WaitAsync(TimeSpan.FromSeconds(30), Ct);
        hello.ShouldBe(MqttReasonCode.Success);

        var devices = await saito.Store.LoadDevicesAsync(Ct);
        devices.Keys.ShouldBe(["wrist-1", "wrist-2", "wrist-3", "wrist-6"], ignoreOrder: true);
        var stored = await saito.Store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, devices["wrist-1"], Ct);
        stored.Count.ShouldBe(2, "a known device of the hub keeps flowing");
        var letters = await saito.Store.ReadDeadLettersAsync(10, Ct);
        letters.Select(l => l.Topic).ShouldBe(["saito/hub-1/wrist-7/hello", "saito/hub-1/wrist-5/biosensor", "saito/hub-1/wrist-4/biosensor"]);
        letters.ShouldAllBe(l => l.Reason == DeadLetterReasons.TooManyNewDevices);
        letters[0].Payload.ShouldBe("""{"kind":"biosensor"}""", "a hello from a new device counts too, and keeps its payload");
        letters[2].Detail.ShouldStartWith("hub hub-1 registered 3 new devices in the last hour (Ingestion:MaxNewDevicesPerHubPerHour); device wrist-4 is not registered");
    }
}

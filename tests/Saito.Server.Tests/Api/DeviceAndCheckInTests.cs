using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.DependencyInjection;
using Saito.Readings;
using Saito.Server.Tests.Infrastructure;
using Saito.Storage;

namespace Saito.Server.Tests.Api;

/// <summary>
/// Devices ingestion registers, sorted out through the API; check-ins from a real MQTT client (mosquitto_pub) and by
/// hand. On SQLite and PostgreSQL.
/// </summary>
public sealed class DeviceAndCheckInTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_device_first_seen_over_MQTT_is_new_until_assigned_and_reassigning_keeps_history(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        await ExternalClients.Mosquitto311.PublishAsync(Endpoint(server), OutgoingMessage.Text("saito/hub-1/wrist-01/biosensor",
            $$"""{"ts":{{DateTimeOffset.UtcNow.AddSeconds(-1).ToUnixTimeMilliseconds()}},"hr":72}"""),
            new ClientOptions { QoS = 1 }, Ct);
        using var teacher = await server.AsAsync("teacher");
        using var admin = await server.AsAsync("admin");
        int ana = await CreateStudentAsync(admin, "Ana");
        int ben = await CreateStudentAsync(admin, "Ben");
        await Rosters.ListOnClassAsync(admin, [teacher], ana, ben); // a teacher assigns within their rosters

        var fresh = await teacher.GetFromJsonAsync<JsonElement>("/api/devices?status=new", Ct);
        var device = fresh.GetProperty("items").EnumerateArray().ShouldHaveSingleItem();
        device.GetProperty("serial").GetString().ShouldBe("wrist-01");
        device.GetProperty("status").GetString().ShouldBe("new");
        int deviceId = device.GetProperty("id").GetInt32();

        // Ingestion records when the band was last heard from (every Ingestion:LastSeenFlushSeconds); "silent since" uses it.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        JsonElement seen;
        while ((seen = await teacher.GetFromJsonAsync<JsonElement>($"/api/devices/{deviceId}", Ct)).GetProperty("lastSeen").ValueKind == JsonValueKind.Null)
        {
            DateTime.UtcNow.ShouldBeLessThan(deadline, "last_seen was never written");
            await Task.Delay(100, Ct);
        }

        DateTimeOffset.Parse(seen.GetProperty("lastSeen").GetString()!, System.Globalization.CultureInfo.InvariantCulture).ShouldBeGreaterThan(DateTimeOffset.UtcNow.AddMinutes(-5));
        string recently = Uri.EscapeDataString(DateTimeOffset.UtcNow.AddMinutes(-10).ToString("O"));
        string later = Uri.EscapeDataString(DateTimeOffset.UtcNow.AddMinutes(1).ToString("O"));
        (await teacher.GetFromJsonAsync<JsonElement>($"/api/devices?silentSince={recently}", Ct)).GetProperty("total").GetInt32().ShouldBe(0);
        (await teacher.GetFromJsonAsync<JsonElement>($"/api/devices?silentSince={later}", Ct)).GetProperty("total").GetInt32().ShouldBe(1);

        // Back-dated: an admin's (AssignmentRule; a teacher's are refused, AssignmentRuleTests).
        var t1 = new DateTimeOffset(2026, 11, 26, 8, 0, 0, TimeSpan.Zero);
        using var first = await admin.PostAsJsonAsync("/api/assignments", new { deviceId, ownerId = ana, from = t1 }, Ct);
        using var second = await admin.PostAsJsonAsync("/api/assignments", new { deviceId, ownerId = ben, from = t1.AddHours(2) }, Ct);
        using var backdated = await admin.PostAsJsonAsync("/api/assignments", new { deviceId, ownerId = ana, from = t1.AddHours(1) }, Ct);

        first.StatusCode.ShouldBe(HttpStatusCode.Created);
        second.StatusCode.ShouldBe(HttpStatusCode.Created);
        backdated.StatusCode.ShouldBe(HttpStatusCode.Conflict);
        (await teacher.GetFromJsonAsync<JsonElement>("/api/devices?status=new", Ct)).GetProperty("total").GetInt32().ShouldBe(0);
        var now = await teacher.GetFromJsonAsync<JsonElement>($"/api/devices/{deviceId}", Ct);
        now.GetProperty("status").GetString().ShouldBe("assigned");
        now.GetProperty("assignedTo").GetProperty("id").GetInt32().ShouldBe(ben);
        var history = (await teacher.GetFromJsonAsync<JsonElement>($"/api/assignments?deviceId={deviceId}", Ct)).GetProperty("items").EnumerateArray().ToList();
        history.Select(a => a.GetProperty("ownerId").GetInt32()).ShouldBe([ben, ana]);
        history[1].GetProperty("to").GetString().ShouldBe("2026-11-26T10:00:00.000000+00:00");
        var atNine = await teacher.GetFromJsonAsync<JsonElement>($"/api/assignments?deviceId={deviceId}&at=2026-11-26T10:00:00%2B01:00", Ct);
        atNine.GetProperty("items").EnumerateArray().Single().GetProperty("ownerId").GetInt32().ShouldBe(ana);

        using var retired = await admin.PostAsync($"/api/devices/{deviceId}/retire", null, Ct);
        (await retired.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("status").GetString().ShouldBe("retired");
        using var afterRetire = await teacher.PostAsJsonAsync("/api/assignments", new { deviceId, ownerId = ana }, Ct);
        afterRetire.StatusCode.ShouldBe(HttpStatusCode.Conflict);
    }

    [Fact]
    public async Task A_hub_past_its_new_devices_still_has_a_new_reader_s_check_in_recorded_and_the_reader_waits()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Ingestion:MaxNewDevicesPerHubPerHour=1"]);
        using var admin = await server.AsAsync("admin");
        int ana = await CreateStudentAsync(admin, "Ana");
        var endpoint = Endpoint(server);
        string reading = $$"""{"ts":"{{DateTimeOffset.UtcNow.AddSeconds(-5):O}}","hr":72}""";
        // One after the other (each acknowledged once committed): the wristband takes hub-1's one new device.
        await ExternalClients.Mosquitto311.PublishAsync(endpoint, OutgoingMessage.Text("saito/hub-1/wrist-1/biosensor", reading), new ClientOptions { QoS = 1 }, Ct);
        await ExternalClients.Mosquitto311.PublishAsync(endpoint, OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ana}}}"""), new ClientOptions { QoS = 1 }, Ct);

        // An arrival is never refused for a device count: recorded, while the reader waits for a later check-in.
        using var teacher = await server.AsAsync("teacher");
        var day = await teacher.GetFromJsonAsync<JsonElement>("/api/check-ins", Ct);
        day.GetProperty("items").EnumerateArray().ShouldHaveSingleItem().GetProperty("ownerId").GetInt32().ShouldBe(ana);
        await using var db = server.OpenRegistry();
        (await db.Devices.Select(d => d.Serial).ToListAsync(Ct)).ShouldBe(["wrist-1"]);
        (await server.Services.GetRequiredService<IReadingStore>().ReadDeadLettersAsync(10, Ct)).ShouldBeEmpty();
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task Two_readers_a_second_read_and_a_redelivery_make_one_check_in_and_an_unknown_owner_is_a_dead_letter(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        int ana = await CreateStudentAsync(admin, "Ana");
        string payload = $$"""{"owner":{{ana}},"ts":"{{DateTimeOffset.UtcNow.AddSeconds(-5):O}}"}""";
        var endpoint = Endpoint(server);

        // Two readers at once, the same finger read twice on one of them, and a message sent again (as after a lost PUBACK).
        await Task.WhenAll(
            ExternalClients.Mosquitto311.PublishAsync(endpoint, [OutgoingMessage.Text("saito/hub-1/fp-1/checkin", payload), OutgoingMessage.Text("saito/hub-1/fp-1/checkin", payload)],
                new ClientOptions { QoS = 1 }, Ct),
            ExternalClients.Paho311.PublishAsync(endpoint, OutgoingMessage.Text("saito/hub-1/fp-2/checkin", $$"""{"owner":{{ana}}}"""), new ClientOptions { QoS = 1 }, Ct));
        await ExternalClients.Mosquitto311.PublishAsync(endpoint, OutgoingMessage.Text("saito/hub-1/fp-1/checkin", payload), new ClientOptions { QoS = 1 }, Ct);
        await ExternalClients.Mosquitto311.PublishAsync(endpoint,
            [OutgoingMessage.Text("saito/hub-1/fp-1/checkin", """{"owner":4242}"""), OutgoingMessage.Text("saito/hub-1/fp-1/checkin", """{"owner":"Ana"}"""),
             OutgoingMessage.Text("saito/hub-1/fp-9/checkin", """{"owner":4243}""")],
            new ClientOptions { QoS = 1 }, Ct);

        // QoS 1 publishes are acknowledged once committed: everything is in the database now.
        using var teacher = await server.AsAsync("teacher");
        var day = await teacher.GetFromJsonAsync<JsonElement>("/api/check-ins", Ct);
        var checkIn = day.GetProperty("items").EnumerateArray().ShouldHaveSingleItem();
        checkIn.GetProperty("ownerId").GetInt32().ShouldBe(ana);
        checkIn.GetProperty("source").GetString()!.ShouldStartWith("reader:fp-");
        var letters = await server.Services.GetRequiredService<IReadingStore>().ReadDeadLettersAsync(10, Ct);
        letters.Select(l => l.Reason).Order().ShouldBe([DeadLetterReasons.BadCheckIn, DeadLetterReasons.UnknownOwner, DeadLetterReasons.UnknownOwner]);
        letters.Where(l => l.Reason == DeadLetterReasons.UnknownOwner).Select(l => l.Detail).ShouldContain(d => d.Contains("owner 4242", StringComparison.Ordinal));

        // By hand: again is harmless; check-out; the readers' devices are in the registry as new devices, but not fp-9,
        // whose only check-in named nobody the registry has.
        using var aide = await server.AsAsync("aide");
        await Rosters.ListOnClassAsync(admin, [aide], ana); // an aide checks in the students of their classes
        using var again = await aide.PostAsJsonAsync("/api/check-ins", new { ownerId = ana }, Ct);
        (await again.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("outcome").GetString().ShouldBe("already-checked-in");
        using var checkOut = await aide.PostAsJsonAsync("/api/check-ins/check-out", new { ownerId = ana }, Ct);
        (await checkOut.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("checkIn").GetProperty("checkedOutAt").ValueKind.ShouldBe(JsonValueKind.String);
        await using var db = server.OpenRegistry();
        (await db.CheckIns.CountAsync(Ct)).ShouldBe(1);
        (await db.Devices.Where(d => d.Serial.StartsWith("fp-")).Select(d => d.Serial).OrderBy(s => s).ToListAsync(Ct)).ShouldBe(["fp-1", "fp-2"]);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_check_out_without_an_open_check_in_is_a_dead_letter_and_the_same_check_out_again_is_not(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres);
        using var admin = await server.AsAsync("admin");
        int ana = await CreateStudentAsync(admin, "Ana");
        int ben = await CreateStudentAsync(admin, "Ben");
        var now = DateTimeOffset.UtcNow;
        string At(int seconds) => now.AddSeconds(seconds).ToString("O", System.Globalization.CultureInfo.InvariantCulture);
        var endpoint = Endpoint(server);

        // Ana: a check-out with no arrival that day. Ben: a check-out timed before his arrival, and the right one (in
        // either order one of them is refused), then the right one again (a redelivery after a lost PUBACK). Each
        // publish waits for its acknowledgements, so Ben's arrival is recorded before his check-outs come.
        await ExternalClients.Mosquitto311.PublishAsync(endpoint,
        [
            OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ana}},"ts":"{{At(-30)}}","action":"out"}"""),
            OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ben}},"ts":"{{At(-20)}}"}"""),
        ], new ClientOptions { QoS = 1 }, Ct);
        await ExternalClients.Mosquitto311.PublishAsync(endpoint,
        [
            OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ben}},"ts":"{{At(-25)}}","action":"out"}"""),
            OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ben}},"ts":"{{At(-10)}}","action":"out"}"""),
        ], new ClientOptions { QoS = 1 }, Ct);
        await ExternalClients.Mosquitto311.PublishAsync(endpoint,
            OutgoingMessage.Text("saito/hub-1/fp-1/checkin", $$"""{"owner":{{ben}},"ts":"{{At(-10)}}","action":"out"}"""), new ClientOptions { QoS = 1 }, Ct);

        // Acknowledged once committed: the dead letters and Ben's check-out are in the database now.
        var letters = await server.Services.GetRequiredService<IReadingStore>().ReadDeadLettersAsync(10, Ct);
        letters.Select(l => l.Reason).ShouldBe([DeadLetterReasons.NotCheckedIn, DeadLetterReasons.NotCheckedIn]);
        letters.ShouldContain(l => l.Detail.Contains($"check-out of owner {ana} at", StringComparison.Ordinal) && l.Detail.Contains("reader fp-1", StringComparison.Ordinal));
        letters.ShouldContain(l => l.Detail.Contains($"check-out of owner {ben} at", StringComparison.Ordinal));
        await using var db = server.OpenRegistry();
        var bens = await db.CheckIns.SingleAsync(c => c.OwnerId == ben, Ct);
        bens.CheckedOutAt.ShouldNotBeNull().ShouldBe(now.AddSeconds(-10), TimeSpan.FromMilliseconds(1));
        (await db.CheckIns.AnyAsync(c => c.OwnerId == ana, Ct)).ShouldBeFalse();
    }

    private static BrokerEndpoint Endpoint(SaitoHost server) => new("saito", "127.0.0.1", server.Port, null, null, null);

    private static async Task<int> CreateStudentAsync(HttpClient admin, string name)
    {
        using var response = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = name }, Ct);
        response.StatusCode.ShouldBe(HttpStatusCode.Created);
        return (await response.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
    }
}

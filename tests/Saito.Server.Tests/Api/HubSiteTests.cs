using System.Globalization;
using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Saito.Readings;
using Saito.Server.Security;
using Saito.Storage;

namespace Saito.Server.Tests.Api;

/// <summary>
/// Hub sites (docs/security.md): a device bound to a hub of a site takes messages only from hubs of that site, until
/// staff move it. Real hubs with the secrets <c>saito hubs add</c> printed, publishing with mosquitto_pub; SQLite and
/// PostgreSQL.
/// </summary>
public sealed class HubSiteTests(PostgresServer postgres) : IClassFixture<PostgresServer>
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    private readonly DateTimeOffset _start = DateTimeOffset.UtcNow.AddMinutes(-5);
    private int _second;

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_device_takes_messages_only_from_hubs_of_its_hub_s_site_until_staff_move_it(StorageProvider provider)
    {
        // Rereads of a device's hub at most every 10 minutes, so that a slow machine cannot make one more below.
        await using var server = await SaitoHost.StartAsync(provider, postgres, ["Mqtt:AllowAnonymous=false", "Ingestion:DeviceHubRecheckSeconds=600"]);
        var secrets = new Dictionary<string, string>(StringComparer.Ordinal)
        {
            ["north-1"] = Cli(server.CredentialsFile, "hubs", "add", "north-1", "--site", "north"),
            ["north-2"] = Cli(server.CredentialsFile, "hubs", "add", "north-2", "--site", "north"),
            ["south-1"] = Cli(server.CredentialsFile, "hubs", "add", "south-1", "--site", "south"),
            ["lone"] = Cli(server.CredentialsFile, "hubs", "add", "lone"),
        };
        async Task SendAsync(string hub, string device, string kind, string payload) =>
            await PublishAsync(server, hub, secrets[hub], $"saito/{hub}/{device}/{kind}", payload);

        // wrist-1 is first seen through north-1, so it is bound to north-1 (site north).
        await SendAsync("north-1", "wrist-1", "biosensor", Reading(70));
        await SendAsync("north-2", "wrist-1", "biosensor", Reading(71)); // the same site: the band roams
        await SendAsync("south-1", "wrist-1", "biosensor", Reading(72)); // another site
        await SendAsync("lone", "wrist-1", "biosensor", Reading(73)); // a hub of no site
        await SendAsync("south-1", "wrist-1", "hello", """{"kind":"biosensor","firmware":"6.6.6"}"""); // no rebinding by hello

        // wrist-2 is first seen through a hub without a site: every hub may send for it, as before sites existed.
        await SendAsync("lone", "wrist-2", "biosensor", Reading(80));
        await SendAsync("south-1", "wrist-2", "biosensor", Reading(81));

        var store = server.Services.GetRequiredService<IReadingStore>();
        var ids = await store.LoadDevicesAsync(Ct);
        (await HeartRatesAsync(store, ids["wrist-1"])).ShouldBe([70, 71]);
        (await HeartRatesAsync(store, ids["wrist-2"])).ShouldBe([80, 81]);
        var letters = await store.ReadDeadLettersAsync(10, Ct);
        letters.Select(l => (l.Reason, l.Topic)).ShouldBe(
        [
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/wrist-1/hello"),
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/lone/wrist-1/biosensor"),
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/wrist-1/biosensor"),
        ]);
        letters[2].Detail.ShouldStartWith("device wrist-1 belongs to hub north-1 of site north; hub south-1 is of site south");
        letters[1].Detail.ShouldContain("hub lone is of no site");
        letters[2].Payload.ShouldContain("72", Case.Sensitive, "the whole message is kept");

        using var ops = await server.AsAsync("ops");
        int wrist1 = ids["wrist-1"];
        var device = await ops.GetFromJsonAsync<JsonElement>($"/api/devices/{wrist1}", Ct);
        device.GetProperty("hub").GetString().ShouldBe("north-1");
        device.GetProperty("firmware").ValueKind.ShouldBe(JsonValueKind.Null, "south-1's hello was not applied");

        // Only staff who manage devices may move one (ApiAccessTests tries every role); a bad hub name is a 400.
        using var teacher = await server.AsAsync("teacher");
        using (var refused = await teacher.PostAsJsonAsync($"/api/devices/{wrist1}/move", new { hub = "south-1" }, Ct))
        {
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        }

        using (var bad = await ops.PostAsJsonAsync($"/api/devices/{wrist1}/move", new { hub = "south/1" }, Ct))
        {
            bad.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        }

        // A hub not in the credentials file has no site: a device moved to it would take messages from every hub.
        using (var ghost = await ops.PostAsJsonAsync($"/api/devices/{wrist1}/move", new { hub = "ghost-9" }, Ct))
        {
            ghost.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
            (await ghost.Content.ReadAsStringAsync(Ct)).ShouldContain("There is no hub named ghost-9 in the credentials file");
        }

        (await store.LoadDeviceHubsAsync("wrist-1", Ct))["wrist-1"].ShouldBe("north-1", "the refused moves changed nothing");

        using (var moved = await ops.PostAsJsonAsync($"/api/devices/{wrist1}/move", new { hub = "south-1" }, Ct))
        {
            moved.StatusCode.ShouldBe(HttpStatusCode.OK);
            (await moved.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("hub").GetString().ShouldBe("south-1");
        }

        // Moved to the south building: south-1 may send for it now, north-1 may not.
        await SendAsync("south-1", "wrist-1", "biosensor", Reading(74));
        await SendAsync("north-1", "wrist-1", "biosensor", Reading(75));
        (await HeartRatesAsync(store, wrist1)).ShouldBe([70, 71, 74]);
        var newest = (await store.ReadDeadLettersAsync(1, Ct)).ShouldHaveSingleItem();
        (newest.Reason, newest.Topic).ShouldBe((DeadLetterReasons.DeviceOfAnotherSite, "saito/north-1/wrist-1/biosensor"));

        // Another Saito sharing the database moved wrist-3: this one reads the hub again before refusing.
        await SendAsync("north-1", "wrist-3", "biosensor", Reading(90));
        await using (var db = server.OpenRegistry())
        {
            (await db.Devices.Where(d => d.Serial == "wrist-3").ExecuteUpdateAsync(s => s.SetProperty(d => d.Hub, "south-1"), Ct)).ShouldBe(1);
        }

        await SendAsync("south-1", "wrist-3", "biosensor", Reading(91));
        await SendAsync("north-1", "wrist-3", "biosensor", Reading(92)); // refused now: the reread bound it to south-1
        (await HeartRatesAsync(store, (await store.LoadDevicesAsync(Ct))["wrist-3"])).ShouldBe([90, 91]);

        // Moved back to north-1 through another Saito: a hello through south-1, its hub as this one knows it, must not
        // undo that. The hub is read again before every hello, whatever the interval.
        await using (var db = server.OpenRegistry())
        {
            (await db.Devices.Where(d => d.Serial == "wrist-3").ExecuteUpdateAsync(s => s.SetProperty(d => d.Hub, "north-1"), Ct)).ShouldBe(1);
        }

        await SendAsync("south-1", "wrist-3", "hello", """{"kind":"biosensor","firmware":"6.6.6"}""");
        (await store.LoadDeviceHubsAsync("wrist-3", Ct))["wrist-3"].ShouldBe("north-1");
        newest = (await store.ReadDeadLettersAsync(1, Ct)).ShouldHaveSingleItem();
        (newest.Reason, newest.Topic).ShouldBe((DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/wrist-3/hello"));

        // A fingerprint reader is a device too: bound to the hub its first recorded check-in came through.
        using var admin = await server.AsAsync("admin");
        using var created = await admin.PostAsJsonAsync("/api/owners", new { kind = "student", displayName = "Ana" }, Ct);
        int ana = (await created.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("id").GetInt32();
        await SendAsync("north-1", "fp-1", "checkin", $$"""{"owner":{{ana}}}""");
        await SendAsync("south-1", "fp-1", "checkin", $$"""{"owner":{{ana}},"action":"out"}""");
        newest = (await store.ReadDeadLettersAsync(1, Ct)).ShouldHaveSingleItem();
        (newest.Reason, newest.Topic).ShouldBe((DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/fp-1/checkin"));
        (await store.ReadDeadLettersAsync(10, Ct)).Count.ShouldBe(7);
        var arrival = (await teacher.GetFromJsonAsync<JsonElement>("/api/check-ins", Ct)).GetProperty("items").EnumerateArray().ShouldHaveSingleItem();
        arrival.GetProperty("checkedOutAt").ValueKind.ShouldBe(JsonValueKind.Null, "south-1's check-out was not recorded");

        // Devices another Saito sharing the database registered through north-1, unknown to this one: a hub of another
        // site may not send for them either, and its hello does not rebind them.
        await using (var db = server.OpenRegistry())
        {
            foreach (string serial in (string[])["wrist-5", "wrist-6", "fp-2"])
            {
                db.Devices.Add(new Saito.Registry.Model.Device { Serial = serial, Hub = "north-1", FirstSeen = DateTimeOffset.UtcNow });
            }

            await db.SaveChangesAsync(Ct);
        }

        await SendAsync("south-1", "wrist-5", "biosensor", Reading(50));
        await SendAsync("south-1", "wrist-6", "hello", """{"kind":"biosensor","firmware":"6.6.6"}""");
        await SendAsync("south-1", "fp-2", "checkin", $$"""{"owner":{{ana}}}""");
        var others = (await store.ReadDeadLettersAsync(3, Ct)).Select(l => (l.Reason, l.Topic)).ToList();
        others.ShouldBe(
        [
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/fp-2/checkin"),
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/wrist-6/hello"),
            (DeadLetterReasons.DeviceOfAnotherSite, "saito/south-1/wrist-5/biosensor"),
        ]);
        ids = await store.LoadDevicesAsync(Ct);
        (await HeartRatesAsync(store, ids["wrist-5"])).ShouldBeEmpty();
        (await store.LoadDeviceHubsAsync("wrist-6", Ct))["wrist-6"].ShouldBe("north-1");

        // A hub forging many messages for a device of another site costs one reread of its hub, not one per message.
        await SendAsync("north-1", "wrist-4", "biosensor", Reading(60));
        var hubs = server.Services.GetRequiredService<Saito.Ingestion.Pipeline.DeviceHubs>();
        long rereads = hubs.HubRereads;
        var forged = Enumerable.Range(0, 50).Select(i => Reading(100 + i)).ToList();
        var (exitCode, output) = await ExternalCommand.RunAsync(ExternalClientSettings.MosquittoPub,
            ["-h", "127.0.0.1", "-p", server.Port.ToString(CultureInfo.InvariantCulture), "-u", "south-1", "-P", secrets["south-1"], "-q", "1", "-t", "saito/south-1/wrist-4/biosensor", "-l"],
            TimeSpan.FromSeconds(60), Ct, string.Join('\n', forged) + "\n");
        exitCode.ShouldBe(0, output);
        (await store.ReadDeadLettersAsync(100, Ct)).Count(l => l.Topic == "saito/south-1/wrist-4/biosensor").ShouldBe(50);
        hubs.HubRereads.ShouldBe(rereads + 1);
        (await HeartRatesAsync(store, (await store.LoadDevicesAsync(Ct))["wrist-4"])).ShouldBe([60]);
    }

    [Theory]
    [InlineData(StorageProvider.Sqlite)]
    [InlineData(StorageProvider.Postgres)]
    public async Task A_move_made_through_another_instance_refuses_the_old_site_s_hub_within_the_recheck_interval(StorageProvider provider)
    {
        await using var server = await SaitoHost.StartAsync(provider, postgres, ["Mqtt:AllowAnonymous=false", "Ingestion:DeviceHubRecheckSeconds=1"]);
        string north = Cli(server.CredentialsFile, "hubs", "add", "north-1", "--site", "north");
        Cli(server.CredentialsFile, "hubs", "add", "south-1", "--site", "south");
        await PublishAsync(server, "north-1", north, "saito/north-1/wrist-7/biosensor", Reading(70));

        // Another Saito sharing the database moved wrist-7 to south-1. Only north-1 sends through this one, so no refusal
        // makes it read the hub again; the periodic read of every device's hub does.
        await using (var db = server.OpenRegistry())
        {
            (await db.Devices.Where(d => d.Serial == "wrist-7").ExecuteUpdateAsync(s => s.SetProperty(d => d.Hub, "south-1"), Ct)).ShouldBe(1);
        }

        var store = server.Services.GetRequiredService<IReadingStore>();
        var hubs = server.Services.GetRequiredService<Saito.Ingestion.Pipeline.DeviceHubs>();
        var waited = System.Diagnostics.Stopwatch.StartNew();
        int sent = 0;
        while (true)
        {
            await PublishAsync(server, "north-1", north, "saito/north-1/wrist-7/biosensor", Reading(60 + (sent++ % 100)));
            if ((await store.ReadDeadLettersAsync(1, Ct)).SingleOrDefault() is { } letter)
            {
                (letter.Reason, letter.Topic).ShouldBe((DeadLetterReasons.DeviceOfAnotherSite, "saito/north-1/wrist-7/biosensor"));
                break;
            }

            waited.Elapsed.ShouldBeLessThan(TimeSpan.FromSeconds(60), $"north-1 was still taken for wrist-7 after {sent} messages");
        }

        hubs.HubRefreshes.ShouldBeGreaterThan(0);
        hubs.HubOf("wrist-7").ShouldBe("south-1");
        (await HeartRatesAsync(store, (await store.LoadDevicesAsync(Ct))["wrist-7"])).Length.ShouldBe(sent, "every message before the refused one was stored");
    }

    [Fact]
    public void Hubs_site_sets_shows_and_clears_a_hub_s_site_and_refuses_a_bad_one_and_remove_keeps_a_hub_of_a_site_without_force()
    {
        string folder = Directory.CreateTempSubdirectory("saito-sites-").FullName;
        try
        {
            string file = Path.Combine(folder, "credentials.json");
            Cli(file, "hubs", "add", "hub-1");
            Cli(file, "hubs", "add", "hub-2", "--site", "east");
            Cli(file, "hubs", "site", "hub-1", "west");
            Sites(file).ShouldBe(new Dictionary<string, string?> { ["hub-1"] = "west", ["hub-2"] = "east" });
            Run(file, "hubs", "list").Output.ShouldContain("west");
            Cli(file, "hubs", "site", "hub-2", "--none");
            Sites(file).ShouldBe(new Dictionary<string, string?> { ["hub-1"] = "west", ["hub-2"] = null });

            var bad = Run(file, "hubs", "site", "hub-1", "west/wing");
            bad.ExitCode.ShouldBe(1);
            bad.Error.ShouldContain("'west/wing' is not a valid site");
            var neither = Run(file, "hubs", "site", "hub-1");
            neither.ExitCode.ShouldBe(1);
            neither.Error.ShouldContain("Give a site");
            var unknown = Run(file, "hubs", "site", "hub-9", "west");
            unknown.ExitCode.ShouldBe(1);
            unknown.Error.ShouldContain("No hub named hub-9");
            Run(file, "hubs", "add", "hub-3", "--site", "a b").ExitCode.ShouldBe(1);
            Sites(file).ShouldBe(new Dictionary<string, string?> { ["hub-1"] = "west", ["hub-2"] = null }, "nothing changed by the refused commands");

            // A hub of a site is not removed without --force: its devices would belong to no site (disable keeps it).
            var kept = Run(file, "hubs", "remove", "hub-1");
            kept.ExitCode.ShouldBe(1);
            kept.Error.ShouldContain("Hub hub-1 is of site west");
            kept.Error.ShouldContain("saito hubs disable hub-1");
            Run(file, "clients", "remove", "hub-1").ExitCode.ShouldBe(1, "nor through the clients command");
            Sites(file).ShouldContainKey("hub-1");
            Cli(file, "hubs", "remove", "hub-2"); // no site: removed as before
            Cli(file, "hubs", "remove", "hub-1", "--force");
            Sites(file).ShouldBeEmpty();
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    [Fact]
    public async Task The_hubs_api_adds_shows_sets_and_clears_a_hub_s_site_and_keeps_a_hub_of_a_site_unless_forced()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, postgres, ["Mqtt:AllowAnonymous=false"]);
        using var ops = await server.AsAsync("ops");
        using var teacher = await server.AsAsync("teacher");
        var north = new { name = "north-1", site = "north" };

        // Hubs are for admin and ops (ApiAccessTests tries every route as every role); a teacher changes nothing.
        using (var refused = await teacher.PostAsJsonAsync("/api/hubs", north, Ct))
        {
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        }

        using (var refused = await teacher.PutAsJsonAsync("/api/hubs/north-1/site", new { site = "south" }, Ct))
        {
            refused.StatusCode.ShouldBe(HttpStatusCode.Forbidden);
        }

        using (var added = await ops.PostAsJsonAsync("/api/hubs", north, Ct))
        {
            added.StatusCode.ShouldBe(HttpStatusCode.Created);
            var body = await added.Content.ReadFromJsonAsync<JsonElement>(Ct);
            body.GetProperty("hub").GetProperty("site").GetString().ShouldBe("north");
            body.GetProperty("secret").GetString().ShouldNotBeNullOrEmpty();
        }

        using (var added = await ops.PostAsJsonAsync("/api/hubs", new { name = "lone" }, Ct))
        {
            added.StatusCode.ShouldBe(HttpStatusCode.Created);
            (await added.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("hub").GetProperty("site").ValueKind.ShouldBe(JsonValueKind.Null);
        }

        using (var bad = await ops.PostAsJsonAsync("/api/hubs", new { name = "east-1", site = "east wing" }, Ct))
        {
            bad.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
            (await bad.Content.ReadAsStringAsync(Ct)).ShouldContain("a site is 1 to 64 letters");
        }

        Sites(server.CredentialsFile).ShouldBe(new Dictionary<string, string?> { ["north-1"] = "north", ["lone"] = null });
        var listed = await ops.GetFromJsonAsync<JsonElement[]>("/api/hubs", Ct);
        listed!.Select(h => (h.GetProperty("name").GetString(), h.GetProperty("site").GetString())).ShouldBe([("lone", null), ("north-1", "north")]);

        using (var set = await ops.PutAsJsonAsync("/api/hubs/lone/site", new { site = "south" }, Ct))
        {
            set.StatusCode.ShouldBe(HttpStatusCode.OK);
            (await set.Content.ReadFromJsonAsync<JsonElement>(Ct)).GetProperty("site").GetString().ShouldBe("south");
        }

        using (var bad = await ops.PutAsJsonAsync("/api/hubs/lone/site", new { site = "south/2" }, Ct))
        {
            bad.StatusCode.ShouldBe(HttpStatusCode.BadRequest);
        }

        using (var missing = await ops.PutAsJsonAsync("/api/hubs/ghost-9/site", new { site = "south" }, Ct))
        {
            missing.StatusCode.ShouldBe(HttpStatusCode.NotFound);
        }

        Sites(server.CredentialsFile).ShouldBe(new Dictionary<string, string?> { ["north-1"] = "north", ["lone"] = "south" });
        using (var cleared = await ops.PutAsJsonAsync("/api/hubs/north-1/site", new { site = (string?)null }, Ct))
        {
            cleared.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        Sites(server.CredentialsFile).ShouldBe(new Dictionary<string, string?> { ["north-1"] = null, ["lone"] = "south" });

        // A hub of a site stays unless forced: removed, its devices would belong to no site and roam to every hub.
        using (var kept = await ops.DeleteAsync("/api/hubs/lone", Ct))
        {
            kept.StatusCode.ShouldBe(HttpStatusCode.Conflict);
            string detail = await kept.Content.ReadAsStringAsync(Ct);
            detail.ShouldContain("Hub lone is of site south");
            detail.ShouldContain("POST /api/hubs/lone/disable");
        }

        Sites(server.CredentialsFile).ShouldContainKey("lone");
        using (var removed = await ops.DeleteAsync("/api/hubs/north-1", Ct))
        {
            removed.StatusCode.ShouldBe(HttpStatusCode.NoContent, "a hub of no site goes as before");
        }

        using (var forced = await ops.DeleteAsync("/api/hubs/lone?force=true", Ct))
        {
            forced.StatusCode.ShouldBe(HttpStatusCode.NoContent);
        }

        Sites(server.CredentialsFile).ShouldBeEmpty();
    }

    [Fact]
    public async Task A_refused_change_through_the_hubs_api_leaves_the_credentials_file_as_it_was()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, postgres, ["Mqtt:AllowAnonymous=false"]);
        using var ops = await server.AsAsync("ops");
        Cli(server.CredentialsFile, "hubs", "add", "north-1", "--site", "north");
        string content = File.ReadAllText(server.CredentialsFile);

        // Saving writes a new file and moves it over the old one, so any save gives the file a time of now.
        var longAgo = new DateTime(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        File.SetLastWriteTimeUtc(server.CredentialsFile, longAgo);
        var refusals = new (Func<Task<HttpResponseMessage>> Call, HttpStatusCode Status)[]
        {
            (() => ops.DeleteAsync("/api/hubs/north-1", Ct), HttpStatusCode.Conflict),
            (() => ops.PostAsJsonAsync("/api/hubs", new { name = "north-1" }, Ct), HttpStatusCode.Conflict),
            (() => ops.PutAsJsonAsync("/api/hubs/ghost-9/site", new { site = "south" }, Ct), HttpStatusCode.NotFound),
            (() => ops.PostAsync("/api/hubs/ghost-9/rotate", null, Ct), HttpStatusCode.NotFound),
            (() => ops.DeleteAsync("/api/hubs/ghost-9?force=true", Ct), HttpStatusCode.NotFound),
            (() => ops.PutAsJsonAsync("/api/hubs/north-1/site", new { site = "north" }, Ct), HttpStatusCode.OK), // no change
        };

        foreach (var (call, status) in refusals)
        {
            using var response = await call();
            response.StatusCode.ShouldBe(status);
        }

        File.GetLastWriteTimeUtc(server.CredentialsFile).ShouldBe(longAgo, "nothing changed, so nothing was saved");
        File.ReadAllText(server.CredentialsFile).ShouldBe(content);

        using (var moved = await ops.PutAsJsonAsync("/api/hubs/north-1/site", new { site = "south" }, Ct))
        {
            moved.StatusCode.ShouldBe(HttpStatusCode.OK);
        }

        File.GetLastWriteTimeUtc(server.CredentialsFile).ShouldBeGreaterThan(longAgo, "a change is saved");
        Sites(server.CredentialsFile).ShouldBe(new Dictionary<string, string?> { ["north-1"] = "south" });
    }

    private static Dictionary<string, string?> Sites(string file) =>
        new CredentialStore(file).Load().ToDictionary(c => c.Name, c => c.Site, StringComparer.Ordinal);

    private static (int ExitCode, string Output, string Error) Run(string file, params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        var configuration = new ConfigurationBuilder().AddInMemoryCollection([new("Security:CredentialsFile", file)]).Build();
        int rc = CredentialsCli.Run(args, configuration, output, error);
        return (rc, output.ToString(), error.ToString());
    }

    /// <summary>Runs <c>saito hubs ...</c> as the command line does and returns the secret it printed.</summary>
    private static string Cli(string file, params string[] args)
    {
        var (rc, output, error) = Run(file, args);
        rc.ShouldBe(0, error);
        return output.Split('\n').FirstOrDefault(l => l.StartsWith("Secret", StringComparison.Ordinal))?.Split(": ", 2)[1].Trim() ?? string.Empty;
    }

    /// <summary>A reading 100 ms after the previous one, so that no two share a key (and hundreds stay in the past).</summary>
    private string Reading(int heartRate) =>
        $$"""{"ts":"{{_start.AddMilliseconds(100 * ++_second).ToString("O", CultureInfo.InvariantCulture)}}","hr":{{heartRate}}}""";

    private static async Task<double[]> HeartRatesAsync(IReadingStore store, int deviceId) =>
        [.. (await store.ReadAsync(ReadingKind.Biosensor, StorageTier.Hot, deviceId, Ct)).Select(r => r.HeartRate ?? double.NaN)];

    /// <summary>
    /// One QoS 1 PUBLISH by mosquitto_pub with the hub's name and secret; it exits once Saito acknowledged it, that is
    /// once its readings or its dead letter are committed.
    /// </summary>
    private static async Task PublishAsync(SaitoHost server, string hub, string secret, string topic, string payload)
    {
        var (exitCode, output) = await ExternalCommand.RunAsync(ExternalClientSettings.MosquittoPub,
            ["-h", "127.0.0.1", "-p", server.Port.ToString(CultureInfo.InvariantCulture), "-u", hub, "-P", secret, "-q", "1", "-t", topic, "-m", payload],
            TimeSpan.FromSeconds(30), Ct);
        exitCode.ShouldBe(0, $"mosquitto_pub {topic}: {output}");
    }
}

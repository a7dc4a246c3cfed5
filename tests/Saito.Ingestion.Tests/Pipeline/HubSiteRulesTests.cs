using Saito.Ingestion.Pipeline;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Payloads;
using Saito.Storage;

namespace Saito.Ingestion.Tests.Pipeline;

/// <summary>
/// <see cref="HubSiteRules"/> (docs/security.md) without a broker: which hub may send for which device, when a device's
/// hub is read again from the database before judging, and what a move by staff may do. Devices are registered in a
/// real SQLite store; "another Saito sharing the database" is a second registry on the same file. The end-to-end
/// behaviour, with real hubs, is in Saito.Server.Tests' HubSiteTests.
/// </summary>
public sealed class HubSiteRulesTests : IAsyncLifetime
{
    private readonly List<IAsyncDisposable> _owned = [];
    private readonly ListedHubSites _sites = new()
    {
        ["north-1"] = "north",
        ["north-2"] = "north",
        ["south-1"] = "south",
        ["lone"] = null,
    };

    private SqliteDeviceStore _db = null!;
    private DeviceHubs _hubs = null!;
    private DeviceRegistry _registry = null!;
    private HubSiteRules _rules = null!;

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    public async ValueTask InitializeAsync()
    {
        _db = await SqliteDeviceStore.CreateAsync(new StorageOptions(), Ct);
        (_hubs, _registry) = SaitoInstance();
        _rules = new HubSiteRules(_hubs, _sites);
    }

    [Fact]
    public void A_hub_of_the_device_s_site_may_send_for_it_and_a_hub_of_another_site_or_of_none_may_not()
    {
        HubSiteRules.Refusal(_sites, Topic("north-1", "wrist-1"), "north-1").ShouldBeNull();
        HubSiteRules.Refusal(_sites, Topic("north-2", "wrist-1"), "north-1").ShouldBeNull("the same site: the band roams");
        HubSiteRules.Refusal(_sites, Topic("south-1", "wrist-1"), "north-1")
            .ShouldStartWith("device wrist-1 belongs to hub north-1 of site north; hub south-1 is of site south, so it may not send for it");
        HubSiteRules.Refusal(_sites, Topic("lone", "wrist-1"), "north-1").ShouldNotBeNull().ShouldContain("hub lone is of no site");
        HubSiteRules.Refusal(_sites, Topic("ghost-9", "wrist-1"), "north-1").ShouldNotBeNull("a hub Saito does not know has no site")
            .ShouldContain("hub ghost-9 is of no site");
    }

    [Fact]
    public async Task A_device_bound_to_a_hub_of_no_site_takes_messages_from_every_hub()
    {
        await RegisterAsync(_registry, "wrist-2", "lone");

        HubSiteRules.Refusal(_sites, Topic("south-1", "wrist-2"), "lone").ShouldBeNull();
        (await _rules.GateAsync(Topic("south-1", "wrist-2"), known: true, Ct)).ShouldBeNull();
        (await _rules.GateAsync(Topic("north-1", "wrist-2", TopicKind.Hello), known: true, Ct)).ShouldBeNull();
    }

    [Fact]
    public async Task A_known_device_s_message_from_another_site_is_refused_and_its_hub_is_read_once_for_many()
    {
        await RegisterAsync(_registry, "wrist-1", "north-1");

        (await _rules.GateAsync(Topic("north-2", "wrist-1"), known: true, Ct)).ShouldBeNull();
        _hubs.HubRereads.ShouldBe(0, "a hub of its own site costs nothing");
        for (int i = 0; i < 5; i++)
        {
            (await _rules.GateAsync(Topic("south-1", "wrist-1"), known: true, Ct)).ShouldNotBeNull().ShouldContain("belongs to hub north-1 of site north");
        }

        _hubs.HubRereads.ShouldBe(1, "read again before the first refusal, then not within Ingestion:DeviceHubRecheckSeconds");
    }

    [Fact]
    public async Task A_device_moved_through_another_saito_is_taken_from_its_new_site_after_its_hub_is_read_again()
    {
        await RegisterAsync(_registry, "wrist-3", "north-1");
        await ExecuteAsync("UPDATE device SET hub = 'south-1' WHERE serial = 'wrist-3'");

        (await _rules.GateAsync(Topic("south-1", "wrist-3"), known: true, Ct)).ShouldBeNull();
        _hubs.HubOf("wrist-3").ShouldBe("south-1");
        (await _rules.GateAsync(Topic("north-1", "wrist-3"), known: true, Ct)).ShouldNotBeNull().ShouldContain("belongs to hub south-1 of site south");
    }

    [Fact]
    public async Task A_known_device_s_hello_is_judged_on_the_hub_the_database_has_now()
    {
        await RegisterAsync(_registry, "wrist-4", "south-1");
        (await _rules.GateAsync(Topic("north-1", "wrist-4"), known: true, Ct)).ShouldNotBeNull(); // its hub read again just now
        await ExecuteAsync("UPDATE device SET hub = 'north-1' WHERE serial = 'wrist-4'"); // then moved through another Saito

        (await _rules.GateAsync(Topic("south-1", "wrist-4"), known: true, Ct)).ShouldBeNull("a reading from the hub known here is not read again");
        _hubs.HubRereads.ShouldBe(1);
        (await _rules.GateAsync(Topic("south-1", "wrist-4", TopicKind.Hello), known: true, Ct))
            .ShouldNotBeNull("its hello would bind it back to south-1").ShouldContain("belongs to hub north-1 of site north");
    }

    [Fact]
    public async Task A_device_new_here_is_judged_once_registered_but_a_reader_s_check_in_at_once()
    {
        var (otherHubs, other) = SaitoInstance(); // another Saito sharing the database registered both through north-1
        await RegisterAsync(other, "wrist-5", "north-1");
        await RegisterAsync(other, "fp-2", "north-1");

        (await _rules.GateAsync(Topic("south-1", "wrist-5"), known: false, Ct)).ShouldBeNull("judged after registration");
        (await _rules.GateAsync(Topic("south-1", "fp-2", TopicKind.CheckIn), known: false, Ct)).ShouldNotBeNull().ShouldContain("belongs to hub north-1");
        _rules.RegistersBeforeHello(known: false).ShouldBeTrue();
        _rules.RegistersBeforeHello(known: true).ShouldBeFalse();

        // Registered here now (found in the database, bound to north-1): judged as a known device.
        await RegisterAsync(_registry, "wrist-5", "south-1");
        (await _rules.OtherSiteAsync(Topic("south-1", "wrist-5"), Ct)).ShouldNotBeNull().ShouldContain("belongs to hub north-1");
        otherHubs.HubOf("wrist-5").ShouldBe("north-1");
    }

    [Fact]
    public async Task Without_a_site_nothing_is_refused_and_nothing_is_read_again()
    {
        await RegisterAsync(_registry, "wrist-6", "north-1");
        var noSites = new ListedHubSites { ["north-1"] = null, ["south-1"] = null };

        foreach (var rules in (HubSiteRules[])[new HubSiteRules(_hubs, noSites), new HubSiteRules(_hubs)])
        {
            rules.InUse.ShouldBeFalse();
            (await rules.GateAsync(Topic("south-1", "wrist-6"), known: true, Ct)).ShouldBeNull();
            (await rules.GateAsync(Topic("south-1", "wrist-6", TopicKind.Hello), known: true, Ct)).ShouldBeNull();
            (await rules.GateAsync(Topic("south-1", "fp-9", TopicKind.CheckIn), known: false, Ct)).ShouldBeNull();
            rules.RegistersBeforeHello(known: false).ShouldBeFalse();
            rules.MoveRefusal("ghost-9").ShouldBeNull("no site to leave: any hub will do");
        }

        _hubs.HubRereads.ShouldBe(0);
    }

    [Fact]
    public async Task Staff_move_a_device_only_to_a_hub_saito_knows_and_the_move_counts_here_at_once()
    {
        await RegisterAsync(_registry, "wrist-7", "north-1");

        _rules.MoveRefusal("ghost-9").ShouldNotBeNull().ShouldStartWith("There is no hub named ghost-9 in the credentials file");
        _rules.MoveRefusal("south-1").ShouldBeNull();

        // As the API does: the move is committed, then told to the rules.
        await ExecuteAsync("UPDATE device SET hub = 'south-1' WHERE serial = 'wrist-7'");
        _rules.Moved("wrist-7", "south-1");

        (await _rules.GateAsync(Topic("south-1", "wrist-7"), known: true, Ct)).ShouldBeNull();
        _hubs.HubRereads.ShouldBe(0, "taken without reading the hub again");
        (await _rules.GateAsync(Topic("north-1", "wrist-7"), known: true, Ct)).ShouldNotBeNull().ShouldContain("belongs to hub south-1 of site south");
    }

    private static SaitoTopic Topic(string hub, string device, TopicKind kind = TopicKind.Biosensor) => new(hub, device, kind);

    /// <summary>A device registry and its hubs on the test's database, as one Saito has them.</summary>
    private (DeviceHubs Hubs, DeviceRegistry Registry) SaitoInstance()
    {
        var hubs = _db.NewHubs(recheckSeconds: 600);
        var registry = new DeviceRegistry(_db.Store, _db.Resilience, new NewDeviceLimiter(1000, TimeProvider.System), hubs);
        _owned.Add(registry);
        _owned.Add(hubs);
        return (hubs, registry);
    }

    private static async Task RegisterAsync(DeviceRegistry registry, string serial, string hub) =>
        (await registry.GetIdAsync(serial, hub, Ct)).ShouldNotBeNull();

    private async Task ExecuteAsync(string sql) => (await _db.ExecuteAsync(sql, Ct)).ShouldBe(1);

    public async ValueTask DisposeAsync()
    {
        foreach (var owned in _owned)
        {
            await owned.DisposeAsync();
        }

        await _db.DisposeAsync();
    }
}

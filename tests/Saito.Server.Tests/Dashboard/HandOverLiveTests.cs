using Saito.Server.Tests.Infrastructure;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// Issue 32, item 1, on the live path: a wristband handed over just now, whose hub then delivers a reading taken before
/// (it was catching up), must not show the previous wearer's vitals on the new owner's tile.
/// </summary>
public sealed class HandOverLiveTests
{
    [Fact]
    public async Task A_reading_taken_before_a_hand_over_never_shows_on_the_new_owner_s_tile()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        int ada = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ada" });
        int classId = await Rosters.ListOnClassAsync(admin, [teacher], ada);
        int band = await CreateAsync(admin, "/api/devices", new { serial = "wrist-handed", kind = "wristband" });
        var from = DateTimeOffset.UtcNow;
        await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = ada, from });
        using var socket = await LiveHubLimitsTests.WatchingAsync(server, await server.CookieAsync("teacher"), classId);

        // Taken a minute before the hand-over (the previous wearer's), delivered now; then one of Ada's.
        await PublishAsync(server, "saito/hub-1/wrist-handed/biosensor", $$"""{"ts":"{{Ts(from.AddMinutes(-1))}}","hr":143}""");
        await PublishAsync(server, "saito/hub-1/wrist-handed/biosensor", $$"""{"ts":"{{Ts(from.AddSeconds(1))}}","hr":77}""");

        string pushes = await BloodPressureTimeTests.ReadUntilAsync(socket, "\"heartRate\":77");
        pushes.ShouldNotContain("\"heartRate\":143");
    }
}

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

    [Fact]
    public async Task A_wristband_handed_to_another_student_leaves_the_first_student_s_tile_at_once()
    {
        // The live view rereads the registry every minute here: a tile cleared within 10 s was cleared by the hand-over itself.
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Dashboard:RefreshSeconds=60"]);
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        int ada = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ada" });
        int basil = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Basil" });
        int classId = await Rosters.ListOnClassAsync(admin, [teacher], ada, basil);
        int band = await CreateAsync(admin, "/api/devices", new { serial = "wrist-moved", kind = "wristband" });
        await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = ada, from = DateTimeOffset.UtcNow.AddMinutes(-5) });
        using var socket = await LiveHubLimitsTests.WatchingAsync(server, await server.CookieAsync("teacher"), classId);
        await PublishAsync(server, "saito/hub-1/wrist-moved/biosensor", $$"""{"ts":"{{Ts(DateTimeOffset.UtcNow)}}","hr":77}""");
        await TileAsync(socket, ada, t => t.GetProperty("heartRate").ValueKind == JsonValueKind.Number, TimeSpan.FromSeconds(30));

        // Assigning a device someone has ends their assignment: the wristband is Basil's from now on.
        await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = basil });

        var cleared = await TileAsync(socket, ada, t => t.GetProperty("heartRate").ValueKind == JsonValueKind.Null, TimeSpan.FromSeconds(10));
        cleared.GetProperty("devices").GetArrayLength().ShouldBe(0);
        cleared.GetProperty("vitalsAt").ValueKind.ShouldBe(JsonValueKind.Null);
    }

    /// <summary>The first tile of <paramref name="owner"/> pushed to the socket that meets <paramref name="condition"/> (SignalR's JSON frames end with 0x1E).</summary>
    private static async Task<JsonElement> TileAsync(System.Net.WebSockets.ClientWebSocket socket, int owner, Func<JsonElement, bool> condition, TimeSpan within)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        timeout.CancelAfter(within);
        var buffer = new byte[64 * 1024];
        string pending = "";
        while (true)
        {
            System.Net.WebSockets.WebSocketReceiveResult result;
            try
            {
                result = await socket.ReceiveAsync(buffer, timeout.Token);
            }
            catch (OperationCanceledException) when (timeout.IsCancellationRequested && !TestContext.Current.CancellationToken.IsCancellationRequested)
            {
                throw new ShouldAssertException($"No tile of owner {owner} as expected was pushed within {within.TotalSeconds:0} s.");
            }

            pending += System.Text.Encoding.UTF8.GetString(buffer, 0, result.Count);
            int end;
            while ((end = pending.IndexOf('\u001e', StringComparison.Ordinal)) >= 0)
            {
                string frame = pending[..end];
                pending = pending[(end + 1)..];
                using var message = JsonDocument.Parse(frame);
                if (message.RootElement.TryGetProperty("target", out var target) && target.GetString() == "tiles")
                {
                    foreach (var tile in message.RootElement.GetProperty("arguments")[0].EnumerateArray())
                    {
                        if (tile.GetProperty("ownerId").GetInt32() == owner && condition(tile))
                        {
                            return tile.Clone();
                        }
                    }
                }
            }
        }
    }
}

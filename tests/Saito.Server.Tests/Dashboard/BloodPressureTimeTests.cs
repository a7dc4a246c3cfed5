using Saito.Server.Tests.Infrastructure;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// Issue 32, item 9: an aide (who does not see blood pressure) learns nothing of when it was measured: a reading
/// carrying only blood pressure moves neither the tile's "vitals at" nor a device's last reading for them, in the
/// tiles the live hub answers on Watch and in its pushes (the model's side: Saito.Live.Tests' TileVitalsTests).
/// </summary>
public sealed class BloodPressureTimeTests
{
    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public async Task The_live_hub_never_tells_an_aide_when_blood_pressure_was_taken()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null);
        using var admin = await server.AsAsync("admin");
        using var teacher = await server.AsAsync("teacher");
        using var aide = await server.AsAsync("aide");
        int ada = await CreateAsync(admin, "/api/owners", new { kind = "student", displayName = "Ada" });
        int classId = await Rosters.ListOnClassAsync(admin, [teacher, aide], ada);
        int band = await CreateAsync(admin, "/api/devices", new { serial = "wrist-ada", kind = "wristband" });
        await CreateAsync(admin, "/api/assignments", new { deviceId = band, ownerId = ada, from = DateTimeOffset.UtcNow.AddMinutes(-10) });

        // Whole milliseconds without trailing zeros, so a time reads the same in the hub's JSON as in the reading's ts.
        var now = DateTimeOffset.UtcNow;
        var t1 = new DateTimeOffset(now.Year, now.Month, now.Day, now.Hour, now.Minute, now.Second, 123, TimeSpan.Zero).AddSeconds(-30);
        await PublishAsync(server, "saito/hub-1/wrist-ada/biosensor", $$"""{"ts":"{{Ts(t1)}}","hr":81}""");
        using var teacherSocket = await LiveHubLimitsTests.WatchingAsync(server, await server.CookieAsync("teacher"), classId);
        using var aideSocket = await LiveHubLimitsTests.WatchingAsync(server, await server.CookieAsync("aide"), classId);
        await EventuallyAsync(async () => VitalsAt(await WatchAsync(aideSocket, classId)) == Ts(t1) ? true : (bool?)null);

        // Blood pressure alone: the teacher's tile moves to its time; the aide's stays, on Watch and in pushes.
        var t2 = t1.AddSeconds(10);
        await PublishAsync(server, "saito/hub-1/wrist-ada/biosensor", $$"""{"ts":"{{Ts(t2)}}","sys":119,"dia":77}""");
        await LiveHubLimitsTests.ReadMessageAsync(teacherSocket, $"\"vitalsAt\":\"{Iso(t2)}");
        using (var another = await LiveHubLimitsTests.WatchingAsync(server, await server.CookieAsync("aide"), classId))
        {
            VitalsAt(await WatchAsync(another, classId)).ShouldBe(Ts(t1));
        }

        // A heart rate after it: the aide's next push is that one, and nothing before it spoke of the blood pressure.
        var t3 = t2.AddSeconds(10);
        await PublishAsync(server, "saito/hub-1/wrist-ada/biosensor", $$"""{"ts":"{{Ts(t3)}}","hr":84}""");
        string pushes = await ReadUntilAsync(aideSocket, $"\"vitalsAt\":\"{Iso(t3)}");
        pushes.ShouldNotContain(Iso(t2));
        pushes.ShouldNotContain("\"systolic\":119");
    }

    private static async Task<string> WatchAsync(System.Net.WebSockets.ClientWebSocket socket, int classId)
    {
        string id = Guid.NewGuid().ToString("N");
        await LiveHubLimitsTests.SendAsync(socket, $$"""{"type":1,"invocationId":"{{id}}","target":"Watch","arguments":[{{classId}}]}""");
        return await LiveHubLimitsTests.ReadMessageAsync(socket, $"\"invocationId\":\"{id}\"");
    }

    /// <summary>The "vitals at" of the only tile in a Watch answer, as <see cref="Ts"/> writes it.</summary>
    private static string? VitalsAt(string answer)
    {
        var tile = JsonDocument.Parse(answer).RootElement.GetProperty("result").GetProperty("tiles").EnumerateArray().Single();
        return tile.GetProperty("vitalsAt").ValueKind == JsonValueKind.Null ? null : Ts(tile.GetProperty("vitalsAt").GetDateTimeOffset());
    }

    /// <summary>How the hub writes a time in JSON, to the millisecond (what a reading's ts carried).</summary>
    private static string Iso(DateTimeOffset t) => Ts(t)[..23];

    /// <summary>Everything received until a message containing <paramref name="marker"/>, that one included.</summary>
    internal static async Task<string> ReadUntilAsync(System.Net.WebSockets.ClientWebSocket socket, string marker)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(Ct);
        timeout.CancelAfter(TimeSpan.FromSeconds(30));
        var buffer = new byte[64 * 1024];
        var text = new System.Text.StringBuilder();
        while (!text.ToString().Contains(marker, StringComparison.Ordinal))
        {
            var result = await socket.ReceiveAsync(buffer, timeout.Token);
            text.Append(System.Text.Encoding.UTF8.GetString(buffer, 0, result.Count));
        }

        return text.ToString();
    }

    private static async Task EventuallyAsync(Func<Task<bool?>> condition)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (await condition() is null)
        {
            DateTime.UtcNow.ShouldBeLessThan(deadline, "the live view never showed the first reading");
            await Task.Delay(100, Ct);
        }
    }
}

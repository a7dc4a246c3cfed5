using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Saito.Readings;
using Saito.Server.Dashboard;
using static Saito.Server.Tests.Dashboard.DashboardTestSteps;

namespace Saito.Server.Tests.Dashboard;

/// <summary>
/// <see cref="LiveFeed"/>, the writers' side of the live view, against <c>Dashboard:MaxBacklogReadings</c>: a batch that
/// would take the backlog past the bound is skipped and counted, what the live view has consumed makes room again, and
/// a single batch larger than the bound is taken when nothing waits; and through a real Saito, that a publisher
/// outrunning the live view costs the live view readings, never the database.
/// </summary>
public sealed class LiveFeedTests
{
    private static readonly DateTime T0 = new(2026, 3, 2, 9, 0, 0, DateTimeKind.Utc);

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    [Fact]
    public void A_batch_past_the_backlog_bound_is_skipped_and_room_made_by_the_live_view_takes_the_next()
    {
        var feed = Feed(maxBacklog: 1_000);

        feed.OnCommitted(Batch(600));
        feed.Backlog.ShouldBe(600);
        feed.Skipped.ShouldBe(0);

        // 600 waiting + 600 more would be 1,200: skipped whole, and nothing of it queued.
        feed.OnCommitted(Batch(600));
        feed.Backlog.ShouldBe(600);
        feed.Skipped.ShouldBe(600);

        feed.Reader.TryRead(out var first).ShouldBeTrue();
        first.Count.ShouldBe(600);
        feed.Reader.TryRead(out _).ShouldBeFalse("the skipped batch was queued");
        feed.Consumed(first);
        feed.Backlog.ShouldBe(0);

        feed.OnCommitted(Batch(600));
        feed.Backlog.ShouldBe(600);
        feed.Skipped.ShouldBe(600, "the batch after the live view caught up was skipped");
        feed.Reader.TryRead(out var next).ShouldBeTrue();
        next.Count.ShouldBe(600);
        feed.Consumed(next);
    }

    [Fact]
    public void A_batch_that_fills_the_bound_exactly_is_taken()
    {
        var feed = Feed(maxBacklog: 1_000);

        feed.OnCommitted(Batch(400));
        feed.OnCommitted(Batch(600));

        feed.Backlog.ShouldBe(1_000);
        feed.Skipped.ShouldBe(0);
        feed.OnCommitted(Batch(1));
        feed.Skipped.ShouldBe(1);
    }

    [Fact]
    public void A_single_batch_larger_than_the_bound_is_taken_when_nothing_waits_and_skipped_when_something_does()
    {
        // A batch closes after the message that reaches Storage:BatchSize, so one may exceed any bound below it.
        var feed = Feed(maxBacklog: 1_000);

        feed.OnCommitted(Batch(5_000));
        feed.Backlog.ShouldBe(5_000);
        feed.Skipped.ShouldBe(0);

        feed.OnCommitted(Batch(5_000));
        feed.OnCommitted(Batch(1));
        feed.Skipped.ShouldBe(5_001);
        feed.Backlog.ShouldBe(5_000);

        feed.Reader.TryRead(out var big).ShouldBeTrue();
        big.Count.ShouldBe(5_000);
        big.Readings[4_999].DeviceId.ShouldBe(4_999);
        feed.Consumed(big);
        feed.OnCommitted(Batch(5_000));
        feed.Backlog.ShouldBe(5_000);
        feed.Skipped.ShouldBe(5_001);
    }

    [Fact]
    public async Task Readings_published_while_the_live_view_is_behind_are_skipped_by_it_and_stored_all_the_same()
    {
        await using var server = await SaitoHost.StartAsync(StorageProvider.Sqlite, null, ["Dashboard:MaxBacklogReadings=1000"]);
        using var admin = await server.AsAsync("admin");
        var feed = server.Services.GetRequiredService<LiveFeed>();
        // The live view stopped stands for one too slow to keep up, without a race: nothing it is sent is consumed.
        var live = server.Services.GetRequiredService<LiveClassroom>();
        await live.StopAsync(Ct);
        var start = DateTimeOffset.UtcNow.AddMinutes(-40);

        // QoS 1 is acknowledged after the commit, and the feed is told of a commit before its acknowledgement.
        await PublishAsync(server, "saito/hub-1/wrist-flood/biosensor", Readings(start, 0, 600));
        feed.Backlog.ShouldBe(600);
        feed.Skipped.ShouldBe(0);
        await PublishAsync(server, "saito/hub-1/wrist-flood/biosensor", Readings(start, 600, 600));
        feed.Backlog.ShouldBe(600);
        feed.Skipped.ShouldBe(600);
        (await StoredAsync(admin, start)).ShouldBe(1_200);

        // Once the live view has caught up, the next message reaches it.
        await live.StartAsync(Ct);
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (feed.Backlog > 0)
        {
            DateTime.UtcNow.ShouldBeLessThan(deadline, "the live view never took the 600 readings waiting for it");
            await Task.Delay(20, Ct);
        }

        await PublishAsync(server, "saito/hub-1/wrist-flood/biosensor", Readings(start, 1_200, 600));
        feed.Skipped.ShouldBe(600);
        (await StoredAsync(admin, start)).ShouldBe(1_800);
    }

    /// <summary>One JSON message of <paramref name="count"/> heart rates, a second apart from <paramref name="first"/> seconds after <paramref name="start"/>.</summary>
    private static string Readings(DateTimeOffset start, int first, int count) =>
        "[" + string.Join(",", Enumerable.Range(first, count).Select(i => $$"""{"ts":"{{Ts(start.AddSeconds(i))}}","hr":{{60 + (i % 40)}}}""")) + "]";

    /// <summary>The readings stored from the flood's band, counted by the readings API in one bucket.</summary>
    private static async Task<long> StoredAsync(HttpClient admin, DateTimeOffset start)
    {
        var devices = await admin.GetFromJsonAsync<JsonElement>("/api/devices?q=wrist-flood", Ct);
        int band = devices.GetProperty("items")[0].GetProperty("id").GetInt32();
        string range = $"from={Uri.EscapeDataString(start.AddMinutes(-1).ToString("O"))}&to={Uri.EscapeDataString(start.AddHours(1).ToString("O"))}";
        var buckets = await admin.GetFromJsonAsync<JsonElement>($"/api/readings/biosensor/series?deviceId={band}&bucketSeconds=86400&{range}", Ct);
        return buckets.EnumerateArray().Sum(b => b.GetProperty("count").GetInt64());
    }

    private static LiveFeed Feed(int maxBacklog) => new(Options.Create(new DashboardOptions { MaxBacklogReadings = maxBacklog }));

    private static ReadingBatch Batch(int readings)
    {
        var batch = new ReadingBatch();
        for (int i = 0; i < readings; i++)
        {
            batch.Add(new Reading(ReadingKind.Biosensor, i, 0, T0.AddSeconds(i), T0.AddSeconds(i), 70));
        }

        return batch;
    }
}

using Microsoft.Data.Sqlite;
using Saito.Ingestion.Pipeline;
using Saito.Ingestion.Tests.Infrastructure;
using Saito.Readings;
using Saito.Storage;

namespace Saito.Ingestion.Tests.Pipeline;

/// <summary>
/// <see cref="DeviceRegistrar"/> on a real SQLite store: serials asked for together are registered together, a batch
/// that fails for a moment is retried, and one the database refuses costs only the serial at fault. And what
/// <see cref="DeviceHubs"/> knows of each device's hub (hub sites, docs/security.md): of two answers from the
/// database the later question wins, and every hub is read again once per interval.
/// </summary>
public sealed class DeviceRegistrarTests : IAsyncLifetime
{
    private SqliteDeviceStore _db = null!;
    private IReadingStore _store = null!;
    private DeviceRegistrar _registrar = null!;
    private DeviceRegistry _registry = null!;
    private DeviceHubs _hubs = null!;

    private static CancellationToken Ct => TestContext.Current.CancellationToken;

    public async ValueTask InitializeAsync()
    {
        // A one-second busy timeout, so that a file held by another connection fails (transiently) soon.
        _db = await SqliteDeviceStore.CreateAsync(new StorageOptions { CommandTimeoutSeconds = 1 }, Ct);
        _store = _db.Store;
        _registrar = new DeviceRegistrar(_store, _db.Resilience);
        _hubs = _db.NewHubs(recheckSeconds: 1);
        _registry = new DeviceRegistry(_store, _db.Resilience, new NewDeviceLimiter(1000, TimeProvider.System), _hubs);
    }

    [Fact]
    public async Task A_thousand_serials_asked_for_at_once_take_a_few_store_calls_and_each_gets_its_own_id()
    {
        var serials = Enumerable.Range(0, 1000).Select(i => $"wrist-{i:D4}").ToList();

        int[] ids = [.. (await Task.WhenAll(serials.Select(s => _registrar.RegisterAsync(s, null))).WaitAsync(TimeSpan.FromSeconds(60), Ct)).Select(r => r.Id)];

        ids.Distinct().Count().ShouldBe(1000);
        var devices = await _store.LoadDevicesAsync(Ct);
        serials.Select(s => devices[s]).ShouldBe(ids);
        _registrar.Registered.ShouldBe(1000);
        _registrar.StoreCalls.ShouldBeLessThan(20, "the serials that arrive while a batch is written go together in the next");
    }

    [Fact]
    public async Task A_batch_that_fails_while_the_file_is_held_is_retried_and_every_caller_gets_its_id()
    {
        using (var holder = await HoldWriteLockAsync())
        {
            var first = _registrar.RegisterAsync("wrist-first", null);
            await WaitForAsync(() => _registrar.StoreCalls >= 2, "the first batch failed on the held file and was tried again");
            var later = Enumerable.Range(0, 10).Select(i => _registrar.RegisterAsync($"wrist-{i}", new DeviceAnnouncement("biosensor", 4, "1.0", "hub-1"))).ToList();
            first.IsCompleted.ShouldBeFalse();
            holder.Rollback();

            int[] ids = [.. (await Task.WhenAll(later.Prepend(first)).WaitAsync(TimeSpan.FromSeconds(60), Ct)).Select(r => r.Id)];

            ids.Distinct().Count().ShouldBe(11);
        }

        (await _store.LoadDevicesAsync(Ct)).Count.ShouldBe(11);
    }

    [Fact]
    public async Task A_batch_the_database_refuses_is_registered_one_serial_at_a_time_and_only_the_refused_serial_fails()
    {
        await _db.ExecuteAsync("CREATE TRIGGER refuse_serial BEFORE INSERT ON device WHEN NEW.serial = 'wrist-bad' BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END", Ct);
        Task<RegisteredDevice> first;
        List<Task<RegisteredDevice>> batch;
        using (var holder = await HoldWriteLockAsync())
        {
            // The first registration waits on the held file, so that the next 21 queue up behind it as one batch.
            first = _registrar.RegisterAsync("wrist-first", null);
            await WaitForAsync(() => _registrar.StoreCalls >= 1, "the first batch started");
            batch = Enumerable.Range(0, 20).Select(i => $"wrist-{i:D2}").Append("wrist-bad").Select(s => _registrar.RegisterAsync(s, null)).ToList();
            holder.Rollback();
        }

        var refused = await Should.ThrowAsync<SqliteException>(() => batch[^1].WaitAsync(TimeSpan.FromSeconds(60), Ct));
        int[] ids = [.. (await Task.WhenAll(batch.SkipLast(1).Prepend(first)).WaitAsync(TimeSpan.FromSeconds(60), Ct)).Select(r => r.Id)];

        refused.Message.ShouldContain("refused by a test trigger");
        ids.Distinct().Count().ShouldBe(21);
        var devices = await _store.LoadDevicesAsync(Ct);
        devices.Count.ShouldBe(21);
        devices.ContainsKey("wrist-bad").ShouldBeFalse();
        _registrar.StoreCalls.ShouldBeGreaterThanOrEqualTo(1 + 1 + 21, "the refused batch of 21, then each of its serials alone");
    }

    /// <summary>Another connection holding the hot file's write lock (as the archiver or a person's sqlite3 can) until disposed.</summary>
    private async Task<WriteLock> HoldWriteLockAsync()
    {
        var connection = new SqliteConnection($"Data Source={_db.Storage.HotFile};Pooling=False");
        await connection.OpenAsync(Ct);
        return new WriteLock(connection, connection.BeginTransaction(deferred: false));
    }

    private sealed class WriteLock(SqliteConnection connection, SqliteTransaction transaction) : IDisposable
    {
        public void Rollback() => transaction.Rollback();

        public void Dispose()
        {
            transaction.Dispose();
            connection.Dispose();
        }
    }

    [Fact]
    public void Of_two_answers_for_one_device_the_one_asked_later_is_kept_whichever_is_recorded_last()
    {
        long earlier = _hubs.NextBindingSequence(); // a reread asks the database ...
        _hubs.Bind("wrist-1", "south-1"); // ... staff move the device meanwhile ...
        _hubs.Bind("wrist-1", "north-1", earlier); // ... and the reread's older answer arrives last

        _hubs.HubOf("wrist-1").ShouldBe("south-1");

        _hubs.Bind("wrist-1", null, _hubs.NextBindingSequence());
        _hubs.HubOf("wrist-1").ShouldBeNull();
        _hubs.Bind("wrist-1", "north-1", earlier);
        _hubs.HubOf("wrist-1").ShouldBeNull("an unbinding is an answer too: an older one does not undo it");
    }

    [Fact]
    public async Task Every_device_s_hub_is_read_again_once_the_interval_has_passed()
    {
        (await _registry.GetIdAsync("wrist-1", "north-1", Ct)).ShouldNotBeNull();
        await _registry.LoadAsync(Ct);
        _hubs.HubOf("wrist-1").ShouldBe("north-1");
        _hubs.RefreshHubsIfDue().ShouldBeNull("just loaded: not due");

        // Another Saito sharing the database moved the device.
        await _db.ExecuteAsync("UPDATE device SET hub = 'south-1' WHERE serial = 'wrist-1'", Ct);

        var deadline = DateTime.UtcNow.AddSeconds(30);
        Task? refresh;
        while ((refresh = _hubs.RefreshHubsIfDue()) is null)
        {
            DateTime.UtcNow.ShouldBeLessThan(deadline, "a refresh was due after one second");
            await Task.Delay(20, Ct);
        }

        await refresh.WaitAsync(TimeSpan.FromSeconds(30), Ct);
        _hubs.HubOf("wrist-1").ShouldBe("south-1");
        _hubs.HubRefreshes.ShouldBe(1);
        _hubs.RefreshHubsIfDue().ShouldBeNull("the next one is an interval away");
    }

    private static async Task WaitForAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(30);
        while (!condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new ShouldAssertException($"Not within 30 s: {what}.");
            }

            await Task.Delay(10, Ct);
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _registry.DisposeAsync();
        await _hubs.DisposeAsync();
        await _registrar.DisposeAsync();
        await _db.DisposeAsync();
    }
}

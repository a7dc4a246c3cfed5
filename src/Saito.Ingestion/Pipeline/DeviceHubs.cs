using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Storage;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The hub each registered device is bound to (the hub that registered it, that its last hello came through, or that
/// staff moved it to), as known here, and read again from the database so that a move made through another Saito
/// sharing it is seen: every device's hub once per <c>Ingestion:DeviceHubRecheckSeconds</c>
/// (<see cref="RefreshHubsIfDue"/>), one device's before it is refused (<see cref="RecheckHubAsync"/>).
/// <see cref="HubSiteRules"/> judges by it; <see cref="DeviceRegistry"/> records the hub of each device it registers.
/// </summary>
public sealed partial class DeviceHubs : IAsyncDisposable
{
    private readonly IDeviceTable _store;
    private readonly StorageResilience _resilience;
    private readonly ConcurrentDictionary<string, HubBinding> _hubs = new(StringComparer.Ordinal);

    // Numbers every reading of a hub (a registration, a reread, a refresh of all, a move), taken before the database is
    // asked: of two answers for one device, the one asked later is kept, whichever arrives last.
    private long _bindings;
    private long _nextRefresh = long.MaxValue;
    private readonly Lock _refreshLock = new();
    private Task _refresh = Task.CompletedTask;
    private long _hubRefreshes;
    private readonly CancellationTokenSource _disposing = new();

    // When each device's hub was last read from the database (Environment.TickCount64), for RecheckHubAsync.
    private readonly ConcurrentDictionary<string, long> _hubsRead = new(StringComparer.Ordinal);
    private readonly ILogger _logger;
    private readonly long _hubRecheckMilliseconds;
    private long _hubRereads;

    public DeviceHubs(IDeviceTable store, StorageResilience resilience, ILogger<DeviceHubs>? logger = null, IOptions<IngestionOptions>? options = null)
    {
        ArgumentNullException.ThrowIfNull(resilience);
        _hubRecheckMilliseconds = (options?.Value.DeviceHubRecheckSeconds ?? new IngestionOptions().DeviceHubRecheckSeconds) * 1000L;
        _store = store;
        _resilience = resilience;
        _logger = (ILogger?)logger ?? Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;
    }

    /// <summary>Serials whose last reread time is kept, at most (a hub inventing serials cannot grow it without bound).</summary>
    private const int MaxRereadsRemembered = 100_000;

    /// <summary>Times a device's hub was read again from the database (<see cref="RecheckHubAsync"/>), for tests and diagnostics.</summary>
    public long HubRereads => Interlocked.Read(ref _hubRereads);

    /// <summary>Times every device's hub was read again from the database (<see cref="RefreshHubsIfDue"/>), for tests and diagnostics.</summary>
    public long HubRefreshes => Interlocked.Read(ref _hubRefreshes);

    /// <summary>Every device's hub, at start (with the devices' ids, <see cref="DeviceRegistry.LoadAsync"/>).</summary>
    public async Task LoadAsync(CancellationToken cancellationToken)
    {
        var hubs = await _resilience.Pipeline.ExecuteAsync(async ct => await _store.LoadDeviceHubsAsync(null, ct), cancellationToken);
        foreach (var (serial, hub) in hubs)
        {
            _hubs[serial] = new HubBinding(hub, 0);
        }

        Volatile.Write(ref _nextRefresh, Environment.TickCount64 + _hubRecheckMilliseconds);
    }

    /// <summary>The hub a registered device is bound to, as last known here (null: none, or a new serial).</summary>
    public string? HubOf(string serial) => _hubs.TryGetValue(serial, out var binding) ? binding.Hub : null;

    /// <summary>
    /// Every device's hub read again from the database when <c>Ingestion:DeviceHubRecheckSeconds</c> have passed since the
    /// last time (called for each message while some hub has a site): the read to wait for before judging the message,
    /// or null when none is due. So a device moved by staff through another Saito sharing the database is refused from
    /// its old site's hubs here within that interval, even when those hubs are the only ones that send through this
    /// instance. Costs one statement per interval, and the messages that arrive while it runs wait for it.
    /// </summary>
    public Task? RefreshHubsIfDue()
    {
        if (Environment.TickCount64 < Volatile.Read(ref _nextRefresh) || _disposing.IsCancellationRequested)
        {
            return null;
        }

        lock (_refreshLock)
        {
            if (!_refresh.IsCompleted)
            {
                return _refresh;
            }

            // Another message may have started and finished one meanwhile.
            return Environment.TickCount64 < Volatile.Read(ref _nextRefresh) ? null : _refresh = Task.Run(RefreshHubsAsync);
        }
    }

    private async Task RefreshHubsAsync()
    {
        try
        {
            long asked = NextBindingSequence();
            var stored = await _store.LoadDeviceHubsAsync(null, _disposing.Token);
            foreach (var (serial, hub) in stored)
            {
                // None found never unbinds (as in a reread); an unchanged hub costs nothing.
                if (!_hubs.TryGetValue(serial, out var current) || current.Hub != hub)
                {
                    Bind(serial, hub, asked);
                }
            }

            Interlocked.Increment(ref _hubRefreshes);
        }
        catch (OperationCanceledException) when (_disposing.IsCancellationRequested)
        {
            return;
        }
        catch (Exception ex)
        {
            LogRefreshFailed(ex);
        }
        finally
        {
            // A database that cannot answer is asked again after the next interval, not by every message meanwhile.
            Volatile.Write(ref _nextRefresh, Environment.TickCount64 + _hubRecheckMilliseconds);
        }
    }

    /// <summary>
    /// The device's hub as the database has it now, read at most once per <c>Ingestion:DeviceHubRecheckSeconds</c> per
    /// device (else, and when the database cannot answer, as known here). <paramref name="always"/> reads it whatever the
    /// interval (before a hello, which may bind the device to its hub).
    /// </summary>
    public async ValueTask<string?> RecheckHubAsync(string serial, CancellationToken cancellationToken, bool always = false)
    {
        long now = Environment.TickCount64;
        if (!always && _hubsRead.TryGetValue(serial, out long read) && now - read < _hubRecheckMilliseconds)
        {
            return HubOf(serial);
        }

        if (_hubsRead.Count >= MaxRereadsRemembered)
        {
            _hubsRead.Clear(); // serials a hub made up: forgetting them costs at most one more read each
        }

        _hubsRead[serial] = now;
        Interlocked.Increment(ref _hubRereads);
        try
        {
            long asked = NextBindingSequence();
            var stored = await _store.LoadDeviceHubsAsync(serial, cancellationToken);
            // A hub found is recorded; none found never unbinds a device (a registration may have bound it meanwhile).
            if (stored.TryGetValue(serial, out string? hub))
            {
                Bind(serial, hub, asked);
            }
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            LogRecheckFailed(ex, serial);
        }

        return HubOf(serial);
    }

    /// <summary>Records the hub a device is bound to now (a move by staff in this process).</summary>
    public void Bind(string serial, string? hub) => Bind(serial, hub, NextBindingSequence());

    /// <summary>The number of a reading of hubs about to be asked of the database (see <see cref="Bind(string, string?, long)"/>).</summary>
    internal long NextBindingSequence() => Interlocked.Increment(ref _bindings);

    /// <summary>
    /// Records a device's hub as the database answered a question numbered <paramref name="asked"/>
    /// (<see cref="NextBindingSequence"/>, taken before asking): an answer to a later question, recorded already, is kept.
    /// </summary>
    internal void Bind(string serial, string? hub, long asked) =>
        _hubs.AddOrUpdate(serial, static (_, fresh) => fresh, static (_, current, fresh) => current.Sequence > fresh.Sequence ? current : fresh,
            new HubBinding(hub, asked));

    public async ValueTask DisposeAsync()
    {
        await _disposing.CancelAsync();
        Task refresh;
        lock (_refreshLock)
        {
            refresh = _refresh;
        }

        try
        {
            await refresh;
        }
        catch (Exception ex) when (ex is OperationCanceledException)
        {
            // Stopping.
        }
    }

    /// <summary>A device's hub as known here (null: bound to none), and the number of the question that found it.</summary>
    private sealed record HubBinding(string? Hub, long Sequence);

    [LoggerMessage(2153, LogLevel.Warning, "The devices' hubs could not be read again from the database; deciding by the hubs known here until the next try")]
    private partial void LogRefreshFailed(Exception exception);

    [LoggerMessage(2152, LogLevel.Warning, "Device {Serial}'s hub could not be read again from the database; deciding by the hub known here")]
    private partial void LogRecheckFailed(Exception exception, string serial);
}

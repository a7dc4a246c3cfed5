using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Polly;
using Saito.Storage;
using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Device serials (what hubs put in topics) to the integer ids the reading tables use. Lookups are in memory;
/// an unknown serial is registered in the database the first time it is seen (no owner yet), once even when
/// many messages from it arrive at the same moment, so nothing is dropped because a device is new. A new serial
/// counts against its hub's <see cref="NewDeviceLimiter"/> once; past it, the serial is not registered (null) and the
/// caller dead-letters the message. Known serials are never limited. New serials (and hellos) are registered in
/// batches by one <see cref="DeviceRegistrar"/>: one connection and one statement for all that arrive together.
/// It also knows the hub each device is bound to (<see cref="HubOf"/>: the hub that registered it, or that its last
/// hello came through), for <see cref="IHubSites"/>' check that a hub sends only for devices of its own site.
/// </summary>
public sealed partial class DeviceRegistry : IAsyncDisposable
{
    private readonly IReadingStore _store;
    private readonly NewDeviceLimiter _limiter;
    private readonly ResiliencePipeline _retry;
    private readonly DeviceRegistrar _registrar;
    private readonly ConcurrentDictionary<string, int> _ids = new(StringComparer.Ordinal);
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

    // Registrations in flight, by serial; read and written under _admitting, so that a new serial is admitted (and
    // counted against its hub) once however many of its messages arrive together.
    private readonly Dictionary<string, Task<int>> _registering = new(StringComparer.Ordinal);
    private readonly Lock _admitting = new();

    private readonly long _hubRecheckMilliseconds;
    private long _hubRereads;

    public DeviceRegistry(IReadingStore store, StorageResilience resilience, NewDeviceLimiter limiter, ILogger<DeviceRegistrar>? logger = null,
        Microsoft.Extensions.Options.IOptions<IngestionOptions>? options = null)
    {
        _hubRecheckMilliseconds = (options?.Value.DeviceHubRecheckSeconds ?? new IngestionOptions().DeviceHubRecheckSeconds) * 1000L;
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _limiter = limiter;
        _retry = resilience.Pipeline;
        _registrar = new DeviceRegistrar(store, _retry, logger);
        _logger = (ILogger?)logger ?? Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance;
    }

    /// <summary>Serials whose last reread time is kept, at most (a hub inventing serials cannot grow it without bound).</summary>
    private const int MaxRereadsRemembered = 100_000;

    /// <summary>Times a device's hub was read again from the database (<see cref="RecheckHubAsync"/>), for tests and diagnostics.</summary>
    public long HubRereads => Interlocked.Read(ref _hubRereads);

    /// <summary>Times every device's hub was read again from the database (<see cref="RefreshHubsIfDue"/>), for tests and diagnostics.</summary>
    public long HubRefreshes => Interlocked.Read(ref _hubRefreshes);

    public int Count => _ids.Count;

    /// <summary>What registers new devices (its counts, for tests and diagnostics).</summary>
    public DeviceRegistrar Registrar => _registrar;

    public async Task LoadAsync(CancellationToken cancellationToken)
    {
        var devices = await _retry.ExecuteAsync(async ct => await _store.LoadDevicesAsync(ct), cancellationToken);
        foreach (var (serial, id) in devices)
        {
            _ids[serial] = id;
        }

        var hubs = await _retry.ExecuteAsync(async ct => await _store.LoadDeviceHubsAsync(null, ct), cancellationToken);
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

    /// <summary>Records the hub a device is bound to now (a registration's answer, or a move by staff in this process).</summary>
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

    /// <summary>The id of a device already registered (false for a new serial, or one being registered now).</summary>
    public bool TryGetKnownId(string serial, out int id) => _ids.TryGetValue(serial, out id);

    /// <summary>
    /// The id of a device, registering it when it is new; null when it is new and <paramref name="hub"/> has
    /// registered as many new devices in the last hour as <see cref="NewDeviceLimiter"/> allows.
    /// </summary>
    public ValueTask<int?> GetIdAsync(string serial, string hub, CancellationToken cancellationToken)
    {
        if (_ids.TryGetValue(serial, out int id))
        {
            return ValueTask.FromResult<int?>(id);
        }

        Task<int>? registration;
        lock (_admitting)
        {
            if (_ids.TryGetValue(serial, out id))
            {
                return ValueTask.FromResult<int?>(id);
            }

            // A registration already in flight for this serial was counted when it started.
            if (!_registering.TryGetValue(serial, out registration))
            {
                if (!_limiter.TryAdmit(hub))
                {
                    return ValueTask.FromResult<int?>(null);
                }

                registration = RegisterAsync(serial, null, hub);
                if (!registration.IsCompleted)
                {
                    _registering[serial] = registration;
                }
            }
        }

        return new ValueTask<int?>(WaitAsync(registration, cancellationToken));
    }

    /// <summary>
    /// Records what a device says of itself (its hello), registering it when it is new; null (nothing recorded) when it
    /// is new and its hub is past its <see cref="NewDeviceLimiter"/>.
    /// </summary>
    public async Task<int?> AnnounceAsync(string serial, string hub, DeviceAnnouncement announcement, CancellationToken cancellationToken)
    {
        lock (_admitting)
        {
            if (!_ids.ContainsKey(serial) && !_registering.ContainsKey(serial) && !_limiter.TryAdmit(hub))
            {
                return null;
            }
        }

        return await RegisterAsync(serial, announcement, hub).WaitAsync(cancellationToken);
    }

    /// <summary>Why a device was not registered, for its dead letter (the hub, the limit, the setting).</summary>
    public string RefusalDetail(string serial, string hub) => System.FormattableString.Invariant(
        $"hub {hub} registered {_limiter.MaxPerHubPerHour} new devices in the last hour (Ingestion:MaxNewDevicesPerHubPerHour); device {serial} is not registered, known devices of this hub are still stored");

    private static async Task<int?> WaitAsync(Task<int> registration, CancellationToken cancellationToken) =>
        await registration.WaitAsync(cancellationToken);

    /// <summary>
    /// Registers through the registrar, which is not tied to any caller's token (a caller's connection may close), so
    /// the others waiting for the same serial still get its id; then the id is known and the serial no longer in flight.
    /// </summary>
    private async Task<int> RegisterAsync(string serial, DeviceAnnouncement? announcement, string hub)
    {
        try
        {
            long asked = NextBindingSequence();
            var (id, boundTo) = await _registrar.RegisterAsync(serial, announcement, hub);
            lock (_admitting)
            {
                Bind(serial, boundTo, asked);
                _ids[serial] = id;
                RemoveFromFlight(serial, announcement);
            }

            return id;
        }
        catch
        {
            lock (_admitting)
            {
                RemoveFromFlight(serial, announcement);
            }

            throw;
        }
    }

    // Only a plain registration is in _registering (a hello is awaited by its own caller alone).
    private void RemoveFromFlight(string serial, DeviceAnnouncement? announcement)
    {
        if (announcement is null)
        {
            _registering.Remove(serial);
        }
    }

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

        await _registrar.DisposeAsync();
    }

    /// <summary>A device's hub as known here (null: bound to none), and the number of the question that found it.</summary>
    private sealed record HubBinding(string? Hub, long Sequence);

    [LoggerMessage(2153, LogLevel.Warning, "The devices' hubs could not be read again from the database; deciding by the hubs known here until the next try")]
    private partial void LogRefreshFailed(Exception exception);

    [LoggerMessage(2152, LogLevel.Warning, "Device {Serial}'s hub could not be read again from the database; deciding by the hub known here")]
    private partial void LogRecheckFailed(Exception exception, string serial);
}

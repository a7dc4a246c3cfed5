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
/// The hub each registration bound a device to goes to <see cref="DeviceHubs"/>, which keeps the bindings.
/// </summary>
public sealed class DeviceRegistry : IAsyncDisposable
{
    private readonly IDeviceTable _store;
    private readonly NewDeviceLimiter _limiter;
    private readonly ResiliencePipeline _retry;
    private readonly DeviceRegistrar _registrar;
    private readonly DeviceHubs _hubs;
    private readonly ConcurrentDictionary<string, int> _ids = new(StringComparer.Ordinal);

    // Registrations in flight, by serial; read and written under _admitting, so that a new serial is admitted (and
    // counted against its hub) once however many of its messages arrive together.
    private readonly Dictionary<string, Task<int>> _registering = new(StringComparer.Ordinal);
    private readonly Lock _admitting = new();

    public DeviceRegistry(IDeviceTable store, StorageResilience resilience, NewDeviceLimiter limiter, DeviceHubs hubs, ILogger<DeviceRegistrar>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _limiter = limiter;
        _hubs = hubs;
        _retry = resilience.Pipeline;
        _registrar = new DeviceRegistrar(store, resilience, logger);
    }

    public int Count => _ids.Count;

    /// <summary>What registers new devices (its counts, for tests and diagnostics).</summary>
    public DeviceRegistrar Registrar => _registrar;

    /// <summary>Every registered device's id, and its hub (<see cref="DeviceHubs"/>), at start.</summary>
    public async Task LoadAsync(CancellationToken cancellationToken)
    {
        var devices = await _retry.ExecuteAsync(async ct => await _store.LoadDevicesAsync(ct), cancellationToken);
        foreach (var (serial, id) in devices)
        {
            _ids[serial] = id;
        }

        await _hubs.LoadAsync(cancellationToken);
    }

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
            long asked = _hubs.NextBindingSequence();
            var (id, boundTo) = await _registrar.RegisterAsync(serial, announcement, hub);
            lock (_admitting)
            {
                _hubs.Bind(serial, boundTo, asked);
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

    public ValueTask DisposeAsync() => _registrar.DisposeAsync();
}

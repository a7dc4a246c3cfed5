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
/// counts against its hub's <see cref="NewDeviceLimiter"/>; past it, the serial is not registered (null) and the
/// caller dead-letters the message. Known serials are never limited. New serials (and hellos) are registered in
/// batches by one <see cref="DeviceRegistrar"/>: one connection and one statement for all that arrive together.
/// </summary>
public sealed class DeviceRegistry : IAsyncDisposable
{
    private readonly IReadingStore _store;
    private readonly NewDeviceLimiter _limiter;
    private readonly ResiliencePipeline _retry;
    private readonly DeviceRegistrar _registrar;
    private readonly ConcurrentDictionary<string, int> _ids = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Lazy<Task<int>>> _registering = new(StringComparer.Ordinal);

    public DeviceRegistry(IReadingStore store, StorageResilience resilience, NewDeviceLimiter limiter, ILogger<DeviceRegistrar>? logger = null)
    {
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _limiter = limiter;
        _retry = resilience.Pipeline;
        _registrar = new DeviceRegistrar(store, _retry, logger);
    }

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
    }

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

        // A registration already in flight for this serial was counted when it started.
        if (!_registering.ContainsKey(serial) && !_limiter.TryAdmit(hub))
        {
            return ValueTask.FromResult<int?>(null);
        }

        return new ValueTask<int?>(RegisterOnceAsync(serial, cancellationToken));
    }

    /// <summary>
    /// Records what a device says of itself (its hello), registering it when it is new; null (nothing recorded) when it
    /// is new and its hub is past its <see cref="NewDeviceLimiter"/>.
    /// </summary>
    public async Task<int?> AnnounceAsync(string serial, string hub, DeviceAnnouncement announcement, CancellationToken cancellationToken)
    {
        if (!_ids.ContainsKey(serial) && !_limiter.TryAdmit(hub))
        {
            return null;
        }

        int id = await _registrar.RegisterAsync(serial, announcement).WaitAsync(cancellationToken);
        _ids[serial] = id;
        return id;
    }

    /// <summary>Why a device was not registered, for its dead letter (the hub, the limit, the setting).</summary>
    public string RefusalDetail(string serial, string hub) => System.FormattableString.Invariant(
        $"hub {hub} registered {_limiter.MaxPerHubPerHour} new devices in the last hour (Ingestion:MaxNewDevicesPerHubPerHour); device {serial} is not registered, known devices of this hub are still stored");

    private async Task<int?> RegisterOnceAsync(string serial, CancellationToken cancellationToken)
    {
        // One registration per serial in flight; later callers share it. The registration itself is not tied to
        // the first caller's token (its connection may close) so the others still get their id.
        var registration = _registering.GetOrAdd(serial, s => new Lazy<Task<int>>(() => RegisterAsync(s)));
        try
        {
            return await registration.Value.WaitAsync(cancellationToken);
        }
        finally
        {
            if (registration.Value.IsCompleted)
            {
                _registering.TryRemove(new KeyValuePair<string, Lazy<Task<int>>>(serial, registration));
            }
        }
    }

    private async Task<int> RegisterAsync(string serial)
    {
        int id = await _registrar.RegisterAsync(serial, null);
        _ids[serial] = id;
        return id;
    }

    public ValueTask DisposeAsync() => _registrar.DisposeAsync();
}

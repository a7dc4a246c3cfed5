using System.Collections.Concurrent;
using Polly;
using Saito.Storage;
using Saito.Storage.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Device serials (what hubs put in topics) to the integer ids the reading tables use. Lookups are in memory;
/// an unknown serial is registered in the database the first time it is seen (no owner yet), once even when
/// many messages from it arrive at the same moment, so nothing is dropped because a device is new.
/// </summary>
public sealed class DeviceRegistry
{
    private readonly IReadingStore _store;
    private readonly ResiliencePipeline _retry;
    private readonly ConcurrentDictionary<string, int> _ids = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Lazy<Task<int>>> _registering = new(StringComparer.Ordinal);

    public DeviceRegistry(IReadingStore store, StorageResilience resilience)
    {
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _retry = resilience.Pipeline;
    }

    public int Count => _ids.Count;

    public async Task LoadAsync(CancellationToken cancellationToken)
    {
        var devices = await _retry.ExecuteAsync(async ct => await _store.LoadDevicesAsync(ct), cancellationToken);
        foreach (var (serial, id) in devices)
        {
            _ids[serial] = id;
        }
    }

    /// <summary>The id of a device, registering it when it is new.</summary>
    public ValueTask<int> GetIdAsync(string serial, CancellationToken cancellationToken)
    {
        if (_ids.TryGetValue(serial, out int id))
        {
            return ValueTask.FromResult(id);
        }

        return new ValueTask<int>(RegisterOnceAsync(serial, cancellationToken));
    }

    /// <summary>Records what a device says of itself (its hello), registering it when it is new.</summary>
    public async Task<int> AnnounceAsync(string serial, DeviceAnnouncement announcement, CancellationToken cancellationToken)
    {
        int id = await _retry.ExecuteAsync(async ct => await _store.RegisterDeviceAsync(serial, announcement, ct), cancellationToken);
        _ids[serial] = id;
        return id;
    }

    private async Task<int> RegisterOnceAsync(string serial, CancellationToken cancellationToken)
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
        int id = await _retry.ExecuteAsync(async ct => await _store.RegisterDeviceAsync(serial, null, ct), CancellationToken.None);
        _ids[serial] = id;
        return id;
    }
}

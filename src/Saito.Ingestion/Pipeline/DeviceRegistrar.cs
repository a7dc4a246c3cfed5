using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Readings;
using Saito.Storage;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Registers new devices in batches, one batch in flight at a time: a serial asked for while a batch is being
/// registered waits for the next one, which takes every serial that arrived meanwhile (up to <see cref="MaxBatch"/>)
/// in one <see cref="IDeviceTable.RegisterDevicesAsync"/> call: one connection, one statement, one transaction. So a
/// class's first minute, hundreds of sensors seen for the first time, costs a few round trips on one connection
/// instead of a connection and a transaction per serial (<see cref="ConnectionBudget"/>). Transient failures are
/// retried (<see cref="StorageResilience"/>); a batch the database refuses is registered again one serial at a time,
/// so that only the serial at fault fails.
/// </summary>
public sealed partial class DeviceRegistrar : IAsyncDisposable
{
    /// <summary>Serials in one registration, at most.</summary>
    public const int MaxBatch = 1000;

    private readonly IDeviceTable _store;
    private readonly StorageResilience _resilience;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lock _lock = new();
    private List<Pending> _queue = [];
    private Task _draining = Task.CompletedTask;
    private bool _running;
    private bool _disposed;
    private long _calls;
    private long _registered;

    public DeviceRegistrar(IDeviceTable store, StorageResilience resilience, ILogger? logger = null)
    {
        ArgumentNullException.ThrowIfNull(store);
        ArgumentNullException.ThrowIfNull(resilience);
        _store = store;
        _resilience = resilience;
        _logger = logger ?? NullLogger.Instance;
    }

    /// <summary>Calls to <see cref="IDeviceTable.RegisterDevicesAsync"/> so far, retries included.</summary>
    public long StoreCalls => Interlocked.Read(ref _calls);

    /// <summary>Registrations completed so far (a serial asked for twice counts twice).</summary>
    public long Registered => Interlocked.Read(ref _registered);

    /// <summary>
    /// The device's id and hub once the batch it joins is committed (<paramref name="hub"/>: the hub it came through,
    /// recorded if it is new). Not tied to a caller's token: others may be waiting for the same batch (callers stop
    /// waiting with <c>WaitAsync</c>); it ends when it is committed, refused, or Saito stops.
    /// </summary>
    public Task<RegisteredDevice> RegisterAsync(string serial, DeviceAnnouncement? announcement, string? hub = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(serial);
        var pending = new Pending(new DeviceRegistration(serial, announcement, hub));
        lock (_lock)
        {
            ObjectDisposedException.ThrowIf(_disposed, this);
            _queue.Add(pending);
            if (!_running)
            {
                _running = true;
                _draining = Task.Run(DrainAsync, CancellationToken.None);
            }
        }

        return pending.Id.Task;
    }

    /// <summary>Registers batches until none is waiting; the one loop at a time (<see cref="_running"/>).</summary>
    private async Task DrainAsync()
    {
        while (true)
        {
            List<Pending> batch;
            lock (_lock)
            {
                if (_queue.Count == 0)
                {
                    _running = false;
                    return;
                }

                if (_queue.Count <= MaxBatch)
                {
                    batch = _queue;
                    _queue = [];
                }
                else
                {
                    batch = _queue.GetRange(0, MaxBatch);
                    _queue.RemoveRange(0, MaxBatch);
                }
            }

            await RegisterBatchAsync(batch);
        }
    }

    private async Task RegisterBatchAsync(List<Pending> batch)
    {
        var devices = batch.ConvertAll(p => p.Device);
        try
        {
            var registered = await _resilience.Pipeline.ExecuteAsync(
                async ct =>
                {
                    Interlocked.Increment(ref _calls);
                    return await _store.RegisterDevicesAsync(devices, ct);
                },
                _stopping.Token);
            for (int i = 0; i < batch.Count; i++)
            {
                batch[i].Id.TrySetResult(registered[i]);
            }

            Interlocked.Add(ref _registered, batch.Count);
            LogRegistered(batch.Count);
        }
        catch (Exception ex) when (batch.Count > 1 && ex is not OperationCanceledException && !_resilience.IsTransient(ex))
        {
            // The database refused the batch itself: find the serial it refuses, and register the others.
            LogBatchRefused(ex, batch.Count);
            foreach (var pending in batch)
            {
                await RegisterBatchAsync([pending]);
            }
        }
        catch (OperationCanceledException)
        {
            foreach (var pending in batch)
            {
                pending.Id.TrySetCanceled(_stopping.Token);
            }
        }
        catch (Exception ex)
        {
            foreach (var pending in batch)
            {
                pending.Id.TrySetException(ex);
            }
        }
    }

    /// <summary>Stops: a registration retrying against a database that is down gives up, and its callers see it cancelled.</summary>
    public async ValueTask DisposeAsync()
    {
        Task draining;
        lock (_lock)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            draining = _draining;
        }

        await _stopping.CancelAsync();
        await draining;
        _stopping.Dispose();
    }

    private sealed class Pending(DeviceRegistration device)
    {
        public DeviceRegistration Device { get; } = device;

        public TaskCompletionSource<RegisteredDevice> Id { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
    }

    [LoggerMessage(2150, LogLevel.Debug, "Registered {Count} device(s) in one batch")]
    private partial void LogRegistered(int count);

    [LoggerMessage(2151, LogLevel.Warning, "The database refused a registration of {Count} devices; registering them one at a time to find the one at fault")]
    private partial void LogBatchRefused(Exception exception, int count);
}

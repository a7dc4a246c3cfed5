using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Hosting;
using Saito.Storage;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// Saito's one start-up step for the database, in the order the rest needs: the schema created or completed
/// (<see cref="IStorageSchema"/>, retried while the database is unreachable), then the device table loaded into the
/// <see cref="DeviceRegistry"/>; then <see cref="Ready"/> completes. Everything that touches the database waits for it:
/// the ingestor holds a hub's first publishes (their acknowledgements with them), the registry migrates after it (its
/// tables reference the device table: <see cref="IStorageReady"/>), and the broker serves its first connections after
/// it (<see cref="IMqttStartGate"/>). If it fails for anything but a transient error, the failure is logged once as
/// critical, <see cref="Ready"/> faults with it (so /health and every waiter see why) and the host stops.
/// </summary>
public sealed partial class StorageStartup(IStorageSchema schema, DeviceRegistry devices, StorageHealth health, StorageResilience resilience,
    ILogger<StorageStartup> logger) : BackgroundService, IStorageReady, IMqttStartGate
{
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes once the schema exists and the devices are loaded; faults when that failed.</summary>
    public Task Ready => _ready.Task;

    string IMqttStartGate.Name => "database schema and devices";

    // The gate opens when the step ends either way: after a failure the host is stopping, and the broker with it.
    Task IMqttStartGate.WaitAsync(CancellationToken cancellationToken) => Task.WhenAny(Ready).WaitAsync(cancellationToken);

    Task IStorageReady.WaitAsync(CancellationToken cancellationToken) => Ready.WaitAsync(cancellationToken);

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            var report = await resilience.Pipeline.ExecuteAsync(async ct => await schema.EnsureSchemaAsync(ct), stoppingToken);
            if (report.CreatedAnything)
            {
                LogSchemaCreated(report.Created.Count, schema.Describe());
            }
            else
            {
                LogSchemaFound(report.Existing.Count, schema.Describe());
            }

            await devices.LoadAsync(stoppingToken);
            health.MarkPrepared();
            _ready.TrySetResult();
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            _ready.TrySetCanceled(stoppingToken);
        }
        catch (Exception ex)
        {
            LogFailed(ex, schema.Describe());
            _ready.TrySetException(ex);
            throw;
        }
    }

    [LoggerMessage(2010, LogLevel.Information, "Database ready: created {Created} missing object(s) in {Store}")]
    private partial void LogSchemaCreated(int created, string store);

    [LoggerMessage(2011, LogLevel.Information, "Schema present in {Store} ({Tables} tables)")]
    private partial void LogSchemaFound(int tables, string store);

    [LoggerMessage(2013, LogLevel.Critical, "Could not prepare {Store}; Saito cannot store readings")]
    private partial void LogFailed(Exception exception, string store);
}

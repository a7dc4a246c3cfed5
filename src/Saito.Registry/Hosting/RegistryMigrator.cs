using Microsoft.EntityFrameworkCore;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Saito.Storage;

namespace Saito.Registry.Hosting;

/// <summary>
/// Applies the registry's pending migrations at start, once the storage schema exists (<see cref="IStorageReady"/>: the
/// device table its tables reference), and creates the staff roles.
/// Until then <see cref="Ready"/> is incomplete and the API answers 503; if migrating fails, Saito logs why and the
/// API keeps answering 503 (ingestion goes on: readings do not need the registry).
/// </summary>
public sealed partial class RegistryMigrator(RegistryContextFactory contexts, IStorageReady storage, ILogger<RegistryMigrator> logger) : BackgroundService
{
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);

    /// <summary>Completes when the registry's tables are current; faults when migrating failed.</summary>
    public Task Ready => _ready.Task;

    /// <summary>
    /// Waits for <see cref="Ready"/>: true once the tables are current, false when migrating failed (the migrator has
    /// logged why; without the tables the caller has nothing to do until a restart). Cancellation still throws.
    /// </summary>
    public async Task<bool> WaitReadyAsync(CancellationToken cancellationToken)
    {
        try
        {
            await Ready.WaitAsync(cancellationToken);
            return true;
        }
        catch (Exception) when (Ready.IsFaulted)
        {
            return false;
        }
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            await storage.WaitAsync(stoppingToken);
            var applied = await MigrateAsync(contexts, stoppingToken);
            if (applied.Count > 0)
            {
                LogMigrated(string.Join(", ", applied));
            }

            _ready.TrySetResult();
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            _ready.TrySetCanceled(stoppingToken);
        }
        catch (Exception ex)
        {
            LogFailed(ex);
            _ready.TrySetException(ex);
        }
    }

    /// <summary>Applies what is pending and returns the migrations it applied (also for the <c>registry migrate</c> command).</summary>
    public static async Task<IReadOnlyList<string>> MigrateAsync(RegistryContextFactory contexts, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(contexts);
        await using var db = contexts.Create();
        var pending = (await db.Database.GetPendingMigrationsAsync(cancellationToken)).ToList();
        if (pending.Count > 0)
        {
            await db.Database.MigrateAsync(cancellationToken);
        }

        return pending;
    }

    [LoggerMessage(3001, LogLevel.Information, "Registry: applied migrations {Migrations}")]
    private partial void LogMigrated(string migrations);

    [LoggerMessage(3002, LogLevel.Error, "Registry: migrating the database failed; the API answers 503 until Saito restarts with it fixed (ingestion goes on)")]
    private partial void LogFailed(Exception exception);
}

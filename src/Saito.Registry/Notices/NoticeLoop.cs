using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Saito.Registry.Hosting;

namespace Saito.Registry.Notices;

/// <summary>
/// The loop the absence watcher and the notice sender share: wait until the registry's migrations are applied, then
/// run one pass, wait (the poll interval, or a wake-up), and again until Saito stops. A failed pass (the database
/// unreachable for a moment) is logged as an error with its exception and tried again at the next poll: notices
/// are in the database, so nothing is lost, and readings go on being ingested meanwhile.
/// </summary>
public abstract partial class NoticeLoop(RegistryMigrator migrator, TimeProvider time, ILogger logger) : BackgroundService
{
    protected TimeProvider Time => time;

    /// <summary>For the subclasses' own (static) log methods.</summary>
    protected ILogger Logger => logger;

    /// <summary>What the loop is called in logs.</summary>
    protected abstract string Name { get; }

    /// <summary>One pass; returns how many notices or sessions it handled.</summary>
    internal abstract Task<int> RunOnceAsync(CancellationToken cancellationToken);

    /// <summary>Waits before the next pass (the poll interval by default).</summary>
    protected abstract Task WaitAsync(int handled, CancellationToken cancellationToken);

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        try
        {
            await migrator.Ready.WaitAsync(stoppingToken);
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            return;
        }
        catch (Exception ex)
        {
            // The migrator has logged why; without the registry's tables there is nothing to do until a restart.
            LogRegistryUnavailable(Name, ex);
            return;
        }

        while (!stoppingToken.IsCancellationRequested)
        {
            int handled = 0;
            try
            {
                handled = await RunOnceAsync(stoppingToken);
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
            catch (Exception ex)
            {
                LogPassFailed(Name, ex);
            }

            try
            {
                await WaitAsync(handled, stoppingToken);
            }
            catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
            {
                return;
            }
        }
    }

    [LoggerMessage(3110, LogLevel.Warning, "{Loop}: the registry is not available (its migrations failed); guardian notices are off until Saito restarts with it fixed")]
    private partial void LogRegistryUnavailable(string loop, Exception exception);

    [LoggerMessage(3111, LogLevel.Error, "{Loop}: a pass failed; trying again at the next poll (queued notices stay in the outbox)")]
    private partial void LogPassFailed(string loop, Exception exception);
}

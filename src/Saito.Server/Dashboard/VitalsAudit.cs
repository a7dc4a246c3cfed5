using System.Threading.Channels;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Server.Dashboard;

/// <summary>
/// The audit of who looked at whose vital signs: one <c>vitals_view</c> row per student each time a dashboard
/// starts showing a class, a student's page opens, or the readings API returns a student's readings. Queued and
/// written in batches; admins list them at <c>/audit</c> and <c>GET /api/audit/vitals-views</c>.
/// </summary>
public sealed partial class VitalsAudit(RegistryContextFactory contexts, TimeProvider time, ILogger<VitalsAudit> logger) : BackgroundService
{
    public const string LiveClass = "live-class";
    public const string StudentPage = "student";
    public const string ReadingsApi = "api-readings";

    private readonly Channel<VitalsView> _views = Channel.CreateUnbounded<VitalsView>(new UnboundedChannelOptions { SingleReader = true });

    public void Viewed(string userName, IEnumerable<int> ownerIds, string via)
    {
        ArgumentNullException.ThrowIfNull(ownerIds);
        var at = time.GetUtcNow();
        foreach (int owner in ownerIds)
        {
            _views.Writer.TryWrite(new VitalsView { OwnerId = owner, UserName = userName, At = at, Via = via });
        }
    }

    public override Task StopAsync(CancellationToken cancellationToken)
    {
        _views.Writer.TryComplete();
        return base.StopAsync(cancellationToken);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var batch = new List<VitalsView>();
        while (await _views.Reader.WaitToReadAsync(CancellationToken.None))
        {
            while (batch.Count < 1000 && _views.Reader.TryRead(out var view))
            {
                batch.Add(view);
            }

            try
            {
                await using var db = contexts.Create();
                db.VitalsViews.AddRange(batch);
                await db.SaveChangesAsync(CancellationToken.None);
                batch.Clear();
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                LogWriteFailed(ex, batch.Count);
                foreach (var view in batch)
                {
                    view.Id = 0;
                }

                if (stoppingToken.IsCancellationRequested)
                {
                    return;
                }

                await Task.Delay(TimeSpan.FromSeconds(1), stoppingToken);
            }
        }
    }

    [LoggerMessage(5030, LogLevel.Error, "Could not store {Count} vitals-view audit row(s); trying again")]
    private partial void LogWriteFailed(Exception exception, int count);
}

using System.Threading.Channels;
using Microsoft.EntityFrameworkCore;
using Saito.Live.Alerts;
using Saito.Registry.Hosting;
using Saito.Registry.Model;

namespace Saito.Server.Dashboard;

/// <summary>
/// Writes every alert event to the <c>alert</c> table: a row when raised, updated when escalated, acknowledged
/// and cleared. Events are queued by the live view and written in batches on this loop, so a slow database delays
/// the history page, not the dashboards. A failed write is retried with the next batch; the queue is drained on
/// shutdown.
/// </summary>
public sealed partial class AlertRecorder(RegistryContextFactory contexts, ILogger<AlertRecorder> logger) : BackgroundService
{
    private readonly Channel<(AlertEvent Event, int? ClassId)> _events = Channel.CreateUnbounded<(AlertEvent, int?)>(new UnboundedChannelOptions { SingleReader = true });
    private long _written;

    /// <summary>Events written so far (tests wait on it).</summary>
    public long Written => Interlocked.Read(ref _written);

    public ValueTask RecordAsync(AlertEvent alert, int? classId, CancellationToken cancellationToken) => _events.Writer.WriteAsync((alert, classId), cancellationToken);

    public override Task StopAsync(CancellationToken cancellationToken)
    {
        _events.Writer.TryComplete();
        return base.StopAsync(cancellationToken);
    }

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        var batch = new List<(AlertEvent Event, int? ClassId)>();
        while (await _events.Reader.WaitToReadAsync(CancellationToken.None))
        {
            while (batch.Count < 500 && _events.Reader.TryRead(out var e))
            {
                batch.Add(e);
            }

            try
            {
                await WriteAsync(batch, stoppingToken.IsCancellationRequested ? CancellationToken.None : stoppingToken);
                Interlocked.Add(ref _written, batch.Count);
                batch.Clear();
            }
            catch (Exception ex) when (ex is not OperationCanceledException)
            {
                LogWriteFailed(ex, batch.Count);
                if (stoppingToken.IsCancellationRequested)
                {
                    return;
                }

                await Task.Delay(TimeSpan.FromSeconds(1), stoppingToken);
            }
        }
    }

    private async Task WriteAsync(List<(AlertEvent Event, int? ClassId)> batch, CancellationToken cancellationToken)
    {
        await using var db = contexts.Create();
        var ids = batch.Select(b => b.Event.AlertId).Distinct().ToList();
        var rows = await db.Alerts.Where(a => ids.Contains(a.Id)).ToDictionaryAsync(a => a.Id, cancellationToken);
        foreach (var (e, classId) in batch)
        {
            if (!rows.TryGetValue(e.AlertId, out var row))
            {
                row = new AlertRecord
                {
                    Id = e.AlertId,
                    OwnerId = e.OwnerId,
                    ClassId = classId,
                    Kind = AlertKinds.Name(e.Kind),
                    RaisedAt = new DateTimeOffset(e.At),
                    Level = e.Level,
                    Value = e.Value,
                    Detail = Truncate(e.Detail),
                };
                db.Alerts.Add(row);
                rows[e.AlertId] = row;
            }

            var at = new DateTimeOffset(e.At);
            switch (e.Type)
            {
                case AlertEventType.Escalated:
                    row.Level = e.Level;
                    row.EscalatedAt = at;
                    break;
                case AlertEventType.Acknowledged:
                    row.AcknowledgedAt = at;
                    row.AcknowledgedBy = e.AcknowledgedBy;
                    break;
                case AlertEventType.Cleared:
                    row.ClearedAt = at;
                    break;
                default:
                    break;
            }
        }

        await db.SaveChangesAsync(cancellationToken);
    }

    private static string Truncate(string detail) =>
        detail.Length <= Saito.Registry.Data.RegistryDbContext.NoteLength ? detail : detail[..Saito.Registry.Data.RegistryDbContext.NoteLength];

    [LoggerMessage(5020, LogLevel.Error, "Could not store {Count} alert event(s); trying again")]
    private partial void LogWriteFailed(Exception exception, int count);
}

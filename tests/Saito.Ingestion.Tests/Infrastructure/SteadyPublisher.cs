using System.Text;
using Saito.Mqtt.Packets;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// A hub publishing one biosensor reading at QoS 1 every <c>interval</c> on its own device, each with a timestamp of
/// its own, as a real hub does: with at most <c>maxInFlight</c> publishes unacknowledged (under Saito's Receive
/// Maximum), waiting for acknowledgements past it. Keeps every publish's outcome so a test can compare what was
/// acknowledged with what is stored.
/// </summary>
public sealed class SteadyPublisher : IAsyncDisposable
{
    private readonly TestHub _hub;
    private readonly string _topic;
    private readonly TimeSpan _interval;
    private readonly int _maxInFlight;
    private readonly long _baseMs = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds() - 60_000;
    private readonly List<Task<MqttReasonCode>> _publishes = [];
    private readonly CancellationTokenSource _stop = new();
    private Task _loop = Task.CompletedTask;

    private SteadyPublisher(TestHub hub, string device, TimeSpan interval, int maxInFlight)
    {
        _hub = hub;
        _topic = $"saito/hub-1/{device}/biosensor";
        _interval = interval;
        _maxInFlight = maxInFlight;
    }

    public static async Task<SteadyPublisher> StartAsync(int port, string device, TimeSpan interval, int maxInFlight = 100)
    {
        var hub = await TestHub.ConnectAsync(new TestHubOptions { Port = port }, TestContext.Current.CancellationToken);
        var publisher = new SteadyPublisher(hub, device, interval, maxInFlight);
        publisher._loop = Task.Run(publisher.RunAsync, CancellationToken.None);
        return publisher;
    }

    public bool IsConnected => _hub.IsConnected;

    /// <summary>Every publish so far.</summary>
    public IReadOnlyList<Task<MqttReasonCode>> Publishes
    {
        get
        {
            lock (_publishes)
            {
                return [.. _publishes];
            }
        }
    }

    // Result is read only from tasks already completed (IsCompletedSuccessfully first): no blocking wait.
#pragma warning disable VSTHRD002
    public int Acknowledged => Publishes.Count(p => p.IsCompletedSuccessfully && p.Result == MqttReasonCode.Success);

    public int Waiting => Publishes.Count(p => !p.IsCompleted);

    /// <summary>Publishes that ended any other way than acknowledged as stored (a refusal, a closed connection).</summary>
    public IReadOnlyList<string> Failures =>
    [
        .. Publishes.Where(p => p.IsFaulted || (p.IsCompletedSuccessfully && p.Result != MqttReasonCode.Success))
            .Select(p => p.IsFaulted ? p.Exception!.GetBaseException().Message : p.Result.ToString()),
    ];

#pragma warning restore VSTHRD002

    /// <summary>Stops publishing (what is in flight stays in flight).</summary>
    public async Task StopAsync()
    {
        await _stop.CancelAsync();
#pragma warning disable VSTHRD003 // the loop was started by this object's constructor
        await _loop;
#pragma warning restore VSTHRD003
    }

    private async Task RunAsync()
    {
        var token = _stop.Token;
        for (int i = 0; !token.IsCancellationRequested; i++)
        {
            while (Waiting >= _maxInFlight && !token.IsCancellationRequested)
            {
                await Task.WhenAny(Task.WhenAny(Publishes.Where(p => !p.IsCompleted)), Task.Delay(Timeout.Infinite, token));
            }

            if (token.IsCancellationRequested)
            {
                return;
            }

            byte[] payload = Encoding.UTF8.GetBytes($"{{\"ts\":{_baseMs + i},\"hr\":{60 + (i % 100)}}}");
            var publish = _hub.PublishAsync(_topic, payload, MqttQoS.AtLeastOnce, CancellationToken.None);
            lock (_publishes)
            {
                _publishes.Add(publish);
            }

            try
            {
                await Task.Delay(_interval, token);
            }
            catch (OperationCanceledException)
            {
                return;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        await StopAsync();
        await _hub.DisposeAsync();
        _stop.Dispose();
    }
}

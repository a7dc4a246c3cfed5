using System.Collections.Concurrent;
using System.Text;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Saito.Mqtt.Client;
using Saito.Mqtt.Packets;

namespace Saito.Mqtt.Tests.Client;

internal static class ClientTestSupport
{
    /// <summary>Every wait in these tests is bounded by this.</summary>
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(15);

    public static MqttClientOptions Options(BrokerEndpoint broker, MqttProtocolVersion version, string? clientId = null) => new()
    {
        Host = broker.Host,
        Port = broker.Port,
        ProtocolVersion = version,
        ClientId = clientId ?? NewClientId(),
        KeepAlive = TimeSpan.FromSeconds(30),
        ConnectTimeout = TimeSpan.FromSeconds(5),
        Reconnect = new MqttReconnectOptions { InitialDelay = TimeSpan.FromMilliseconds(50), MaxDelay = TimeSpan.FromMilliseconds(500), Jitter = 0.2 },
    };

    /// <summary>Options for a session that outlives the connection, in the dialect of each version.</summary>
    public static MqttClientOptions PersistentSession(BrokerEndpoint broker, MqttProtocolVersion version, string clientId)
    {
        var options = Options(broker, version, clientId);
        options.CleanStart = false;
        if (version == MqttProtocolVersion.V500)
        {
            options.SessionExpiry = TimeSpan.FromMinutes(5);
        }

        return options;
    }

    public static string NewClientId() => "saito-test-" + Guid.NewGuid().ToString("N")[..12];

    public static string NewTopic(string what) => $"test/{what}/{Guid.NewGuid():N}";

    public static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);

    public static string Text(this MqttReceivedMessage message) => Encoding.UTF8.GetString(message.Payload.Span);

    public static CancellationTokenSource TimeoutToken(TimeSpan? timeout = null)
    {
        var cts = CancellationTokenSource.CreateLinkedTokenSource(TestContext.Current.CancellationToken);
        cts.CancelAfter(timeout ?? Timeout);
        return cts;
    }

    /// <summary>The next message, or a clear failure after <see cref="Timeout"/>.</summary>
    public static async Task<MqttReceivedMessage> NextAsync(this ChannelReader<MqttReceivedMessage> messages, TimeSpan? timeout = null)
    {
        using var cts = TimeoutToken(timeout);
        try
        {
            return await messages.ReadAsync(cts.Token);
        }
        catch (OperationCanceledException) when (!TestContext.Current.CancellationToken.IsCancellationRequested)
        {
            throw new TimeoutException($"No message arrived within {timeout ?? Timeout}.");
        }
    }

    /// <summary>Reads until a message on <paramref name="sentinelTopic"/> arrives; returns the ones before it (sentinel excluded).</summary>
    public static async Task<List<MqttReceivedMessage>> ReadUntilSentinelAsync(this ChannelReader<MqttReceivedMessage> messages, string sentinelTopic)
    {
        var before = new List<MqttReceivedMessage>();
        while (true)
        {
            var message = await messages.NextAsync();
            if (message.Topic == sentinelTopic)
            {
                await message.AcknowledgeAsync();
                return before;
            }

            before.Add(message);
        }
    }
}

/// <summary>Keeps the client's log lines and lets a test wait for one by event id (a signal, not a sleep).</summary>
internal sealed class TestLogger : ILogger
{
    private readonly ConcurrentQueue<(int EventId, LogLevel Level, string Message)> _entries = new();
    private readonly Lock _lock = new();
    private readonly List<(int EventId, int Count, TaskCompletionSource Done)> _waiters = [];

    public IReadOnlyList<(int EventId, LogLevel Level, string Message)> Entries => [.. _entries];

    public int Count(int eventId) => _entries.Count(e => e.EventId == eventId);

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        string message = formatter(state, exception) + (exception is null ? string.Empty : $" [{exception.GetType().Name}: {exception.Message}]");
        _entries.Enqueue((eventId.Id, logLevel, message));
        try
        {
            TestContext.Current.TestOutputHelper?.WriteLine($"{DateTime.UtcNow:HH:mm:ss.fff} {logLevel} {eventId.Id} {message}");
        }
        catch (InvalidOperationException)
        {
            // The test has finished; a late line from a background loop has nowhere to go.
        }

        lock (_lock)
        {
            foreach (var waiter in _waiters.Where(w => w.EventId == eventId.Id && Count(w.EventId) >= w.Count).ToList())
            {
                waiter.Done.TrySetResult();
                _waiters.Remove(waiter);
            }
        }
    }

    /// <summary>Waits until event <paramref name="eventId"/> has been logged <paramref name="count"/> times in all.</summary>
    public async Task WaitForAsync(int eventId, int count = 1, TimeSpan? timeout = null)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_lock)
        {
            if (Count(eventId) >= count)
            {
                return;
            }

            _waiters.Add((eventId, count, done));
        }

        try
        {
            await done.Task.WaitAsync(timeout ?? ClientTestSupport.Timeout, TestContext.Current.CancellationToken);
        }
        catch (TimeoutException)
        {
            throw new TimeoutException($"Log event {eventId} seen {Count(eventId)} of {count} times. Log:\n"
                + string.Join('\n', _entries.Select(e => $"{e.EventId} {e.Message}")));
        }
    }
}

/// <summary>Records Connected/Disconnected events in order; tests wait for the next one.</summary>
internal sealed class ConnectionEvents
{
    private readonly Channel<EventArgs> _events = Channel.CreateUnbounded<EventArgs>();

    public ConnectionEvents(MqttClient client)
    {
        client.Connected += (_, e) => _events.Writer.TryWrite(e);
        client.Disconnected += (_, e) => _events.Writer.TryWrite(e);
    }

    public async Task<T> NextAsync<T>()
        where T : EventArgs
    {
        using var cts = ClientTestSupport.TimeoutToken();
        var next = await _events.Reader.ReadAsync(cts.Token);
        return next.ShouldBeOfType<T>();
    }

    public bool TryPeekAny(out EventArgs? next) => _events.Reader.TryPeek(out next);
}

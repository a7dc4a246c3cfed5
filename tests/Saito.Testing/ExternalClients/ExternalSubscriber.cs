using System.Text;

namespace Saito.Testing;

/// <summary>What a subscriber process reported on one line of its stdout.</summary>
internal abstract record SubscriberEvent
{
    public sealed record Connected(bool SessionPresent) : SubscriberEvent;

    public sealed record Subscribed(IReadOnlyList<int> Granted) : SubscriberEvent;

    public sealed record Message(ReceivedMessage Received) : SubscriberEvent;
}

/// <summary>
/// A running external subscriber. It collects every message its client prints; tests wait for
/// what they expect with <see cref="WaitForMessagesAsync"/> or <see cref="WaitUntilAsync"/>, which fail
/// with what did arrive and the client's stderr. Disposing kills the process if it still runs.
/// </summary>
public sealed class ExternalSubscriber : IAsyncDisposable
{
    private static readonly TimeSpan s_defaultWait = TimeSpan.FromSeconds(15);

    private readonly Lock _gate = new();
    private readonly List<ReceivedMessage> _messages = [];
    private readonly List<string> _problems = [];
    private readonly Func<string, SubscriberEvent?> _parse;
    private TaskCompletionSource _changed = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private ExternalProcess? _process;
    private IReadOnlyList<int>? _granted;
    private bool? _sessionPresent;

    internal ExternalSubscriber(string clientName, Func<string, SubscriberEvent?> parse)
    {
        ClientName = clientName;
        _parse = parse;
    }

    public string ClientName { get; }

    /// <summary>QoS (or reason codes) from the SUBACK; null until it arrived.</summary>
    public IReadOnlyList<int>? GrantedQoS
    {
        get
        {
            lock (_gate)
            {
                return _granted;
            }
        }
    }

    /// <summary>The CONNACK's session-present flag; null when the client does not print it (mosquitto_sub).</summary>
    public bool? SessionPresent
    {
        get
        {
            lock (_gate)
            {
                return _sessionPresent;
            }
        }
    }

    /// <summary>Everything received so far, in arrival order.</summary>
    public IReadOnlyList<ReceivedMessage> Messages
    {
        get
        {
            lock (_gate)
            {
                return [.. _messages];
            }
        }
    }

    private ExternalProcess Process => _process ?? throw new InvalidOperationException("Subscriber not started");

    /// <summary>Waits until at least <paramref name="count"/> messages arrived and returns all received so far.</summary>
    public Task<IReadOnlyList<ReceivedMessage>> WaitForMessagesAsync(int count, TimeSpan? timeout = null, CancellationToken cancellationToken = default) =>
        WaitUntilAsync(m => m.Count >= count, $"{count} message(s)", timeout, cancellationToken);

    /// <summary>Waits until <paramref name="condition"/> holds for the messages received so far.</summary>
    public async Task<IReadOnlyList<ReceivedMessage>> WaitUntilAsync(
        Func<IReadOnlyList<ReceivedMessage>, bool> condition, string description, TimeSpan? timeout = null, CancellationToken cancellationToken = default)
    {
        IReadOnlyList<ReceivedMessage> result = [];
        await WaitForStateAsync(() => condition(result = [.. _messages]), description, timeout ?? s_defaultWait, cancellationToken);
        return result;
    }

    /// <summary>Waits for the client to exit on its own (after its message count) with exit code 0.</summary>
    public async Task WaitForExitAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default)
    {
        int exitCode = await Process.WaitForExitAsync(timeout ?? s_defaultWait, cancellationToken);
        ThrowIfProblems();
        if (exitCode != 0)
        {
            throw Failure($"exited with code {exitCode}");
        }
    }

    /// <summary>Kills the client (SIGKILL): its connection ends without DISCONNECT, so the broker sends its will.</summary>
    public Task DropAsync() => Process.KillAsync();

    public async ValueTask DisposeAsync()
    {
        if (_process is not null)
        {
            await _process.DisposeAsync();
        }
    }

    internal void Start(ProcessCommand command) =>
        _process = ExternalProcess.Start(ClientName, command, OnLine);

    internal Task WaitUntilSubscribedAsync(TimeSpan timeout, CancellationToken cancellationToken) =>
        WaitForStateAsync(() => _granted is not null, "the SUBACK", timeout, cancellationToken);

    internal ExternalClientException Failure(string what)
    {
        string received;
        lock (_gate)
        {
            received = Describe(_messages.TakeLast(20));
        }

        return new ExternalClientException($"{ClientName} subscriber {what}.\n  received so far:{received}\n{Process.Describe()}");
    }

    private async Task WaitForStateAsync(Func<bool> condition, string what, TimeSpan timeout, CancellationToken cancellationToken)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        deadline.CancelAfter(timeout);
        while (true)
        {
            Task changed;
            lock (_gate)
            {
                if (condition())
                {
                    return;
                }

                changed = _changed.Task;
            }

            ThrowIfProblems();
            if (Process.HasExited)
            {
                // Exited completes only after all output was read, so nothing more will come.
                throw Failure($"exited before {what}");
            }

            try
            {
                await Task.WhenAny(changed, Process.Exited).WaitAsync(deadline.Token);
            }
            catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
            {
                throw Failure($"did not see {what} within {timeout.TotalSeconds:0.#} s");
            }
        }
    }

    private void ThrowIfProblems()
    {
        lock (_gate)
        {
            if (_problems.Count > 0)
            {
                throw Failure("printed something unexpected: " + string.Join("; ", _problems));
            }
        }
    }

    private void OnLine(string line)
    {
        SubscriberEvent? parsed;
        try
        {
            parsed = _parse(line);
        }
        catch (FormatException ex)
        {
            lock (_gate)
            {
                _problems.Add($"{ex.Message} in line {Truncate(line)}");
                Signal();
            }

            return;
        }

        lock (_gate)
        {
            switch (parsed)
            {
                case SubscriberEvent.Connected connected:
                    _sessionPresent = connected.SessionPresent;
                    break;
                case SubscriberEvent.Subscribed subscribed:
                    if (subscribed.Granted.Any(code => code >= 0x80))
                    {
                        _problems.Add($"SUBACK refused: reason codes [{string.Join(", ", subscribed.Granted)}]");
                    }

                    _granted = subscribed.Granted;
                    break;
                case SubscriberEvent.Message message:
                    _messages.Add(message.Received);
                    break;
                default:
                    return;
            }

            Signal();
        }
    }

    private void Signal()
    {
        var previous = _changed;
        _changed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        previous.TrySetResult();
    }

    private static string Truncate(string line) => line.Length > 200 ? line[..200] + "…" : line;

    private static string Describe(IEnumerable<ReceivedMessage> messages)
    {
        var text = new StringBuilder();
        foreach (var message in messages)
        {
            text.Append("\n    ").Append(message);
        }

        return text.Length == 0 ? " (none)" : text.ToString();
    }
}

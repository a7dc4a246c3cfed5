using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The readings and dead letters of one MQTT message, waiting to be committed. Its task completes when a
/// writer has committed all of them (or gives up on them), and only then is the message acknowledged.
/// </summary>
internal sealed class PendingMessage
{
    // Continuations run where the message is completed: ReadingWriterPool completes a committed batch's messages from
    // one thread-pool work item, so each message's acknowledgement path runs there in turn instead of costing a
    // thread-pool hop of its own, and a connection's send loop (signalled, not run inline) finds its acknowledgements
    // ready together and writes them in one send.
    private readonly TaskCompletionSource<WriteOutcome> _completion = new();

    public PendingMessage(string topic, string? clientId, ReadOnlyMemory<byte> payload, List<Reading> readings, List<DeadLetter> deadLetters)
    {
        Topic = topic;
        ClientId = clientId;
        Payload = payload;
        Readings = readings;
        DeadLetters = deadLetters;
        EnqueuedAt = System.Diagnostics.Stopwatch.GetTimestamp();
    }

    public string Topic { get; }
    public string? ClientId { get; }

    /// <summary>Kept so that, if the database refuses the message outright, it can be dead-lettered whole.</summary>
    public ReadOnlyMemory<byte> Payload { get; }

    public List<Reading> Readings { get; }
    public List<DeadLetter> DeadLetters { get; }

    /// <summary>How much of the queue's capacity this message holds (at least 1).</summary>
    public int Weight => Math.Max(1, Readings.Count + DeadLetters.Count);

    public long EnqueuedAt { get; }

    public Task<WriteOutcome> Completion => _completion.Task;

    public void Complete(WriteOutcome outcome) => _completion.TrySetResult(outcome);

    public void Fail(Exception exception) => _completion.TrySetException(exception);
}

/// <summary>What became of a message's readings.</summary>
internal enum WriteOutcome
{
    /// <summary>Every reading and dead letter is committed.</summary>
    Committed,

    /// <summary>The database refused the readings themselves; they are committed as dead letters instead.</summary>
    DeadLettered,
}

using System.Text;
using Saito.Readings;

namespace Saito.Payloads;

/// <summary>
/// The state of one <see cref="ReadingParser.Parse"/> call: the message's context, the time window, and scratch
/// lists the readings and dead letters go to first. They reach the caller only once the whole payload has
/// proved to be valid JSON, so a payload that breaks off half way gives one dead letter and no readings.
/// One session per thread, reused: the good path allocates nothing per message.
/// </summary>
internal sealed class ParseSession
{
    [ThreadStatic]
    private static ParseSession? t_cached;

    private const int TrimCapacity = 16 * 1024;

    public List<Reading> Readings { get; } = new(128);
    public List<DeadLetter> DeadLetters { get; } = [];

    // SenML scratch.
    public List<SenMLGroup> Groups { get; } = new(128);
    public Dictionary<(int Channel, long Ticks), int> GroupIndex { get; } = new(128);

    /// <summary>
    /// True while every group was created at a time no earlier than the one before (the usual pack): then a group
    /// of the same time can only be among the last ones and <see cref="GroupIndex"/> is not needed.
    /// </summary>
    public bool GroupsInTimeOrder { get; set; } = true;
    public List<(int Start, int End)> RecordSpans { get; } = new(128);
    public byte[] BaseName { get; } = new byte[ReadingLimits.MaxSenMLNameLength];
    public byte[] Name { get; } = new byte[ReadingLimits.MaxSenMLNameLength];
    public byte[] ResolvedName { get; } = new byte[ReadingLimits.MaxSenMLNameLength];

    /// <summary>For unescaping short strings (timestamps, units, labels).</summary>
    public byte[] Small { get; } = new byte[128];

    public ReadingKind Kind { get; private set; }
    public int DeviceId { get; private set; }
    public string Topic { get; private set; } = string.Empty;
    public string? ClientId { get; private set; }
    public DateTime ReceivedAt { get; private set; }
    public long ReceivedTicks { get; private set; }
    public int MaxReadings { get; private set; }

    /// <summary>Dead letters kept one by one per message (<c>Ingestion:MaxDeadLettersPerMessage</c>); the rest are counted.</summary>
    public int MaxDeadLetters { get; private set; }

    /// <summary>Rejections past <see cref="MaxDeadLetters"/>, by reason: they become one summary dead letter.</summary>
    public Dictionary<string, int> Uncounted { get; } = new(StringComparer.Ordinal);

    /// <summary>How many rejections past <see cref="MaxDeadLetters"/>.</summary>
    public int UncountedTotal { get; private set; }
    public int MaxFutureSkewSeconds { get; private set; }
    public int MaxAgeDays { get; private set; }

    /// <summary>Earliest and latest timestamp accepted, in ticks, both inclusive.</summary>
    public long EarliestTicks { get; private set; }
    public long LatestTicks { get; private set; }

    public static ParseSession Rent()
    {
        var session = t_cached ?? new ParseSession();
        t_cached = null; // a re-entrant call (from a collection's Add) gets its own
        return session;
    }

    public static void Return(ParseSession session)
    {
        session.Reset();
        t_cached = session;
    }

    public void Begin(in ReadingParseContext context, DateTime receivedAt, PayloadLimits options)
    {
        Kind = context.Kind;
        DeviceId = context.DeviceId;
        Topic = context.Topic ?? string.Empty;
        ClientId = context.ClientId;
        ReceivedAt = receivedAt;
        ReceivedTicks = receivedAt.Ticks;
        MaxReadings = Math.Max(1, options.MaxReadingsPerMessage);
        MaxDeadLetters = Math.Max(1, options.MaxDeadLettersPerMessage);
        MaxFutureSkewSeconds = Math.Max(0, options.MaxFutureSkewSeconds);
        MaxAgeDays = Math.Max(0, options.MaxAgeDays);
        LatestTicks = Math.Min(DateTime.MaxValue.Ticks, ReceivedTicks + (MaxFutureSkewSeconds * TimeSpan.TicksPerSecond));
        EarliestTicks = Math.Max(0, ReceivedTicks - (MaxAgeDays * TimeSpan.TicksPerDay));
    }

    /// <summary>Drops what this message gave so far (the payload turned out not to be JSON, or a SenML pack is unusable).</summary>
    public void ClearOutputs()
    {
        Readings.Clear();
        DeadLetters.Clear();
        Uncounted.Clear();
        UncountedTotal = 0;
    }

    private void Reset()
    {
        ClearOutputs();
        Groups.Clear();
        GroupIndex.Clear();
        RecordSpans.Clear();
        GroupsInTimeOrder = true;
        if (Readings.Capacity > TrimCapacity)
        {
            Readings.Capacity = 128;
        }

        if (Groups.Capacity > TrimCapacity)
        {
            Groups.Capacity = 128;
            RecordSpans.Capacity = 128;
            GroupIndex.TrimExcess(128);
        }

        Topic = string.Empty;
        ClientId = null;
    }

    public void Reject(string reason, string detail, ReadOnlySpan<byte> payload)
    {
        if (!OverTheCap(reason))
        {
            DeadLetters.Add(DeadLetter.FromPayload(ReceivedAt, Topic, ClientId, reason, detail, payload));
        }
    }

    public void Reject(string reason, string detail, string payloadText)
    {
        if (!OverTheCap(reason))
        {
            DeadLetters.Add(new DeadLetter(ReceivedAt, Topic, ClientId, reason, detail, payloadText));
        }
    }

    /// <summary>
    /// After <see cref="MaxDeadLetters"/> dead letters a rejection is only counted, so that a message of 10,000 bad
    /// readings costs 100 rows and one summary (<see cref="AddSummary"/>), not 10,000.
    /// </summary>
    private bool OverTheCap(string reason)
    {
        if (DeadLetters.Count < MaxDeadLetters)
        {
            return false;
        }

        Uncounted[reason] = Uncounted.GetValueOrDefault(reason) + 1;
        UncountedTotal++;
        return true;
    }

    /// <summary>
    /// The one dead letter for the rejections past the cap: how many, the most common reasons, and the whole message
    /// as payload, so that nothing of it is lost.
    /// </summary>
    public void AddSummary(ReadOnlySpan<byte> wholePayload)
    {
        if (UncountedTotal == 0)
        {
            return;
        }

        string reasons = string.Join(", ", Uncounted.OrderByDescending(r => r.Value).ThenBy(r => r.Key, StringComparer.Ordinal).Take(3)
            .Select(r => System.FormattableString.Invariant($"{r.Key} ({r.Value})")));
        string detail = System.FormattableString.Invariant(
            $"{UncountedTotal} more reading(s) or record(s) of this message were rejected after the first {MaxDeadLetters} dead letters (Ingestion:MaxDeadLettersPerMessage); most common: {reasons}; the payload here is the whole message");
        DeadLetters.Add(DeadLetter.FromPayload(ReceivedAt, Topic, ClientId, DeadLetterReasons.TooManyRejections, detail, wholePayload));
    }

    /// <summary>A timestamp inside the window gives null; else the reason and a detail naming the limit.</summary>
    public string? CheckTime(long ticks, string what, out string reason)
    {
        if (ticks > LatestTicks)
        {
            reason = DeadLetterReasons.TimestampFuture;
            return FormattableString.Invariant(
                $"{what} {FormatTicks(ticks)} is {Ahead(ticks)} ahead of the time Saito received the message ({FormatTicks(ReceivedTicks)}); at most {MaxFutureSkewSeconds} s is allowed (Ingestion:MaxFutureSkewSeconds)");
        }

        if (ticks < EarliestTicks)
        {
            reason = DeadLetterReasons.TimestampPast;
            return FormattableString.Invariant(
                $"{what} {FormatTicks(ticks)} is more than {MaxAgeDays} days before the time Saito received the message ({FormatTicks(ReceivedTicks)}) (Ingestion:MaxAgeDays)");
        }

        reason = string.Empty;
        return null;
    }

    private string Ahead(long ticks)
    {
        double seconds = (ticks - (double)ReceivedTicks) / TimeSpan.TicksPerSecond;
        return seconds < 86_400 * 2
            ? FormattableString.Invariant($"{seconds:0.######} s")
            : FormattableString.Invariant($"{seconds / 86_400:0.#} days");
    }

    /// <summary>ISO 8601 UTC to the microsecond, or a plain tick count outside the calendar.</summary>
    public static string FormatTicks(long ticks) =>
        ticks >= 0 && ticks <= DateTime.MaxValue.Ticks
            ? new DateTime(ticks, DateTimeKind.Utc).ToString("yyyy-MM-dd'T'HH:mm:ss.ffffff'Z'", System.Globalization.CultureInfo.InvariantCulture)
            : FormattableString.Invariant($"(outside the calendar: {ticks} ticks)");

    /// <summary>A short excerpt of a token, for details ("got \"72\"").</summary>
    public static string Excerpt(ReadOnlySpan<byte> token)
    {
        const int Max = 48;
        string text = Encoding.UTF8.GetString(token.Length <= Max ? token : token[..Max]);
        return token.Length <= Max ? text : text + "...";
    }
}

using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Payloads;
using Saito.Readings;

namespace Saito.Ingestion.Pipeline;

/// <summary>One MQTT message as the ingestion pipeline sees it, from the embedded broker or an external one.</summary>
public readonly record struct InboundMessage(string Topic, ReadOnlyMemory<byte> Payload, string? ClientId, string? ContentType, DateTime ReceivedAt);

/// <summary>What became of a message.</summary>
public enum IngestResult
{
    /// <summary>Not on a Saito topic (not under <c>Ingestion:TopicPrefix</c>): nothing to store.</summary>
    NotOurs,

    /// <summary>Everything in it is committed: its readings, and dead letters for what was rejected.</summary>
    Stored,

    /// <summary>A hello: the device's registration is committed.</summary>
    DeviceAnnounced,

    /// <summary>A check-in: the registry has committed it (or it was one already recorded).</summary>
    CheckedIn,
}

/// <summary>
/// Topic, device, payload, queue: takes one message from MQTT to committed rows, and completes only when they are
/// durable. Bad input never throws out of here: every rejected reading (or a whole message that does not parse)
/// becomes a dead letter committed with the good readings beside it. What can throw is the database staying
/// unreachable until the caller gives up, or Saito shutting down; then nothing is acknowledged.
/// </summary>
public sealed partial class MessageIngestor
{
    private readonly ReadingParser _parser;
    private readonly DeviceRegistry _registry;
    private readonly HubSiteRules _siteRules;
    private readonly ReadingWriterPool _writers;
    private readonly StorageStartup _storage;
    private readonly IngestionMetrics _metrics;
    private readonly ILogger<MessageIngestor> _logger;
    private readonly ICheckInRecorder? _checkIns;
    private readonly DeviceActivity? _activity;
    private readonly IngestionOptions _options;
    private readonly string _prefix;
    private readonly string _prefixWithSlash;
    private readonly object _logWindowLock = new();
    private long _logWindowStart;
    private int _loggedInWindow;
    private int _suppressedInWindow;

    public MessageIngestor(ReadingParser parser, DeviceRegistry registry, HubSiteRules siteRules, ReadingWriterPool writers, StorageStartup storage, IngestionMetrics metrics,
        IOptions<IngestionOptions> options, ILogger<MessageIngestor> logger, ICheckInRecorder? checkIns = null, DeviceActivity? activity = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Value;
        _parser = parser;
        _registry = registry;
        _siteRules = siteRules;
        _writers = writers;
        _storage = storage;
        _metrics = metrics;
        _logger = logger;
        _checkIns = checkIns;
        _activity = activity;
        _prefix = options.Value.TopicPrefix;
        _prefixWithSlash = _prefix + "/";
    }

    /// <summary>Topic, then the hub-site gate, then the hello, check-in or readings step, then whatever it came to is submitted.</summary>
    public async Task<IngestResult> IngestAsync(InboundMessage message, CancellationToken cancellationToken)
    {
        if (!message.Topic.StartsWith(_prefixWithSlash, StringComparison.Ordinal))
        {
            return IngestResult.NotOurs;
        }

        await WhenStorageReadyAsync(cancellationToken);
        _metrics.Message();
        if (!SaitoTopicParser.TryParse(message.Topic, _prefix, out var topic, out string? topicError))
        {
            return await SubmitAsync(message, Refuse(message, IngestionMetrics.UnknownKindIndex, DeadLetterReasons.BadTopic, topicError), cancellationToken);
        }

        int? knownId = _registry.TryGetKnownId(topic.Device, out int id) ? id : null;
        var outcome = await _siteRules.GateAsync(topic, knownId is not null, cancellationToken) is { } otherSite
            ? RefuseOtherSite(message, topic, otherSite)
            : topic.Kind switch
            {
                TopicKind.Hello => await HelloAsync(message, topic, knownId, cancellationToken),
                TopicKind.CheckIn => await CheckInAsync(message, topic, knownId, cancellationToken),
                _ => await ReadingsAsync(message, topic, knownId, cancellationToken),
            };
        return await SubmitAsync(message, outcome, cancellationToken);
    }

    /// <summary>
    /// A hub that publishes while Saito is still creating its tables or loading its devices waits for that, rather than
    /// having a new serial registered against a table that is not there yet (a refusal the hub must resend). If preparing
    /// the database failed, this throws and the message is not acknowledged.
    /// </summary>
    private async ValueTask WhenStorageReadyAsync(CancellationToken cancellationToken)
    {
        if (!_storage.Ready.IsCompletedSuccessfully)
        {
            await _storage.Ready.WaitAsync(cancellationToken);
        }
    }

    /// <summary>
    /// A hello: what the device says of itself is recorded (registering it when it is new), and nothing is submitted; a
    /// hello that does not parse is a dead letter.
    /// </summary>
    private async ValueTask<Outcome> HelloAsync(InboundMessage message, SaitoTopic topic, int? knownId, CancellationToken cancellationToken)
    {
        if (!_parser.TryParseHello(message.Payload.Span, topic.Hub, out var announcement, out string? helloError))
        {
            // Counted, not logged (as a hello's dead letter always was).
            return DeadLettered(message, IngestionMetrics.KindIndex(topic.Kind), DeadLetterReasons.BadHello, helloError);
        }

        if (_siteRules.RegistersBeforeHello(knownId is not null) && (await RegisterNewAsync(message, topic, cancellationToken)).Refused is { } refused)
        {
            return refused;
        }

        if (await _registry.AnnounceAsync(topic.Device, topic.Hub, announcement, cancellationToken) is not { } id)
        {
            return RefuseNewDevice(message, topic);
        }

        LogHello(topic.Device, id, announcement.Kind, announcement.Firmware);
        return new Outcome(IngestResult.DeviceAnnounced);
    }

    /// <summary>
    /// Readings, with dead letters for what was rejected. A new serial is registered only for a message with a reading in
    /// it: garbage on invented serials leaves dead letters, not permanent device rows. Its readings are parsed first
    /// (device 0) and get the id once it has one.
    /// </summary>
    private async ValueTask<Outcome> ReadingsAsync(InboundMessage message, SaitoTopic topic, int? knownId, CancellationToken cancellationToken)
    {
        var readings = new List<Reading>();
        var deadLetters = new List<DeadLetter>();
        int deviceId = knownId ?? 0;
        _parser.Parse(Context(topic, deviceId, message), message.Payload.Span, readings, deadLetters);
        if (knownId is null)
        {
            if (readings.Count == 0)
            {
                return Parsed(message, topic, readings, deadLetters);
            }

            (deviceId, var refused) = await RegisterNewAsync(message, topic, cancellationToken);
            if (refused is not null)
            {
                return refused.Value;
            }

            for (int i = 0; i < readings.Count; i++)
            {
                readings[i] = readings[i].WithDevice(deviceId);
            }
        }

        _activity?.Seen(deviceId);
        return Parsed(message, topic, readings, deadLetters);
    }

    /// <summary>
    /// A device new here, registered: its id; or the refusal of its message when its hub is past
    /// <c>Ingestion:MaxNewDevicesPerHubPerHour</c>, or when it was registered already (by another Saito sharing the
    /// database) through a hub of another site.
    /// </summary>
    private async ValueTask<(int Id, Outcome? Refused)> RegisterNewAsync(InboundMessage message, SaitoTopic topic, CancellationToken cancellationToken)
    {
        if (await _registry.GetIdAsync(topic.Device, topic.Hub, cancellationToken) is not { } id)
        {
            return (0, RefuseNewDevice(message, topic));
        }

        return (id, await _siteRules.OtherSiteAsync(topic, cancellationToken) is { } otherSite ? RefuseOtherSite(message, topic, otherSite) : null);
    }

    private static ReadingParseContext Context(SaitoTopic topic, int deviceId, InboundMessage message) =>
        new(topic.ReadingKind!.Value, deviceId, message.Topic, message.ClientId, message.ReceivedAt, message.ContentType);

    /// <summary>Counts and logs what a message's parse gave: its readings and dead letters, to be submitted together.</summary>
    private Outcome Parsed(InboundMessage message, SaitoTopic topic, List<Reading> readings, List<DeadLetter> deadLetters)
    {
        _metrics.Received(topic.ReadingKind!.Value, readings.Count);
        if (deadLetters.Count > 0)
        {
            int kindIndex = IngestionMetrics.KindIndex(topic.Kind);
            foreach (var letter in deadLetters)
            {
                _metrics.DeadLettered(letter.Reason, kindIndex);
            }

            LogRejection(message.Topic, deadLetters[0].Reason, $"{deadLetters.Count} dead letter(s), {readings.Count} reading(s) kept; first: {deadLetters[0].Detail}");
        }

        return new Outcome(IngestResult.Stored, readings, deadLetters);
    }

    /// <summary>
    /// A fingerprint reader's check-in: parsed, then recorded by the registry (committed before this returns, so the
    /// acknowledgement means it is durable). A payload that cannot be read, an owner the registry does not know, a
    /// check-out with no open check-in, or a registry that is down becomes a dead letter with the reason; nothing is
    /// dropped silently. A new reader's serial (<paramref name="knownReaderId"/> null) is registered only once a
    /// check-in of it is recorded, as a sensor's is only with a valid reading.
    /// </summary>
    private async ValueTask<Outcome> CheckInAsync(InboundMessage message, SaitoTopic topic, int? knownReaderId, CancellationToken cancellationToken)
    {
        string reader = topic.Device;
        if (!CheckInParser.TryParse(message.Payload.Span, message.ReceivedAt, _options, out var checkIn, out string? error))
        {
            return Refuse(message, topic, DeadLetterReasons.BadCheckIn, error);
        }

        if (knownReaderId is { } known)
        {
            _activity?.Seen(known);
        }

        var recorded = _checkIns is null ? CheckInRecording.Unavailable : await _checkIns.RecordAsync(reader, checkIn, cancellationToken);
        if (recorded == CheckInRecording.Done)
        {
            if (knownReaderId is null)
            {
                await RegisterReaderAsync(topic, cancellationToken);
            }

            return new Outcome(IngestResult.CheckedIn);
        }

        var (reason, detail) = recorded switch
        {
            CheckInRecording.UnknownOwner => (DeadLetterReasons.UnknownOwner,
                FormattableString.Invariant($"reader {reader} sent owner {checkIn.OwnerId}, which the registry does not have (or is no longer active): enrol the owner, or check the reader's enrolment")),
            CheckInRecording.OutsideWindow => (DeadLetterReasons.BadCheckIn,
                FormattableString.Invariant($"reader {reader} sent a check-{(checkIn.CheckOut ? "out" : "in")} of owner {checkIn.OwnerId} stamped {checkIn.At:O}, outside CheckIns:ReaderMaxAgeSeconds before or CheckIns:ReaderMaxAheadSeconds after Saito's clock: a reader's check-in must be about now (a stale one would email the family); nothing recorded, no one told. Check the reader's clock, or check the student in by hand")),
            CheckInRecording.NotCheckedIn => (DeadLetterReasons.NotCheckedIn,
                FormattableString.Invariant($"reader {reader} sent a check-out of owner {checkIn.OwnerId} at {checkIn.At:O}, but the owner has no open check-in that school day before then (no arrival recorded, checked out already, or the arrival is later): nothing changed, the check-out is kept here")),
            _ => (DeadLetterReasons.RegistryUnavailable,
                FormattableString.Invariant($"the registry is unavailable (see Saito's log at start); check-in of owner {checkIn.OwnerId} by reader {reader} kept here")),
        };
        return Refuse(message, topic, reason, detail);
    }

    /// <summary>
    /// A new reader whose check-in was recorded: registered now. Past its hub's <c>Ingestion:MaxNewDevicesPerHubPerHour</c>
    /// it is not (a later check-in registers it); the arrival it carried is recorded all the same.
    /// </summary>
    private async Task RegisterReaderAsync(SaitoTopic topic, CancellationToken cancellationToken)
    {
        if (await _registry.GetIdAsync(topic.Device, topic.Hub, cancellationToken) is { } id)
        {
            _activity?.Seen(id);
        }
        else if (TakeLogSlot())
        {
            LogReaderNotRegistered(topic.Device, topic.Hub);
        }
    }

    /// <summary>A message from a new device its hub may not register now: one dead letter with the whole message.</summary>
    private Outcome RefuseNewDevice(InboundMessage message, SaitoTopic topic) =>
        Refuse(message, topic, DeadLetterReasons.TooManyNewDevices, _registry.RefusalDetail(topic.Device, topic.Hub));

    /// <summary>A message for a device of another site (<see cref="HubSiteRules"/>): one dead letter with the whole message.</summary>
    private Outcome RefuseOtherSite(InboundMessage message, SaitoTopic topic, string detail) =>
        Refuse(message, topic, DeadLetterReasons.DeviceOfAnotherSite, detail);

    private Outcome Refuse(InboundMessage message, SaitoTopic topic, string reason, string detail) =>
        Refuse(message, IngestionMetrics.KindIndex(topic.Kind), reason, detail);

    /// <summary>A whole message refused for one reason: one dead letter with all of it, logged and counted.</summary>
    private Outcome Refuse(InboundMessage message, int kindIndex, string reason, string detail)
    {
        LogRejection(message.Topic, reason, detail);
        return DeadLettered(message, kindIndex, reason, detail);
    }

    private Outcome DeadLettered(InboundMessage message, int kindIndex, string reason, string detail)
    {
        _metrics.DeadLettered(reason, kindIndex);
        return new Outcome(IngestResult.Stored, [], [DeadLetter.FromPayload(message.ReceivedAt, message.Topic, message.ClientId, reason, detail, message.Payload.Span)]);
    }

    /// <summary>What a message came to: its rows, submitted and durable before this returns (none: nothing to store).</summary>
    private async Task<IngestResult> SubmitAsync(InboundMessage message, Outcome outcome, CancellationToken cancellationToken)
    {
        if (outcome is { Readings: { } readings, DeadLetters: { } deadLetters })
        {
            await _writers.SubmitAsync(new PendingMessage(message.Topic, message.ClientId, message.Payload, readings, deadLetters), cancellationToken);
        }

        return outcome.Result;
    }

    /// <summary>
    /// What a message came to: the answer, and the rows to commit before it is given (null for a hello or a check-in
    /// that the registry has committed itself).
    /// </summary>
    private readonly record struct Outcome(IngestResult Result, List<Reading>? Readings = null, List<DeadLetter>? DeadLetters = null);

    /// <summary>
    /// Logs rejections, at most <see cref="LogBurst"/> a minute, so a misconfigured hub sending bad data many times a
    /// second cannot flood the log; the rest are counted in the next line. Every one is in the dead_letter table.
    /// </summary>
    private void LogRejection(string topic, string reason, string detail)
    {
        if (TakeLogSlot())
        {
            LogRejected(topic, reason, detail);
        }
    }

    /// <summary>One of the <see cref="LogBurst"/> lines a minute (and the count of those left out before it), or false.</summary>
    private bool TakeLogSlot()
    {
        int suppressed = 0;
        lock (_logWindowLock)
        {
            long now = Environment.TickCount64;
            if (now - _logWindowStart > 60_000)
            {
                suppressed = _suppressedInWindow;
                _logWindowStart = now;
                _loggedInWindow = 0;
                _suppressedInWindow = 0;
            }

            if (_loggedInWindow >= LogBurst)
            {
                _suppressedInWindow++;
                return false;
            }

            _loggedInWindow++;
        }

        if (suppressed > 0)
        {
            LogSuppressed(suppressed);
        }

        return true;
    }

    private const int LogBurst = 20;

    [LoggerMessage(2101, LogLevel.Warning, "Rejected input on {Topic} ({Reason}): {Detail}")]
    private partial void LogRejected(string topic, string reason, string detail);

    [LoggerMessage(2103, LogLevel.Warning, "{Count} more rejected message(s) in the last minute were not logged; all are in the dead_letter table")]
    private partial void LogSuppressed(int count);

    [LoggerMessage(2104, LogLevel.Warning, "Reader {Serial}'s check-in was recorded, but hub {Hub} is past Ingestion:MaxNewDevicesPerHubPerHour: the reader is registered with a later check-in")]
    private partial void LogReaderNotRegistered(string serial, string hub);

    [LoggerMessage(2102, LogLevel.Information, "Device {Serial} (id {Id}) said hello: kind {Kind}, firmware {Firmware}")]
    private partial void LogHello(string serial, int id, string? kind, string? firmware);
}

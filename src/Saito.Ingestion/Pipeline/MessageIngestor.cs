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
    private readonly ReadingWriterPool _writers;
    private readonly StorageStartup _storage;
    private readonly IngestionMetrics _metrics;
    private readonly ILogger<MessageIngestor> _logger;
    private readonly ICheckInRecorder? _checkIns;
    private readonly DeviceActivity? _activity;
    private readonly IHubSites? _sites;
    private readonly IngestionOptions _options;
    private readonly string _prefix;
    private readonly string _prefixWithSlash;
    private readonly object _logWindowLock = new();
    private long _logWindowStart;
    private int _loggedInWindow;
    private int _suppressedInWindow;

    public MessageIngestor(ReadingParser parser, DeviceRegistry registry, ReadingWriterPool writers, StorageStartup storage, IngestionMetrics metrics,
        IOptions<IngestionOptions> options, ILogger<MessageIngestor> logger, ICheckInRecorder? checkIns = null, DeviceActivity? activity = null,
        IHubSites? sites = null)
    {
        _activity = activity;
        _sites = sites;
        ArgumentNullException.ThrowIfNull(options);
        _options = options.Value;
        _checkIns = checkIns;
        _parser = parser;
        _registry = registry;
        _writers = writers;
        _storage = storage;
        _metrics = metrics;
        _logger = logger;
        _prefix = options.Value.TopicPrefix;
        _prefixWithSlash = _prefix + "/";
    }

    public async Task<IngestResult> IngestAsync(InboundMessage message, CancellationToken cancellationToken)
    {
        if (!message.Topic.StartsWith(_prefixWithSlash, StringComparison.Ordinal))
        {
            return IngestResult.NotOurs;
        }

        if (!_storage.Ready.IsCompletedSuccessfully)
        {
            // A hub that publishes while Saito is still creating its tables or loading its devices waits for that,
            // rather than having a new serial registered against a table that is not there yet (a refusal the hub
            // must resend). If preparing the database failed, this throws and the message is not acknowledged.
            await _storage.Ready.WaitAsync(cancellationToken);
        }

        _metrics.Message();
        var deadLetters = new List<DeadLetter>();
        if (!SaitoTopicParser.TryParse(message.Topic, _prefix, out var topic, out string? topicError))
        {
            deadLetters.Add(DeadLetter.FromPayload(message.ReceivedAt, message.Topic, message.ClientId, DeadLetterReasons.BadTopic, topicError, message.Payload.Span));
            LogRejection(message.Topic, DeadLetterReasons.BadTopic, topicError);
            _metrics.DeadLettered(DeadLetterReasons.BadTopic, IngestionMetrics.UnknownKindIndex);
            await SubmitAsync(message, [], deadLetters, cancellationToken);
            return IngestResult.Stored;
        }

        bool known = _registry.TryGetKnownId(topic.Device, out int deviceId);
        if (_sites is { Any: true })
        {
            // Moves made through another Saito sharing the database are seen within Ingestion:DeviceHubRecheckSeconds.
            if (_registry.RefreshHubsIfDue() is { } refresh)
            {
                await refresh.WaitAsync(cancellationToken);
            }
            if (!known && topic.Kind == TopicKind.CheckIn)
            {
                // A reader new here may be registered already by another Saito sharing the database, through a hub of
                // another site; its check-in is recorded before it is registered here, so its hub is looked up first.
                await _registry.RecheckHubAsync(topic.Device, cancellationToken);
            }
            else if (known && topic.Kind == TopicKind.Hello)
            {
                // A hello binds the device to its hub: decided on the hub the database has now, not on one known here
                // from before a move made through another Saito (which this hello would otherwise undo).
                await _registry.RecheckHubAsync(topic.Device, cancellationToken, always: true);
            }
        }

        if ((known || topic.Kind == TopicKind.CheckIn) && await OtherSiteAsync(topic, cancellationToken) is { } otherSite)
        {
            return await RefuseOtherSiteAsync(message, topic, otherSite, cancellationToken);
        }

        if (topic.Kind == TopicKind.Hello)
        {
            if (_parser.TryParseHello(message.Payload.Span, topic.Hub, out var announcement, out string? helloError))
            {
                if (!known && _sites is { Any: true })
                {
                    // A serial new here may be registered already (by another Saito sharing the database), bound to a hub
                    // of another site: found (or registered) first, so that its hello cannot bind it to this hub.
                    if (await _registry.GetIdAsync(topic.Device, topic.Hub, cancellationToken) is null)
                    {
                        return await RefuseNewDeviceAsync(message, topic, cancellationToken);
                    }

                    if (await OtherSiteAsync(topic, cancellationToken) is { } otherSiteOfNew)
                    {
                        return await RefuseOtherSiteAsync(message, topic, otherSiteOfNew, cancellationToken);
                    }
                }

                if (await _registry.AnnounceAsync(topic.Device, topic.Hub, announcement, cancellationToken) is not { } id)
                {
                    return await RefuseNewDeviceAsync(message, topic, cancellationToken);
                }

                LogHello(topic.Device, id, announcement.Kind, announcement.Firmware);
                return IngestResult.DeviceAnnounced;
            }

            deadLetters.Add(DeadLetter.FromPayload(message.ReceivedAt, message.Topic, message.ClientId, DeadLetterReasons.BadHello, helloError, message.Payload.Span));
            _metrics.DeadLettered(DeadLetterReasons.BadHello, IngestionMetrics.KindIndex(topic.Kind));
            await SubmitAsync(message, [], deadLetters, cancellationToken);
            return IngestResult.Stored;
        }

        if (topic.Kind == TopicKind.CheckIn)
        {
            return await CheckInAsync(message, topic, known ? deviceId : null, cancellationToken);
        }

        // A new serial is registered only for a message with a reading in it: garbage on invented serials leaves dead
        // letters, not permanent device rows. Its readings are parsed first (device 0) and get the id once it has one.
        var readings = new List<Reading>();
        _parser.Parse(Context(topic, known ? deviceId : 0, message), message.Payload.Span, readings, deadLetters);
        if (!known)
        {
            if (readings.Count == 0)
            {
                return await SubmitParsedAsync(message, topic, readings, deadLetters, cancellationToken);
            }

            if (await _registry.GetIdAsync(topic.Device, topic.Hub, cancellationToken) is not { } id)
            {
                return await RefuseNewDeviceAsync(message, topic, cancellationToken);
            }

            deviceId = id;
            if (await OtherSiteAsync(topic, cancellationToken) is { } otherSiteOfRegistered)
            {
                // Registered already by another Saito sharing the database, through a hub of another site.
                return await RefuseOtherSiteAsync(message, topic, otherSiteOfRegistered, cancellationToken);
            }

            for (int i = 0; i < readings.Count; i++)
            {
                readings[i] = readings[i].WithDevice(id);
            }
        }

        _activity?.Seen(deviceId);
        return await SubmitParsedAsync(message, topic, readings, deadLetters, cancellationToken);
    }

    private static ReadingParseContext Context(SaitoTopic topic, int deviceId, InboundMessage message) =>
        new(topic.ReadingKind!.Value, deviceId, message.Topic, message.ClientId, message.ReceivedAt, message.ContentType);

    /// <summary>Counts and logs what a message's parse gave, and submits its readings and dead letters together.</summary>
    private async Task<IngestResult> SubmitParsedAsync(InboundMessage message, SaitoTopic topic, List<Reading> readings, List<DeadLetter> deadLetters,
        CancellationToken cancellationToken)
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

        await SubmitAsync(message, readings, deadLetters, cancellationToken);
        return IngestResult.Stored;
    }

    /// <summary>
    /// A fingerprint reader's check-in: parsed, then recorded by the registry (committed before this returns, so the
    /// acknowledgement means it is durable). A payload that cannot be read, an owner the registry does not know, a
    /// check-out with no open check-in, or a registry that is down becomes a dead letter with the reason; nothing is
    /// dropped silently. A new reader's serial (<paramref name="knownReaderId"/> null) is registered only once a
    /// check-in of it is recorded, as a sensor's is only with a valid reading.
    /// </summary>
    private async Task<IngestResult> CheckInAsync(InboundMessage message, SaitoTopic topic, int? knownReaderId, CancellationToken cancellationToken)
    {
        string reader = topic.Device;
        string reason;
        string detail;
        if (!CheckInParser.TryParse(message.Payload.Span, message.ReceivedAt, _options, out var checkIn, out string? error))
        {
            (reason, detail) = (DeadLetterReasons.BadCheckIn, error);
        }
        else
        {
            if (knownReaderId is { } known)
            {
                _activity?.Seen(known);
            }

            var recorded = _checkIns is null ? CheckInRecording.Unavailable : await _checkIns.RecordAsync(reader, checkIn, cancellationToken);
            switch (recorded)
            {
                case CheckInRecording.Done:
                    if (knownReaderId is null)
                    {
                        await RegisterReaderAsync(topic, cancellationToken);
                    }

                    return IngestResult.CheckedIn;
                case CheckInRecording.UnknownOwner:
                    (reason, detail) = (DeadLetterReasons.UnknownOwner,
                        FormattableString.Invariant($"reader {reader} sent owner {checkIn.OwnerId}, which the registry does not have (or is no longer active): enrol the owner, or check the reader's enrolment"));
                    break;
                case CheckInRecording.OutsideWindow:
                    (reason, detail) = (DeadLetterReasons.BadCheckIn,
                        FormattableString.Invariant($"reader {reader} sent a check-{(checkIn.CheckOut ? "out" : "in")} of owner {checkIn.OwnerId} stamped {checkIn.At:O}, outside CheckIns:ReaderMaxAgeSeconds before or CheckIns:ReaderMaxAheadSeconds after Saito's clock: a reader's check-in must be about now (a stale one would email the family); nothing recorded, no one told. Check the reader's clock, or check the student in by hand"));
                    break;
                case CheckInRecording.NotCheckedIn:
                    (reason, detail) = (DeadLetterReasons.NotCheckedIn,
                        FormattableString.Invariant($"reader {reader} sent a check-out of owner {checkIn.OwnerId} at {checkIn.At:O}, but the owner has no open check-in that school day before then (no arrival recorded, checked out already, or the arrival is later): nothing changed, the check-out is kept here"));
                    break;
                default:
                    (reason, detail) = (DeadLetterReasons.RegistryUnavailable,
                        FormattableString.Invariant($"the registry is unavailable (see Saito's log at start); check-in of owner {checkIn.OwnerId} by reader {reader} kept here"));
                    break;
            }
        }

        var letter = DeadLetter.FromPayload(message.ReceivedAt, message.Topic, message.ClientId, reason, detail, message.Payload.Span);
        LogRejection(message.Topic, reason, detail);
        _metrics.DeadLettered(reason, IngestionMetrics.KindIndex(TopicKind.CheckIn));
        await SubmitAsync(message, [], [letter], cancellationToken);
        return IngestResult.Stored;
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
    private Task<IngestResult> RefuseNewDeviceAsync(InboundMessage message, SaitoTopic topic, CancellationToken cancellationToken) =>
        RefuseAsync(message, topic, DeadLetterReasons.TooManyNewDevices, _registry.RefusalDetail(topic.Device, topic.Hub), cancellationToken);

    private Task<IngestResult> RefuseOtherSiteAsync(InboundMessage message, SaitoTopic topic, string detail, CancellationToken cancellationToken) =>
        RefuseAsync(message, topic, DeadLetterReasons.DeviceOfAnotherSite, detail, cancellationToken);

    /// <summary>A whole message refused for one reason: one dead letter with all of it.</summary>
    private async Task<IngestResult> RefuseAsync(InboundMessage message, SaitoTopic topic, string reason, string detail, CancellationToken cancellationToken)
    {
        var letter = DeadLetter.FromPayload(message.ReceivedAt, message.Topic, message.ClientId, reason, detail, message.Payload.Span);
        LogRejection(message.Topic, reason, detail);
        _metrics.DeadLettered(reason, IngestionMetrics.KindIndex(topic.Kind));
        await SubmitAsync(message, [], [letter], cancellationToken);
        return IngestResult.Stored;
    }

    /// <summary>
    /// Null when the topic's hub may send for its (registered) device: sites are off, the device is bound to this hub
    /// or to none, its hub has no site, or both hubs are of one site. Else why not, for the dead letter. Before refusing,
    /// the device's hub is read again from the database (at most every <c>Ingestion:DeviceHubRecheckSeconds</c>), so a
    /// move by staff or by another Saito instance is seen.
    /// </summary>
    private async ValueTask<string?> OtherSiteAsync(SaitoTopic topic, CancellationToken cancellationToken)
    {
        if (_sites is null || _registry.HubOf(topic.Device) is not { } home || home == topic.Hub || OtherSite(topic, home) is null)
        {
            return null;
        }

        return await _registry.RecheckHubAsync(topic.Device, cancellationToken) is { } now && now != topic.Hub ? OtherSite(topic, now) : null;
    }

    private string? OtherSite(SaitoTopic topic, string home)
    {
        if (_sites!.SiteOf(home) is not { } site)
        {
            return null;
        }

        string? sender = _sites.SiteOf(topic.Hub);
        return sender == site
            ? null
            : FormattableString.Invariant($"device {topic.Device} belongs to hub {home} of site {site}; hub {topic.Hub} is {(sender is null ? "of no site" : "of site " + sender)}, so it may not send for it. Nothing of this message is stored. If the device moved, move it: POST /api/devices/{{id}}/move (docs/security.md)");
    }

    private Task<WriteOutcome> SubmitAsync(InboundMessage message, List<Reading> readings, List<DeadLetter> deadLetters, CancellationToken cancellationToken) =>
        _writers.SubmitAsync(new PendingMessage(message.Topic, message.ClientId, message.Payload, readings, deadLetters), cancellationToken);

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

using Saito.Readings;

namespace Saito.Payloads;

/// <summary>What the pipeline knows about a message before its payload is parsed.</summary>
/// <param name="Kind">The topic's kind: it decides the kind of every reading taken from the payload.</param>
/// <param name="DeviceId">The device id the pipeline resolved from the topic's device serial.</param>
/// <param name="Topic">The topic, for dead letters.</param>
/// <param name="ClientId">The MQTT client id of the publisher, for dead letters.</param>
/// <param name="ReceivedAt">When Saito received the message (UTC): every reading's received_at, "now" for SenML
/// relative times, and the reference for the future/past timestamp limits.</param>
/// <param name="ContentType">The MQTT 5 content type, if the publisher set one: <c>application/senml+json</c> or
/// <c>application/json</c> decide the format; anything else (or none) lets the parser look at the payload.</param>
public readonly record struct ReadingParseContext(
    ReadingKind Kind, int DeviceId, string Topic, string? ClientId, DateTime ReceivedAt, string? ContentType);

/// <summary>What one message gave.</summary>
/// <param name="Accepted">Readings appended.</param>
/// <param name="Rejected">Dead letters appended (one per rejected reading or record; one for a payload rejected
/// whole; one for all the readings beyond <c>Ingestion:MaxReadingsPerMessage</c>).</param>
public readonly record struct MessageParseResult(int Accepted, int Rejected);

using System.Text;
using Saito.Ingestion;
using Saito.Payloads;
using Saito.Readings;

namespace Saito.Fuzz.Targets;

/// <summary>
/// <c>saito-json</c> and <c>senml</c>: a payload through <see cref="ReadingParser"/> as the ingestion pipeline
/// calls it: the topic's kind, device and client, the received time, and the MQTT 5 content type that names the
/// format (and, once per input, no content type, so the parser's own format detection runs too). Each input runs
/// for the three kinds; the saito-json target also reads it as a hello payload. The contract: <c>Parse</c> never
/// throws and always says something (a reading or a dead letter, with a known reason, counted right);
/// <c>TryParseHello</c> and <c>CheckInParser.TryParse</c> never throw.
/// </summary>
internal sealed class PayloadTarget(
    string name, string contentType, bool hello, Func<IReadOnlyList<byte[]>> seeds, IReadOnlyList<byte[]> tokens, Func<Random, byte[]> malformed)
    : FuzzTarget
{
    private static readonly DateTime ReceivedAt = new(2025, 10, 6, 9, 0, 5, DateTimeKind.Utc);
    private static readonly ReadingKind[] Kinds = [ReadingKind.Biosensor, ReadingKind.Location, ReadingKind.Pressure];
    private static readonly HashSet<string> KnownReasons = [.. DeadLetterReasons.All];

    private static readonly PayloadLimits CheckInLimits = new();

    private readonly ReadingParser _parser = new(new IngestionOptions(), TimeProvider.System);
    private readonly List<Reading> _readings = [];
    private readonly List<DeadLetter> _deadLetters = [];
    private readonly StringBuilder _outcome = new();

    public static PayloadTarget SaitoJson() =>
        new("saito-json", "application/json", hello: true, PayloadSeeds.SaitoJson, PayloadSeeds.SaitoJsonTokens, PayloadSeeds.MalformedSaitoJson);

    public static PayloadTarget SenML() =>
        new("senml", "application/senml+json", hello: false, PayloadSeeds.SenML, PayloadSeeds.SenMLTokens, PayloadSeeds.MalformedSenML);

    public override string Name => name;

    public override string Description => $"ReadingParser.Parse with content type {contentType} and none, for each reading kind" + (hello ? "; TryParseHello; CheckInParser.TryParse" : string.Empty);

    public override IReadOnlyList<byte[]> Tokens => tokens;

    public override IReadOnlyList<byte[]> Seeds() => seeds();

    public override byte[] Malformed(Random random) => malformed(random);

    public override string Run(ReadOnlySpan<byte> input)
    {
        _outcome.Clear();
        foreach (var kind in Kinds)
        {
            ParseAndCheck(input, kind, contentType);
        }

        ParseAndCheck(input, ReadingKind.Biosensor, contentType: null);
        if (hello)
        {
            _outcome.Append(_parser.TryParseHello(input, "hub-1", out _, out _) ? " hello" : " no-hello");
            _outcome.Append(CheckInParser.TryParse(input, ReceivedAt, CheckInLimits, out _, out _) ? " check-in" : " no-check-in");
        }

        return _outcome.ToString();
    }

    private void ParseAndCheck(ReadOnlySpan<byte> input, ReadingKind kind, string? contentType)
    {
        _readings.Clear();
        _deadLetters.Clear();
        string topic = "saito/hub-1/dev-1/" + Saito.Readings.ReadingKinds.Name(kind);
        var context = new ReadingParseContext(kind, 42, topic, "hub-1-client", ReceivedAt, contentType);
        var result = _parser.Parse(context, input, _readings, _deadLetters);
        if (result.Accepted != _readings.Count || result.Rejected != _deadLetters.Count)
        {
            throw new ContractViolationException($"Parse said {result} but appended {_readings.Count} readings and {_deadLetters.Count} dead letters");
        }

        if (result.Accepted + result.Rejected == 0)
        {
            throw new ContractViolationException("Parse gave neither a reading nor a dead letter");
        }

        foreach (var reading in _readings)
        {
            if (reading.Kind != kind || reading.DeviceId != 42 || reading.ReceivedAt != ReceivedAt)
            {
                throw new ContractViolationException($"a reading of kind {reading.Kind}, device {reading.DeviceId}, received {reading.ReceivedAt:O} from a {kind} context");
            }
        }

        _outcome.Append(kind.ToString()[0]).Append(contentType is null ? "?" : string.Empty).Append(result.Accepted > 0 ? "+" : string.Empty);
        string previous = string.Empty;
        foreach (var deadLetter in _deadLetters)
        {
            if (!KnownReasons.Contains(deadLetter.Reason) || deadLetter.Topic != topic || deadLetter.Payload.Length > DeadLetter.MaxPayloadChars)
            {
                throw new ContractViolationException($"a dead letter with reason '{deadLetter.Reason}', topic '{deadLetter.Topic}', {deadLetter.Payload.Length} characters of payload");
            }

            if (deadLetter.Reason != previous)
            {
                _outcome.Append(' ').Append(deadLetter.Reason);
                previous = deadLetter.Reason;
            }
        }

        _outcome.Append(';');
    }
}

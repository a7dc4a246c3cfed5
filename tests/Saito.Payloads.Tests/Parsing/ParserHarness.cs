using System.Text;
using Saito.Readings;

namespace Saito.Payloads.Tests.Parsing;

/// <summary>What one <see cref="ReadingParser.Parse"/> call gave.</summary>
public sealed record ParseOutcome(MessageParseResult Result, List<Reading> Readings, List<DeadLetter> DeadLetters)
{
    public DeadLetter SingleDeadLetter()
    {
        Readings.ShouldBeEmpty();
        return DeadLetters.ShouldHaveSingleItem();
    }

    public IReadOnlyList<string> Reasons => DeadLetters.ConvertAll(d => d.Reason);
}

/// <summary>Runs the parser the way the pipeline does, with a fixed received time.</summary>
public static class ParserHarness
{
    public const int DeviceId = 42;
    public const string ClientId = "hub-1-client";

    /// <summary>The received time the docs examples assume, too.</summary>
    public static readonly DateTime ReceivedAt = new(2025, 10, 6, 9, 0, 5, DateTimeKind.Utc);

    public static string TopicFor(ReadingKind kind) => $"saito/hub-1/dev-1/{Saito.Readings.ReadingKinds.Name(kind)}";

    public static ParseOutcome Parse(string payload, ReadingKind kind = ReadingKind.Biosensor, string? contentType = null,
        PayloadLimits? options = null, DateTime? receivedAt = null) =>
        Parse(Encoding.UTF8.GetBytes(payload), kind, contentType, options, receivedAt);

    public static ParseOutcome Parse(byte[] payload, ReadingKind kind = ReadingKind.Biosensor, string? contentType = null,
        PayloadLimits? options = null, DateTime? receivedAt = null, TimeProvider? time = null)
    {
        var parser = new ReadingParser(options ?? new PayloadLimits(), time ?? TimeProvider.System);
        var context = new ReadingParseContext(kind, DeviceId, TopicFor(kind), ClientId, receivedAt ?? ReceivedAt, contentType);
        var readings = new List<Reading>();
        var deadLetters = new List<DeadLetter>();
        var result = parser.Parse(context, payload, readings, deadLetters);
        result.Accepted.ShouldBe(readings.Count, "Accepted counts the readings appended");
        result.Rejected.ShouldBe(deadLetters.Count, "Rejected counts the dead letters appended");
        return new ParseOutcome(result, readings, deadLetters);
    }

    public static DateTime Utc(string iso) => DateTime.Parse(iso, System.Globalization.CultureInfo.InvariantCulture,
        System.Globalization.DateTimeStyles.AdjustToUniversal | System.Globalization.DateTimeStyles.AssumeUniversal);
}

/// <summary>A clock that says what it is told (Microsoft.Extensions.TimeProvider.Testing is not on our feed).</summary>
public sealed class FixedTimeProvider(DateTimeOffset now) : TimeProvider
{
    public override DateTimeOffset GetUtcNow() => now;
}

using System.Text;
using FsCheck;
using FsCheck.Fluent;
using Saito.Readings;

namespace Saito.Payloads.Tests.Parsing;

/// <summary>
/// Property-based: whatever arrives, the parser returns (never throws), says something about it (a reading or a
/// dead letter), and everything it says is well formed: readings in range and in the time window with the
/// context's device, kind and received time; dead letters with a known reason code.
/// </summary>
public sealed class ParserRobustnessProperties
{
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(2_000).WithQuietOnSuccess(true);

    internal static readonly Gen<ReadingKind> Kinds = Gen.Elements(ReadingKind.Biosensor, ReadingKind.Location, ReadingKind.Pressure);

    private static readonly Gen<string?> ContentTypes = Gen.Elements<string?>(null, null, "application/json", "application/senml+json", "text/plain");

    private static readonly Gen<byte[]> RandomBytes =
        Gen.Sized(size => Gen.Choose(0, Math.Max(1, size * 3))).SelectMany(n => Gen.ArrayOf(Gen.Choose(0, 255).Select(b => (byte)b), n));

    /// <summary>Tokens that make the parser's branches likely, glued at random: mostly not JSON, sometimes nearly.</summary>
    private static readonly string[] Tokens =
    [
        "{", "}", "[", "]", ",", ":", " ", "\"ts\"", "\"hr\"", "\"sys\"", "\"dia\"", "\"temp\"", "\"x\"", "\"y\"", "\"z\"",
        "\"kpa\"", "\"ch\"", "\"bn\"", "\"bt\"", "\"bu\"", "\"bv\"", "\"bver\"", "\"n\"", "\"u\"", "\"v\"", "\"t\"", "\"vs\"",
        "\"s\"", "\"x_\"", "\"2025-10-06T09:00:00Z\"", "\"2025-10-06T09:00:00\"", "1759741200000", "1759741200", "72",
        "-1", "1e999", "0.5", "-0", "null", "true", "\"K\"", "\"Pa\"", "\"Cel\"", "\"wrist-17/2/hr\"", "\"0/x\"", "\"\\u0068r\"",
        "\"\\uD800\"", "\"\\u00\"", "\u00e9", "\ufeff", "\0", "65536", "300.0001", "\"72\"",
    ];

    private static readonly Gen<string> JsonIsh =
        Gen.Sized(size => Gen.Choose(0, Math.Max(1, size))).SelectMany(n => Gen.ArrayOf(Gen.Elements(Tokens), n)).Select(string.Concat);

    private static readonly Gen<string> Keys = Gen.Elements(
        "ts", "hr", "sys", "dia", "temp", "x", "y", "z", "kpa", "ch", "battery", "n", "v", "t", "bn", "bt", "u", "bu", "bv", "bver", "vs", "HR");

    private static readonly Gen<string> Values = Gen.Elements(
        "\"2025-10-06T09:00:00Z\"", "\"2025-10-06T09:00:01.5+02:00\"", "1759741200000", "1759741201000.001", "1759741200",
        "72", "120", "80", "33.5", "1.5", "-3", "0", "1000", "1001", "1e999", "null", "true", "\"72\"", "\"hr\"", "\"0/x\"",
        "\"wrist/hr\"", "\"K\"", "\"m\"", "[1,2]", "{\"a\":1}", "-0.5", "300", "268435455", "11");

    private static readonly Gen<string> Element = Gen.Frequency(
        (12, Gen.Choose(0, 6).SelectMany(n => Gen.ListOf(Keys.SelectMany(k => Values.Select(v => $"\"{k}\":{v}")), n))
            .Select(members => "{" + string.Join(",", members) + "}")),
        (1, Values));

    private static readonly Gen<List<string>> Elements = Gen.Choose(0, 12).SelectMany(n => Gen.ListOf(Element, n));

    [Fact]
    public void Random_bytes_never_throw_and_always_give_a_reading_or_a_dead_letter()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(RandomBytes), Arb.From(Kinds), Arb.From(ContentTypes),
            (bytes, kind, contentType) => ParseAndCheck(bytes, kind, contentType)));
    }

    [Fact]
    public void Random_json_ish_text_never_throws_and_always_gives_a_reading_or_a_dead_letter()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(JsonIsh), Arb.From(Kinds), Arb.From(ContentTypes),
            (text, kind, contentType) => ParseAndCheck(Encoding.UTF8.GetBytes(text), kind, contentType)));
    }

    [Fact]
    public void Random_records_never_throw_and_always_give_a_reading_or_a_dead_letter()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(Elements), Arb.From(Kinds), Arb.From(ContentTypes),
            (elements, kind, contentType) => ParseAndCheck(Encoding.UTF8.GetBytes("[" + string.Join(",", elements) + "]"), kind, contentType)));
    }

    [Fact]
    public void In_saito_json_every_element_is_accounted_for_exactly_once_and_good_ones_are_always_kept()
    {
        var good = Gen.Choose(20, 300).Select(hr => $$"""{"ts":"2025-10-06T09:00:00Z","hr":{{hr}}}""");
        var mixed = Gen.Choose(1, 30).SelectMany(n => Gen.ListOf(Gen.Frequency((1, good.Select(e => (Good: true, Text: e))), (2, Element.Select(e => (Good: false, Text: e)))), n));

        Check.One(Runs, Prop.ForAll(Arb.From(mixed), elements =>
        {
            var outcome = ParseAndCheck(Encoding.UTF8.GetBytes("[" + string.Join(",", elements.Select(e => e.Text)) + "]"),
                ReadingKind.Biosensor, "application/json");

            (outcome.Result.Accepted + outcome.Result.Rejected).ShouldBe(elements.Count);
            outcome.Result.Accepted.ShouldBeGreaterThanOrEqualTo(elements.Count(e => e.Good));
        }));
    }

    internal static ParseOutcome ParseAndCheck(byte[] payload, ReadingKind kind, string? contentType)
    {
        var outcome = ParserHarness.Parse(payload, kind, contentType);

        (outcome.Result.Accepted + outcome.Result.Rejected).ShouldBeGreaterThanOrEqualTo(1);
        var options = new PayloadLimits();
        foreach (var reading in outcome.Readings)
        {
            reading.DeviceId.ShouldBe(ParserHarness.DeviceId);
            reading.Kind.ShouldBe(kind);
            reading.ReceivedAt.ShouldBe(ParserHarness.ReceivedAt);
            reading.Channel.ShouldBeInRange(ReadingLimits.ChannelMin, ReadingLimits.ChannelMax);
            reading.Timestamp.ShouldBeInRange(
                ParserHarness.ReceivedAt.AddDays(-options.MaxAgeDays), ParserHarness.ReceivedAt.AddSeconds(options.MaxFutureSkewSeconds));
            (reading.Timestamp.Ticks % 10).ShouldBe(0);
            CheckValues(reading);
        }

        foreach (var deadLetter in outcome.DeadLetters)
        {
            DeadLetterReasons.All.ShouldContain(deadLetter.Reason);
            deadLetter.Detail.ShouldNotBeNullOrWhiteSpace();
            deadLetter.OriginalPayload().Length.ShouldBeLessThanOrEqualTo(payload.Length + 2); // a part of it, or the dropped readings in [ ]
            deadLetter.Payload.ShouldNotContain('\0');
            deadLetter.Topic.ShouldBe(ParserHarness.TopicFor(kind));
        }

        return outcome;
    }

    private static void CheckValues(Reading reading)
    {
        switch (reading.Kind)
        {
            case ReadingKind.Biosensor:
                (reading.HeartRate ?? reading.Systolic ?? reading.Diastolic ?? reading.SkinTemperature).ShouldNotBeNull();
                InRange(reading.HeartRate, ReadingLimits.HeartRateMin, ReadingLimits.HeartRateMax);
                InRange(reading.Systolic, ReadingLimits.SystolicMin, ReadingLimits.SystolicMax);
                InRange(reading.Diastolic, ReadingLimits.DiastolicMin, ReadingLimits.DiastolicMax);
                InRange(reading.SkinTemperature, ReadingLimits.SkinTemperatureMin, ReadingLimits.SkinTemperatureMax);
                if (reading.Systolic is { } sys && reading.Diastolic is { } dia)
                {
                    dia.ShouldBeLessThan(sys);
                }

                break;
            case ReadingKind.Location:
                foreach (var coordinate in new[] { reading.X, reading.Y, reading.Z })
                {
                    coordinate.ShouldNotBeNull();
                    InRange(coordinate, -ReadingLimits.LocationMaxAbs, ReadingLimits.LocationMaxAbs);
                }

                break;
            default:
                reading.Kpa.ShouldNotBeNull();
                InRange(reading.Kpa, ReadingLimits.PressureMin, ReadingLimits.PressureMax);
                break;
        }
    }

    private static void InRange(double? value, double min, double max)
    {
        if (value is { } v)
        {
            v.ShouldBeInRange(min, max);
        }
    }
}

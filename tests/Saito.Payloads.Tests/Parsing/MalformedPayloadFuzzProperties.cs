using System.Text;
using FsCheck;
using FsCheck.Fluent;
using Saito.Readings;
using static Saito.Payloads.Tests.Parsing.ParserRobustnessProperties;

namespace Saito.Payloads.Tests.Parsing;

/// <summary>
/// Property-based, the FsCheck half of the fuzzing harness (benchmarks/Saito.Fuzz is the other): payloads broken
/// the ways that bring JSON parsers down (deep nesting, numbers past double and long, NaN and Infinity, keys given
/// twice, bytes that are not UTF-8), in both formats, each for every reading kind. The contract: the parser
/// returns, says something (a reading or a dead letter, checked by <see cref="ParserRobustnessProperties"/>), and
/// reads the hello payload without throwing; where the outcome is certain, the property says which it is.
/// </summary>
public sealed class MalformedPayloadFuzzProperties
{
    private static readonly Gen<string?> ContentTypes = Gen.Elements<string?>(null, "application/json", "application/senml+json");

    private static readonly ReadingParser HelloParser = new(new PayloadLimits(), TimeProvider.System);

    /// <summary>Fewer runs than the random-bytes properties: the inputs here are larger.</summary>
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(300).WithQuietOnSuccess(true);

    private static readonly Gen<string> HugeNumber = Gen.OneOf(
        Gen.Choose(309, 100_000).Select(e => "1e" + e),
        Gen.Choose(309, 100_000).Select(e => "-1e" + e),
        Gen.Choose(325, 100_000).Select(e => "1e-" + e),
        Gen.Choose(20, 2_000).Select(n => new string('9', n)),
        Gen.Choose(20, 2_000).Select(n => "-" + new string('9', n) + ".5"),
        Gen.Choose(20, 2_000).Select(n => "0." + new string('0', n) + "1"),
        Gen.Elements("9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
            "1.7976931348623157e308", "4.9e-324", "-0", "0e999999999"));

    private static readonly Gen<byte[]> BadUtf8 = Gen.Elements<byte[]>(
        [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        [0xFF], [0xFE], [0x80], [0xBF], [0xE2, 0x82], [0xF0, 0x9F, 0x98]);

    [Fact]
    public void Deep_nesting_is_read_like_any_other_json_and_unclosed_gives_one_malformed_json_dead_letter()
    {
        var nested =
            from depth in Gen.Frequency((1, Gen.Choose(65, 200)), (1, Gen.Choose(200, 20_000)))
            from shape in Gen.Choose(0, 3)
            from closed in Gen.Elements(true, false)
            from kind in Kinds
            from contentType in ContentTypes
            select (Payload: (Payload: Nest(depth, shape, closed), Closed: closed), kind, contentType);

        Check.One(Runs, Prop.ForAll(Arb.From(nested), c =>
        {
            var outcome = Contract(c.Payload.Payload, c.kind, c.contentType);
            if (!c.Payload.Closed)
            {
                outcome.SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedJson);
            }
            else
            {
                // Valid JSON, however deep: each reading (or record) is judged by itself.
                outcome.DeadLetters.ShouldNotContain(d => d.Reason == DeadLetterReasons.MalformedJson);
            }
        }));
    }

    [Fact]
    public void Numbers_past_double_and_long_never_throw_and_never_become_a_reading_out_of_range()
    {
        var huge =
            from number in HugeNumber
            from template in Gen.Elements(
                """{"ts":N,"hr":72}""", """{"ts":"2025-10-06T09:00:00Z","hr":N}""", """{"ts":"2025-10-06T09:00:00Z","ch":N,"kpa":1}""",
                """{"ts":"2025-10-06T09:00:00Z","x":N,"y":N,"z":N}""", """[{"bn":"w/","bt":N,"n":"hr","v":72}]""", """[{"n":"hr","v":N}]""",
                """[{"n":"0/kpa","v":1,"t":N}]""", """[{"bv":N,"n":"temp","u":"K","v":300}]""", """[{"bver":N,"n":"hr","v":72}]""",
                """{"kind":"biosensor","channels":N}""")
            from kind in Kinds
            from contentType in ContentTypes
            select (Payload: Encoding.UTF8.GetBytes(template.Replace("N", number, StringComparison.Ordinal)), kind, contentType);

        // ParserRobustnessProperties.ParseAndCheck holds every reading to the ranges and the time window.
        Check.One(Runs, Prop.ForAll(Arb.From(huge), c => Contract(c.Payload, c.kind, c.contentType)));
    }

    [Fact]
    public void NaN_and_Infinity_are_not_json_and_give_one_malformed_json_dead_letter()
    {
        var notJson =
            from literal in Gen.Elements("NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "infinity", "nan", "+1", ".5", "01", "1.", "0x10", "1e")
            from template in Gen.Elements("""{"ts":"2025-10-06T09:00:00Z","hr":N}""", """{"ts":N,"hr":72}""", """[{"n":"hr","v":N}]""", """[{"bt":N,"n":"hr","v":1}]""")
            from kind in Kinds
            from contentType in ContentTypes
            select (Payload: Encoding.UTF8.GetBytes(template.Replace("N", literal, StringComparison.Ordinal)), kind, contentType);

        Check.One(Runs, Prop.ForAll(Arb.From(notJson), c =>
            Contract(c.Payload, c.kind, c.contentType).SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedJson)));
    }

    [Fact]
    public void A_saito_json_field_given_twice_rejects_its_reading_as_duplicate_field_and_leaves_the_others()
    {
        string[] fields = ["\"ts\":\"2025-10-06T09:00:00Z\"", "\"hr\":72", "\"sys\":118", "\"dia\":76", "\"temp\":33.9", "\"ch\":0"];
        var twice =
            from field in Gen.Elements(fields)
            from position in Gen.Choose(0, fields.Length)
            from escaped in Gen.Elements(false, true)
            from neighbours in Gen.Choose(0, 3)
            let copy = escaped ? "\"\\u00" + ((int)field[1]).ToString("x2", System.Globalization.CultureInfo.InvariantCulture) + field[2..] : field
            let members = fields.Take(position).Append(copy).Concat(fields.Skip(position))
            let bad = "{" + string.Join(",", members) + "}"
            let good = """{"ts":"2025-10-06T09:00:01Z","hr":70}"""
            select (Payload: "[" + string.Join(",", Enumerable.Repeat(good, neighbours).Append(bad)) + "]", neighbours);

        Check.One(Runs, Prop.ForAll(Arb.From(twice), c =>
        {
            var outcome = Contract(Encoding.UTF8.GetBytes(c.Payload), ReadingKind.Biosensor, "application/json");
            outcome.Readings.Count.ShouldBe(c.neighbours);
            outcome.DeadLetters.ShouldHaveSingleItem().Reason.ShouldBe(DeadLetterReasons.DuplicateField);
        }));
    }

    [Fact]
    public void Keys_given_twice_in_a_senml_record_never_throw()
    {
        var twice =
            from label in Gen.Elements("bn", "bt", "bu", "bv", "bver", "n", "u", "v", "t", "s", "vs", "x_")
            from first in Gen.Elements("\"w/\"", "1759741200", "72", "\"hr\"", "\"K\"", "10", "null", "[1]", "{}")
            from second in Gen.Elements("\"0/\"", "1", "-5", "\"temp\"", "\"m\"", "11", "true", "\"\"")
            from kind in Kinds
            select (Payload: Encoding.UTF8.GetBytes($$"""[{"n":"hr","v":72,"{{label}}":{{first}},"{{label}}":{{second}}},{"n":"hr","v":73,"t":1}]"""), kind);

        Check.One(Runs, Prop.ForAll(Arb.From(twice), c => Contract(c.Payload, c.kind, "application/senml+json")));
    }

    [Fact]
    public void Bytes_that_are_not_utf8_in_keys_and_strings_never_throw()
    {
        var badText =
            from bad in BadUtf8
            from template in Gen.Elements(
                """{"ts":"2025-10-06T09:00:00ZB","hr":72}""", """{"tBs":"2025-10-06T09:00:00Z","hr":72}""", """{"ts":"2025-10-06T09:00:00Z","hr":72,"B":1}""",
                """{"ts":"2025-10-06T09:00:00Z","hr":"B"}""", """[{"bn":"wB/","n":"hr","v":72}]""", """[{"n":"hr","u":"B","v":72}]""", """[{"nB":"hr","v":72}]""",
                """[{"n":"hr","v":72,"vs":"B"}]""", """{"kind":"B","firmware":"B"}""", """{"kind":"biosensor","firmware":"1.B"}""", """{"B_":1}""")
            from kind in Kinds
            from contentType in ContentTypes
            select (Payload: Splice(template, bad), kind, contentType);

        Check.One(Runs, Prop.ForAll(Arb.From(badText), c => Contract(c.Payload, c.kind, c.contentType)));
    }

    /// <summary>Parses as the pipeline does and checks everything said (see <see cref="ParserRobustnessProperties"/>); reads it as a hello too.</summary>
    private static ParseOutcome Contract(byte[] payload, ReadingKind kind, string? contentType)
    {
        var outcome = ParseAndCheck(payload, kind, contentType);
        bool hello = HelloParser.TryParseHello(payload, "hub-1", out var announcement, out string? error);
        (hello ? announcement is not null : !string.IsNullOrEmpty(error)).ShouldBeTrue("a hello is either read or refused with a reason");
        return outcome;
    }

    /// <summary>A payload nested <paramref name="depth"/> levels: arrays, objects, a reading's value, or a SenML record's.</summary>
    private static byte[] Nest(int depth, int shape, bool closed)
    {
        var (open, close, core, wrap) = shape switch
        {
            0 => ("[", "]", """{"ts":"2025-10-06T09:00:00Z","hr":72}""", "{0}"),
            1 => ("{\"a\":", "}", "1", "{0}"),
            2 => ("[", "]", "1", """{{"ts":"2025-10-06T09:00:00Z","hr":72,"x_":{0}}}"""),
            _ => ("{\"a\":", "}", "1", """[{{"n":"hr","v":72,"vd":{0}}}]"""),
        };
        string inner = string.Concat(Enumerable.Repeat(open, depth)) + core + (closed ? string.Concat(Enumerable.Repeat(close, depth)) : string.Empty);
        return Encoding.UTF8.GetBytes(string.Format(System.Globalization.CultureInfo.InvariantCulture, wrap, inner));
    }

    /// <summary>The template's UTF-8 with <paramref name="bad"/> where its 'B' is.</summary>
    private static byte[] Splice(string template, byte[] bad) =>
        [.. template.Split('B').Select(Encoding.UTF8.GetBytes).Aggregate((a, b) => [.. a, .. bad, .. b])];
}

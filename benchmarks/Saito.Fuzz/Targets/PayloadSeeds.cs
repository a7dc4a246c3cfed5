using System.Text;

namespace Saito.Fuzz.Targets;

/// <summary>Seeds, tokens and malformed payloads for the two parsers; the seeds are docs/protocol.md's examples.</summary>
internal static class PayloadSeeds
{
    /// <summary>Overlong NUL, a surrogate, a five-byte form, stray and cut-off sequences, past U+10FFFF, NUL itself.</summary>
    private static readonly byte[][] BadUtf8Tokens =
        [[0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], [0xE2, 0x82], [0x80], [0xF4, 0x90, 0x80, 0x80], [0x00]];

    public static IReadOnlyList<byte[]> SaitoJson() => Utf8(
        """{"ts":"2025-10-06T09:00:00.250Z","hr":72,"sys":118,"dia":76,"temp":33.9}""",
        """[{"ts":"2025-10-06T09:00:00.100Z","ch":0,"x":3.42,"y":1.10,"z":1.35},{"ts":"2025-10-06T09:00:00.100Z","ch":1,"x":3.47,"y":1.02,"z":0.98}]""",
        """[{"ts":"2025-10-06T11:00:00.500+02:00","ch":0,"kpa":4.2},{"ts":"2025-10-06T11:00:00.500+02:00","ch":1,"kpa":0}]""",
        """[{"ts":"2025-10-06T09:00:00Z","hr":72},{"ts":"2025-10-06T09:00:01Z","hr":"72"},{"ts":"2025-10-06T09:00:02Z","hr":350},{"ts":"2025-10-06T09:00:03Z","hr":73,"battery":0.81}]""",
        """{"ts":1759741200000,"hr":72,"note":"a hub that sends a long comment along"}""",
        """{"ts":"2025-10-06T09:00:00Z","hr":72,"hr":73}""",
        """{"ts":"2025-10-06T09:00:00","sys":80,"dia":95}""",
        """{"\u0074s":"2025-10-06T09:00:00\u005a","h\u0072":72}""",
        """{"kind":"biosensor","channels":1,"firmware":"1.4.2"}""");

    public static IReadOnlyList<byte[]> SenML() => Utf8(
        """[{"bn":"wrist-17/","bt":1759741200,"n":"hr","u":"beat/min","v":72},{"n":"temp","u":"Cel","v":33.9},{"n":"hr","u":"beat/min","v":73,"t":1},{"n":"temp","u":"K","v":307.05,"t":1}]""",
        """[{"bn":"coat-4/","bt":1759741200.1,"bu":"m","n":"0/x","v":3.42},{"n":"0/y","v":1.10},{"n":"0/z","v":1.35},{"n":"1/x","v":3.47},{"n":"1/y","v":1.02},{"n":"1/z","v":0.98}]""",
        """[{"bn":"mat-3/","bt":1759741200,"n":"0/p","u":"Pa","v":4200},{"n":"1/p","u":"kPa","v":0.3}]""",
        """[{"bver":11,"bn":"wrist-17/","n":"hr","v":72}]""",
        """[{"bn":"w/","bt":-5,"bv":70,"n":"hr","v":2},{"n":"sys","v":120,"t":-1},{"n":"dia","v":80,"t":-1},{"n":"x_","v":1}]""",
        """[{"bn":"w:","n":"65535:hr","v":72,"s":1,"ut":5,"vs":"a","vb":true,"vd":"AA"},{"n":"\u0068r","u":"1/min","v":60}]""");

    public static IReadOnlyList<byte[]> SaitoJsonTokens { get; } = Utf8(
        [
            "{", "}", "[", "]", ",", ":", "\"ts\":", "\"hr\":", "\"sys\":", "\"dia\":", "\"temp\":", "\"x\":", "\"y\":", "\"z\":", "\"kpa\":",
            "\"ch\":", "\"kind\":", "\"channels\":", "\"firmware\":", "\"2025-10-06T09:00:00Z\"", "\"2025-10-06T09:00:00.1234567891-18:00\"",
            "\"0001-01-01T00:00:00+18:00\"", "\"9999-12-31T23:59:59.9999999-18:00\"", "\"2025-02-29T00:00:00Z\"", "\"2025-10-06T23:59:60Z\"",
            "1759741200000", "-9223372036854775808", "9223372036854775807", "1e308", "1e999", "-1e-999", "0.000000000000000000001",
            "NaN", "Infinity", "-Infinity", "null", "true", "\"\\uD800\"", "\"\\uDC00\\uD800\"", "\"\\u0000\"", "65535", "65536", "-1", "300.0000000001",
        ],
        BadUtf8Tokens);

    public static IReadOnlyList<byte[]> SenMLTokens { get; } = Utf8(
        [
            "{", "}", "[", "]", ",", "\"bn\":", "\"bt\":", "\"bu\":", "\"bv\":", "\"bver\":", "\"bs\":", "\"n\":", "\"u\":", "\"v\":", "\"t\":",
            "\"s\":", "\"ut\":", "\"vs\":", "\"vb\":", "\"vd\":", "\"x_\":", "\"\\u005f\":", "\"wrist-17/\"", "\"0/x\"", "\"99999/kpa\"", "\"a:b:c/\"",
            "\"hr\"", "\"temp\"", "\"K\"", "\"Pa\"", "\"Cel\"", "\"mmHg\"", "\"1/min\"", "\"beat/min\"", "268435455", "268435456", "1759741200",
            "-1759741200", "9.2233720368547758e11", "922337203685.4775807", "-922337203685.4775808", "1e999", "-1e999", "1e-400", "10", "11",
            "-0", "NaN", "\"\\uD800\"",
        ],
        BadUtf8Tokens);

    public static byte[] MalformedSaitoJson(Random random) => random.Next(6) switch
    {
        0 => Nested(random, "[", "]", "{\"ts\":1759741200000,\"hr\":72}"),
        1 => Nested(random, "{\"hr\":", "}", "1"),
        2 => Utf8($$"""{"ts":{{HugeNumber(random)}},"hr":{{HugeNumber(random)}},"ch":{{HugeNumber(random)}}}"""),
        3 => Utf8("[" + string.Join(",", Enumerable.Repeat("""{"ts":"2025-10-06T09:00:00Z","hr":72,"hr":72,"ts":1}""", random.Next(1, 12_000))) + "]"),
        4 => [.. "{\"ts\":\"2025-10-06T09:00:00Z\",\"h"u8, .. BadUtf8(random), .. "r\":72,\"firmware\":\""u8, .. BadUtf8(random), .. "\"}"u8],
        _ => Utf8("{\"ts\":\"2025-10-06T09:00:00Z\",\"kind\":\"biosensor\",\"firmware\":\"" + new string('a', random.Next(0, 300_000)) + "\"}"),
    };

    public static byte[] MalformedSenML(Random random) => random.Next(6) switch
    {
        0 => Nested(random, "[", "]", "{\"n\":\"hr\",\"v\":1}"),
        1 => Utf8("[{\"bn\":\"" + new string('a', random.Next(200, 70_000)) + "/\",\"n\":\"hr\",\"v\":72}]"),
        2 => Utf8($$"""[{"bn":"w/","bt":{{HugeNumber(random)}},"bv":{{HugeNumber(random)}},"n":"hr","v":{{HugeNumber(random)}},"t":{{HugeNumber(random)}}}]"""),
        3 => Utf8("[" + string.Join(",", Enumerable.Range(0, random.Next(1, 12_000)).Select(i => $$"""{"n":"{{i % 70_000}}/kpa","v":1,"t":{{-(i % 7)}}}""")) + "]"),
        4 => [.. "[{\"bn\":\"w"u8, .. BadUtf8(random), .. "/\",\"n\":\"hr\",\"u\":\""u8, .. BadUtf8(random), .. "\",\"v\":72}]"u8],
        _ => Utf8("[" + string.Join(",", Enumerable.Repeat("""{"bn":"a/","bt":1759741200,"n":"hr","v":72,"n":"sys","v":1}""", random.Next(1, 5_000))) + "]"),
    };

    /// <summary>Opening text repeated (hundreds to hundreds of thousands of levels), a core, and the closings.</summary>
    private static byte[] Nested(Random random, string open, string close, string core)
    {
        int depth = random.Next(3) == 0 ? random.Next(60, 70) : random.Next(100, 100_000);
        var text = new StringBuilder(depth * (open.Length + close.Length) + core.Length);
        text.Insert(0, open, depth).Append(core).Insert(text.Length, close, random.Next(2) == 0 ? depth : random.Next(depth));
        return Encoding.UTF8.GetBytes(text.ToString());
    }

    private static string HugeNumber(Random random) => random.Next(7) switch
    {
        0 => "1e" + random.Next(300, 1_000_000),
        1 => "-1e" + random.Next(300, 1_000_000),
        2 => "1e-" + random.Next(300, 1_000_000),
        3 => new string('9', random.Next(20, 5_000)),
        4 => "0." + new string('0', random.Next(20, 5_000)) + "1",
        5 => "-" + new string('9', random.Next(19, 400)) + "." + new string('9', random.Next(1, 400)),
        _ => "9223372036854775807" + random.Next(10),
    };

    private static byte[] BadUtf8(Random random) => BadUtf8Tokens[random.Next(BadUtf8Tokens.Length)];

    private static byte[] Utf8(string text) => Encoding.UTF8.GetBytes(text);

    private static byte[][] Utf8(params string[] texts) => [.. texts.Select(Utf8)];

    private static byte[][] Utf8(string[] texts, byte[][] raw) => [.. texts.Select(Utf8), .. raw];
}

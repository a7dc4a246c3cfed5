using System.Text;

namespace Saito.Payloads.Tests.Parsing;

public sealed class HelloParsingTests
{
    private static readonly ReadingParser Parser = new(new PayloadLimits(), TimeProvider.System);

    [Fact]
    public void A_full_hello_is_read_with_its_hub()
    {
        Parser.TryParseHello("""{"kind":"biosensor","channels":1,"firmware":"1.4.2"}"""u8, "hub-1", out var announcement, out _).ShouldBeTrue();

        announcement.ShouldBe(new Saito.Readings.DeviceAnnouncement("biosensor", 1, "1.4.2", "hub-1"));
    }

    [Theory]
    [InlineData("", null, null, null)]
    [InlineData("  ", null, null, null)]
    [InlineData("{}", null, null, null)]
    [InlineData("""{"channels":64}""", null, 64, null)]
    [InlineData("""{"kind":"pressure","battery":0.5,"extra":{"a":[1]}}""", "pressure", null, null)]
    [InlineData("""{"kind":null,"channels":null,"firmware":null}""", null, null, null)]
    [InlineData("""{"firmware":"2.0.1-beta+5"}""", null, null, "2.0.1-beta+5")]
    public void Every_field_is_optional_and_unknown_ones_are_ignored(string payload, string? kind, int? channels, string? firmware)
    {
        Parser.TryParseHello(Encoding.UTF8.GetBytes(payload), "hub-1", out var announcement, out string? error).ShouldBeTrue(error);

        announcement.ShouldBe(new Saito.Readings.DeviceAnnouncement(kind, channels, firmware, "hub-1"));
    }

    [Theory]
    [InlineData("""{"kind":"thermometer"}""", "expected biosensor, location or pressure")]
    [InlineData("""{"kind":"Biosensor"}""", "expected biosensor, location or pressure")]
    [InlineData("""{"kind":1}""", "\"kind\" must be a string")]
    [InlineData("""{"channels":0}""", "\"channels\" must be an integer from 1 to 65536")]
    [InlineData("""{"channels":65537}""", "\"channels\" must be an integer from 1 to 65536")]
    [InlineData("""{"channels":2.5}""", "\"channels\" must be an integer")]
    [InlineData("""{"channels":"4"}""", "\"channels\" must be an integer")]
    [InlineData("""{"firmware":142}""", "\"firmware\" must be a string")]
    [InlineData("""{"firmware":"1.4.2\n"}""", "without control characters")]
    [InlineData("""["biosensor"]""", "must be a JSON object")]
    [InlineData("""{"kind":"biosensor" """, "not valid JSON")]
    [InlineData("""{"kind":"biosensor"} {}""", "not valid JSON")]
    [InlineData("""{"firmware":"\uD800"}""", "not valid text")]
    public void A_hello_that_cannot_be_read_is_refused_with_the_reason(string payload, string expected)
    {
        Parser.TryParseHello(Encoding.UTF8.GetBytes(payload), "hub-1", out var announcement, out string? error).ShouldBeFalse();

        announcement.ShouldBeNull();
        error.ShouldContain(expected);
    }

    [Fact]
    public void A_firmware_longer_than_64_characters_is_refused()
    {
        string payload = $$"""{"firmware":"{{new string('1', 65)}}"}""";

        Parser.TryParseHello(Encoding.UTF8.GetBytes(payload), "hub-1", out _, out string? error).ShouldBeFalse();
        error.ShouldContain("at most 64 characters");
    }

    [Fact]
    public void A_hello_larger_than_4096_bytes_is_refused_unread()
    {
        byte[] payload = Encoding.UTF8.GetBytes("{\"pad\":\"" + new string(' ', 4100) + "\"}");

        Parser.TryParseHello(payload, "hub-1", out _, out string? error).ShouldBeFalse();
        error.ShouldContain("at most 4096");
    }

    [Fact]
    public void Invalid_utf8_in_a_string_is_refused_not_thrown()
    {
        byte[] payload = [.. "{\"firmware\":\""u8, 0xC3, 0x28, .. "\"}"u8];

        Parser.TryParseHello(payload, "hub-1", out _, out string? error).ShouldBeFalse();
        error.ShouldNotBeNull();
    }
}

using System.Text;

namespace Saito.Payloads.Tests.Parsing;

public sealed class CheckInParserTests
{
    private static readonly DateTime Received = new(2026, 11, 26, 8, 0, 0, DateTimeKind.Utc);
    private static readonly PayloadLimits Limits = new();

    [Theory]
    [InlineData("""{"owner":17}""", 17, "2026-11-26T08:00:00.0000000+00:00", false)]
    [InlineData("""{"owner":17,"ts":"2026-11-26T08:59:12.1234567+01:00"}""", 17, "2026-11-26T07:59:12.1234560+00:00", false)]
    [InlineData("""{"ts":"2026-11-26T07:59:00Z","owner":3,"action":"out","score":0.98,"extra":{"a":[1,2]}}""", 3, "2026-11-26T07:59:00.0000000+00:00", true)]
    [InlineData("\uFEFF{\"owner\":5,\"action\":\"in\"}", 5, "2026-11-26T08:00:00.0000000+00:00", false)]
    public void A_check_in_reads_owner_time_and_action(string payload, int owner, string at, bool checkOut)
    {
        CheckInParser.TryParse(Encoding.UTF8.GetBytes(payload), Received, Limits, out var message, out string? error).ShouldBeTrue(error);

        message.OwnerId.ShouldBe(owner);
        message.At.ToString("O", System.Globalization.CultureInfo.InvariantCulture).ShouldBe(at); // microseconds, UTC
        message.CheckOut.ShouldBe(checkOut);
    }

    [Theory]
    [InlineData("", "JSON")]
    [InlineData("[1]", "JSON object")]
    [InlineData("""{"ts":"2026-11-26T08:00:00Z"}""", "no \"owner\"")]
    [InlineData("""{"owner":0}""", "positive integer")]
    [InlineData("""{"owner":"17"}""", "positive integer")]
    [InlineData("""{"owner":17.5}""", "positive integer")]
    [InlineData("""{"owner":99999999999}""", "positive integer")]
    [InlineData("""{"owner":17,"ts":"2026-11-26T08:00:00"}""", "no time zone")]
    [InlineData("""{"owner":17,"ts":"yesterday"}""", "RFC 3339")]
    [InlineData("""{"owner":17,"ts":1764144000}""", "must be a string")]
    [InlineData("""{"owner":17,"ts":"2026-11-26T09:00:00Z"}""", "after Saito received it")]
    [InlineData("""{"owner":17,"ts":"2026-09-01T09:00:00Z"}""", "days old")]
    [InlineData("""{"owner":17,"action":"leave"}""", "\"in\" or \"out\"")]
    [InlineData("""{"owner":17} {"owner":18}""", "not valid JSON")]
    [InlineData("""{"owner":17""", "not valid JSON")]
    public void A_bad_check_in_is_refused_with_a_reason(string payload, string says)
    {
        CheckInParser.TryParse(Encoding.UTF8.GetBytes(payload), Received, Limits, out _, out string? error).ShouldBeFalse();

        error.ShouldNotBeNull().ShouldContain(says);
    }

    [Theory]
    [InlineData(new byte[] { (byte)'{', (byte)'"', (byte)'\\', (byte)'u', (byte)'d', (byte)'c', (byte)'0', (byte)'0', (byte)'"', (byte)':', (byte)'1', (byte)',', (byte)'"', (byte)'o', (byte)'w', (byte)'n', (byte)'e', (byte)'r', (byte)'"', (byte)':', (byte)'1', (byte)'7', (byte)'}' })]
    [InlineData(new byte[] { (byte)'{', (byte)'"', 0xC3, 0x28, (byte)'"', (byte)':', (byte)'1', (byte)',', (byte)'"', (byte)'o', (byte)'w', (byte)'n', (byte)'e', (byte)'r', (byte)'"', (byte)':', (byte)'1', (byte)'7', (byte)'}' })]
    public void A_name_that_is_not_valid_text_is_refused_not_thrown(byte[] payload)
    {
        // {"\udc00":1,"owner":17} (an escaped lone surrogate) and a name with invalid UTF-8: GetString throws
        // InvalidOperationException on both, which escaped the parser, so the message was never dead-lettered.
        CheckInParser.TryParse(payload, Received, Limits, out _, out string? error).ShouldBeFalse();

        error.ShouldNotBeNull().ShouldContain("not valid");
    }

    [Fact]
    public void A_payload_past_the_limit_is_refused_unread()
    {
        byte[] payload = Encoding.UTF8.GetBytes("{\"owner\":1,\"pad\":\"" + new string('x', CheckInParser.MaxBytes) + "\"}");

        CheckInParser.TryParse(payload, Received, Limits, out _, out string? error).ShouldBeFalse();

        error.ShouldNotBeNull().ShouldContain("at most 4096");
    }

    [Fact]
    public void The_topic_parser_knows_the_checkin_level()
    {
        SaitoTopicParser.TryParse("saito/hub-1/fp-1/checkin", "saito", out var topic, out _).ShouldBeTrue();

        topic.Kind.ShouldBe(TopicKind.CheckIn);
        topic.ReadingKind.ShouldBeNull();
        topic.Device.ShouldBe("fp-1");
    }
}

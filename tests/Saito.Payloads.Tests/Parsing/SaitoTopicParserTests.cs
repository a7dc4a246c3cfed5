using Saito.Readings;

namespace Saito.Payloads.Tests.Parsing;

public sealed class SaitoTopicParserTests
{
    [Theory]
    [InlineData("saito/hub-1/wrist-17/biosensor", TopicKind.Biosensor, ReadingKind.Biosensor)]
    [InlineData("saito/hub-1/coat-4/location", TopicKind.Location, ReadingKind.Location)]
    [InlineData("saito/hub-1/mat-3/pressure", TopicKind.Pressure, ReadingKind.Pressure)]
    public void A_reading_topic_gives_hub_device_and_kind(string topic, TopicKind kind, ReadingKind readingKind)
    {
        SaitoTopicParser.TryParse(topic, "saito", out var parsed, out string? error).ShouldBeTrue(error);

        parsed.Hub.ShouldBe("hub-1");
        parsed.Device.ShouldBe(topic.Split('/')[2]);
        parsed.Kind.ShouldBe(kind);
        parsed.ReadingKind.ShouldBe(readingKind);
    }

    [Fact]
    public void A_hello_topic_has_no_reading_kind()
    {
        SaitoTopicParser.TryParse("saito/hub-1/wrist-17/hello", "saito", out var parsed, out _).ShouldBeTrue();

        parsed.Kind.ShouldBe(TopicKind.Hello);
        parsed.ReadingKind.ShouldBeNull();
    }

    [Fact]
    public void The_prefix_is_the_configured_one()
    {
        SaitoTopicParser.TryParse("school-a/hub-1/wrist-17/biosensor", "school-a", out var parsed, out _).ShouldBeTrue();
        parsed.Device.ShouldBe("wrist-17");

        SaitoTopicParser.TryParse("saito/hub-1/wrist-17/biosensor", "school-a", out _, out string? error).ShouldBeFalse();
        error.ShouldContain("school-a/");
    }

    [Fact]
    public void A_device_of_128_characters_is_accepted_and_one_of_129_is_not()
    {
        SaitoTopicParser.TryParse($"saito/hub-1/{new string('d', 128)}/biosensor", "saito", out _, out _).ShouldBeTrue();

        SaitoTopicParser.TryParse($"saito/hub-1/{new string('d', 129)}/biosensor", "saito", out _, out string? error).ShouldBeFalse();
        error.ShouldContain("129");
    }

    [Theory]
    [InlineData("", "empty")]
    [InlineData("other/hub-1/wrist-17/biosensor", "must start with 'saito/'")]
    [InlineData("saito", "must start with 'saito/'")]
    [InlineData("saitox/hub-1/wrist-17/biosensor", "must start with 'saito/'")]
    [InlineData("Saito/hub-1/wrist-17/biosensor", "must start with 'saito/'")]
    [InlineData("saito/hub-1", "too few levels")]
    [InlineData("saito/hub-1/biosensor", "too few levels")]
    [InlineData("saito/hub-1/wrist-17/biosensor/extra", "too many levels")]
    [InlineData("saito//wrist-17/biosensor", "hub level is empty")]
    [InlineData("saito/hub-1//biosensor", "device level is empty")]
    [InlineData("saito/hub-1/+/biosensor", "wildcard '+'")]
    [InlineData("saito/#/wrist-17/biosensor", "wildcard '#'")]
    [InlineData("saito/hub-1/wrist\u000117/biosensor", "control character")]
    [InlineData("saito/hub-1/wrist-17/heartrate", "unknown kind 'heartrate'")]
    [InlineData("saito/hub-1/wrist-17/Biosensor", "unknown kind 'Biosensor'")]
    [InlineData("saito/hub-1/wrist-17/", "unknown kind ''")]
    public void A_topic_of_the_wrong_shape_is_refused_with_what_is_wrong(string topic, string expected)
    {
        SaitoTopicParser.TryParse(topic, "saito", out _, out string? error).ShouldBeFalse();

        error.ShouldContain(expected);
    }
}

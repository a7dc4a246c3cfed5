using System.Text;
using Saito.Readings;
using static Saito.Payloads.Tests.Parsing.ParserHarness;

namespace Saito.Payloads.Tests.Parsing;

public sealed class SaitoJsonParsingTests
{
    [Fact]
    public void A_single_object_is_one_biosensor_reading_with_the_context_device_and_received_time()
    {
        var outcome = Parse("""{"ts":"2025-10-06T09:00:00.250Z","hr":72,"sys":118,"dia":76,"temp":33.9}""");

        outcome.DeadLetters.ShouldBeEmpty();
        var reading = outcome.Readings.ShouldHaveSingleItem();
        reading.Kind.ShouldBe(ReadingKind.Biosensor);
        reading.DeviceId.ShouldBe(DeviceId);
        reading.Channel.ShouldBe(0);
        reading.Timestamp.ShouldBe(Utc("2025-10-06T09:00:00.250Z"));
        reading.Timestamp.Kind.ShouldBe(DateTimeKind.Utc);
        reading.ReceivedAt.ShouldBe(ReceivedAt);
        reading.HeartRate.ShouldBe(72);
        reading.Systolic.ShouldBe(118);
        reading.Diastolic.ShouldBe(76);
        reading.SkinTemperature.ShouldBe(33.9);
    }

    [Fact]
    public void An_array_is_one_reading_per_element_in_order()
    {
        var outcome = Parse("""
            [{"ts":"2025-10-06T09:00:00Z","hr":71},
             {"ts":"2025-10-06T09:00:01Z","hr":72},
             {"ts":"2025-10-06T09:00:02Z","hr":73}]
            """);

        outcome.Result.ShouldBe(new MessageParseResult(3, 0));
        outcome.Readings.Select(r => r.HeartRate).ShouldBe([71.0, 72.0, 73.0]);
    }

    [Fact]
    public void Json_nested_100000_deep_in_one_reading_costs_only_that_reading_or_nothing_in_an_ignored_field()
    {
        // From a review: a depth limit of 64 made such a payload malformed-json as a whole, good readings and all.
        // 200 KB of the 256 KiB a payload may have (Ingestion:MaxPayloadBytes), and 20 KB in the reading's own field.
        string deep = new string('[', 100_000) + "1" + new string(']', 100_000);
        string lessDeep = new string('[', 10_000) + "1" + new string(']', 10_000);
        var outcome = Parse($$$"""
            [{"ts":"2025-10-06T09:00:00Z","hr":71},
             {"ts":"2025-10-06T09:00:01Z","hr":72,"vendor_extra":{"trace":{{{deep}}}}},
             {"ts":"2025-10-06T09:00:02Z","hr":{{{lessDeep}}}},
             {"ts":"2025-10-06T09:00:03Z","hr":74}]
            """);

        outcome.Readings.Select(r => r.HeartRate).ShouldBe([71.0, 72.0, 74.0]);
        var letter = outcome.DeadLetters.ShouldHaveSingleItem();
        letter.Reason.ShouldBe(DeadLetterReasons.WrongType);
        letter.Detail.ShouldContain("reading 2");
    }

    [Theory]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":72}""", 72.0, null, null, null)]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","sys":120,"dia":80}""", null, 120.0, 80.0, null)]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","temp":33.5}""", null, null, null, 33.5)]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","dia":80}""", null, null, 80.0, null)]
    public void Any_non_empty_subset_of_biosensor_values_is_a_reading(string payload, double? hr, double? sys, double? dia, double? temp)
    {
        var reading = Parse(payload).Readings.ShouldHaveSingleItem();

        reading.HeartRate.ShouldBe(hr);
        reading.Systolic.ShouldBe(sys);
        reading.Diastolic.ShouldBe(dia);
        reading.SkinTemperature.ShouldBe(temp);
    }

    [Fact]
    public void A_location_reading_has_x_y_z_on_its_channel()
    {
        var reading = Parse("""{"ts":"2025-10-06T09:00:00Z","ch":3,"x":-3.5,"y":0,"z":1000}""", ReadingKind.Location)
            .Readings.ShouldHaveSingleItem();

        reading.Kind.ShouldBe(ReadingKind.Location);
        reading.Channel.ShouldBe(3);
        (reading.X, reading.Y, reading.Z).ShouldBe((-3.5, 0.0, 1000.0));
        reading.V3.ShouldBeNull();
    }

    [Fact]
    public void A_pressure_reading_has_kpa_on_its_channel()
    {
        var reading = Parse("""{"ts":"2025-10-06T09:00:00Z","ch":65535,"kpa":0}""", ReadingKind.Pressure).Readings.ShouldHaveSingleItem();

        reading.Kind.ShouldBe(ReadingKind.Pressure);
        reading.Channel.ShouldBe(65535);
        reading.Kpa.ShouldBe(0);
    }

    [Theory]
    [InlineData("2025-10-06T09:00:00Z", "2025-10-06T09:00:00.0000000Z")]
    [InlineData("2025-10-06T11:30:00+02:30", "2025-10-06T09:00:00.0000000Z")]
    [InlineData("2025-10-06T04:00:00-0500", "2025-10-06T09:00:00.0000000Z")]
    [InlineData("2025-10-06 09:00:00.5z", "2025-10-06T09:00:00.5000000Z")]
    [InlineData("2025-10-06t09:00:00,25Z", "2025-10-06T09:00:00.2500000Z")]
    [InlineData("2025-10-06T09:00:00.123456Z", "2025-10-06T09:00:00.1234560Z")]
    [InlineData("2025-10-06T09:00:00.1234569999Z", "2025-10-06T09:00:00.1234560Z")]
    [InlineData("2025-10-06T10:00:00.000001+01:00", "2025-10-06T09:00:00.0000010Z")]
    public void Iso_timestamps_are_converted_to_utc_and_kept_to_the_microsecond(string ts, string expected)
    {
        var reading = Parse($$"""{"ts":"{{ts}}","hr":72}""").Readings.ShouldHaveSingleItem();

        reading.Timestamp.ToString("O", System.Globalization.CultureInfo.InvariantCulture).ShouldBe(expected);
    }

    [Theory]
    [InlineData("1759741200000", "2025-10-06T09:00:00.0000000Z")]
    [InlineData("1759741200123.456", "2025-10-06T09:00:00.1234560Z")]
    [InlineData("1759741200123.4569", "2025-10-06T09:00:00.1234560Z")]
    [InlineData("1759741200000.001", "2025-10-06T09:00:00.0000010Z")]
    [InlineData("1.759741200123456e12", "2025-10-06T09:00:00.1234560Z")]
    [InlineData("175974120012345.6e-2", "2025-10-06T09:00:00.1234560Z")]
    public void Epoch_milliseconds_are_exact_to_the_microsecond(string ts, string expected)
    {
        var reading = Parse($$"""{"ts":{{ts}},"hr":72}""").Readings.ShouldHaveSingleItem();

        reading.Timestamp.ToString("O", System.Globalization.CultureInfo.InvariantCulture).ShouldBe(expected);
    }

    [Fact]
    public void Unknown_fields_are_ignored_whatever_their_value()
    {
        var outcome = Parse("""{"battery":0.8,"ts":"2025-10-06T09:00:00Z","meta":{"a":[1,{"b":null}]},"hr":72,"tags":["x"],"HR":"no"}""");

        outcome.Readings.ShouldHaveSingleItem().HeartRate.ShouldBe(72);
    }

    [Fact]
    public void Null_is_the_same_as_absent()
    {
        var outcome = Parse("""{"ts":"2025-10-06T09:00:00Z","hr":72,"sys":null,"ch":null}""");

        var reading = outcome.Readings.ShouldHaveSingleItem();
        reading.Systolic.ShouldBeNull();
        reading.Channel.ShouldBe(0);
    }

    [Fact]
    public void Escaped_names_and_timestamps_are_read_like_plain_ones()
    {
        var outcome = Parse("""{"\u0074s":"2025-10-06T09:00:00\u005a","h\u0072":72}""");

        var reading = outcome.Readings.ShouldHaveSingleItem();
        reading.HeartRate.ShouldBe(72);
        reading.Timestamp.ShouldBe(Utc("2025-10-06T09:00:00Z"));
    }

    [Fact]
    public void Good_readings_beside_bad_ones_are_kept_and_each_bad_one_is_dead_lettered_with_its_index()
    {
        var outcome = Parse("""
            [{"ts":"2025-10-06T09:00:00Z","hr":70},
             {"ts":"2025-10-06T09:00:01Z","hr":"71"},
             {"ts":"2025-10-06T09:00:02Z","hr":72},
             42,
             {"hr":73},
             {"ts":"2025-10-06T09:00:05Z","hr":19},
             {"ts":"2025-10-06T09:00:06Z","hr":74}]
            """);

        outcome.Readings.Select(r => r.HeartRate).ShouldBe([70.0, 72.0, 74.0]);
        outcome.Reasons.ShouldBe([DeadLetterReasons.WrongType, DeadLetterReasons.WrongType, DeadLetterReasons.MissingField, DeadLetterReasons.OutOfRange]);
        outcome.DeadLetters[0].Detail.ShouldStartWith("reading 1: ");
        outcome.DeadLetters[1].Detail.ShouldStartWith("reading 3: ");
        outcome.DeadLetters[2].Detail.ShouldStartWith("reading 4: ");
        outcome.DeadLetters[3].Detail.ShouldBe("reading 5: hr 19 is outside 20..300 beats/min");
    }

    [Fact]
    public void A_dead_letter_holds_the_offending_element_and_the_message_context()
    {
        var outcome = Parse("""[{"ts":"2025-10-06T09:00:00Z","hr":70}, {"ts":"2025-10-06T09:00:01Z",  "hr":"71"} ]""");

        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Payload.ShouldBe("""{"ts":"2025-10-06T09:00:01Z",  "hr":"71"}""");
        deadLetter.Topic.ShouldBe(TopicFor(ReadingKind.Biosensor));
        deadLetter.ClientId.ShouldBe(ClientId);
        deadLetter.ReceivedAt.ShouldBe(ReceivedAt);
        deadLetter.Detail.ShouldBe("reading 1: \"hr\" must be a number, got a string \"71\"");
    }

    [Fact]
    public void An_element_with_several_problems_is_one_dead_letter_naming_the_first()
    {
        var outcome = Parse("""{"ts":"yesterday","hr":"72","sys":999}""");

        var deadLetter = outcome.SingleDeadLetter();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.BadTimestamp);
        deadLetter.Detail.ShouldContain("yesterday");
    }

    [Fact]
    public void A_payload_that_breaks_off_gives_one_dead_letter_and_no_readings_at_all()
    {
        string payload = """[{"ts":"2025-10-06T09:00:00Z","hr":70},{"ts":"2025-10-06T09:00:01Z","hr":"bad"},{"ts":""";

        var deadLetter = Parse(payload).SingleDeadLetter();

        deadLetter.Reason.ShouldBe(DeadLetterReasons.MalformedJson);
        deadLetter.Payload.ShouldBe(payload);
        deadLetter.Detail.ShouldStartWith("the payload is not valid JSON: ");
    }

    [Theory]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":72} x""")]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":72}{"ts":"2025-10-06T09:00:00Z","hr":72}""")]
    [InlineData("""[{"ts":"2025-10-06T09:00:00Z","hr":72},]""")]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":72 /* comment */}""")]
    [InlineData("""{'ts':'2025-10-06T09:00:00Z','hr':72}""")]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":NaN}""")]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":Infinity}""")]
    [InlineData("""{"ts":"2025-10-06T09:00:00Z","hr":072}""")]
    public void Anything_but_one_strict_json_value_is_malformed(string payload)
    {
        Parse(payload).SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedJson);
    }

    [Fact]
    public void A_byte_order_mark_is_skipped()
    {
        byte[] payload = [0xEF, 0xBB, 0xBF, .. Encoding.UTF8.GetBytes("""{"ts":"2025-10-06T09:00:00Z","hr":72}""")];

        Parse(payload).Readings.ShouldHaveSingleItem();
    }

    [Fact]
    public void Without_a_received_time_in_the_context_the_parser_clock_is_used()
    {
        var now = new DateTimeOffset(2025, 10, 6, 9, 0, 5, 123, TimeSpan.Zero).AddTicks(4567);
        var outcome = Parse(Encoding.UTF8.GetBytes("""{"ts":"2025-10-06T09:00:00Z","hr":72}"""),
            receivedAt: default(DateTime), time: new FixedTimeProvider(now));

        outcome.Readings.ShouldHaveSingleItem().ReceivedAt.ShouldBe(new DateTime(2025, 10, 6, 9, 0, 5, 123, 456, DateTimeKind.Utc));
    }

    [Fact]
    public void An_undefined_kind_in_the_context_is_a_programming_error_not_bad_input()
    {
        var parser = new ReadingParser(new PayloadLimits(), TimeProvider.System);
        var context = new ReadingParseContext((ReadingKind)9, DeviceId, "saito/hub-1/dev-1/biosensor", null, ReceivedAt, null);

        Should.Throw<ArgumentOutOfRangeException>(() => parser.Parse(context, "{}"u8, new List<Reading>(), new List<DeadLetter>()));
    }

    [Fact]
    public void Readings_are_appended_to_what_the_collections_already_hold()
    {
        var parser = new ReadingParser(new PayloadLimits(), TimeProvider.System);
        var context = new ReadingParseContext(ReadingKind.Biosensor, DeviceId, "saito/hub-1/dev-1/biosensor", null, ReceivedAt, null);
        var readings = new HashSet<Reading> { Reading.Pressure(1, 0, ReceivedAt, ReceivedAt, 1) };
        var deadLetters = new List<DeadLetter>();

        var result = parser.Parse(context, """[{"ts":"2025-10-06T09:00:00Z","hr":72},{"ts":"2025-10-06T09:00:00Z"}]"""u8, readings, deadLetters);

        result.ShouldBe(new MessageParseResult(1, 1));
        readings.Count.ShouldBe(2);
        deadLetters.ShouldHaveSingleItem().ClientId.ShouldBeNull();
    }
}

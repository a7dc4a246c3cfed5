using System.Globalization;
using Saito.Readings;
using static Saito.Payloads.Tests.Parsing.ParserHarness;

namespace Saito.Payloads.Tests.Parsing;

public sealed class SenMLParsingTests
{
    private const string SenML = "application/senml+json";

    private static string Iso(DateTime time) => time.ToString("O", CultureInfo.InvariantCulture);

    [Theory]
    [InlineData("""[{"bn":"w/","bt":1759741200,"n":"hr","v":72,"v":73}]""", "\"v\" is given twice")]
    [InlineData("""[{"bn":"w/","bt":1759741200,"n":"hr","n":"temp","v":33}]""", "\"n\" is given twice")]
    [InlineData("""[{"bn":"w/","bt":1759741200,"n":"hr","v":72,"t":0,"t":5}]""", "\"t\" is given twice")]
    public void A_label_given_twice_in_one_record_is_a_duplicate_field_not_the_last_one_kept(string payload, string says)
    {
        var outcome = Parse(payload, contentType: SenML);

        outcome.Readings.ShouldBeEmpty();
        var letter = outcome.DeadLetters.ShouldHaveSingleItem();
        letter.Reason.ShouldBe(DeadLetterReasons.DuplicateField);
        letter.Detail.ShouldContain(says);
    }

    [Fact]
    public void A_record_with_no_SenML_field_is_a_dead_letter_not_dropped()
    {
        // A Saito JSON batch whose first element carries a field named like a SenML label ("v") is read as SenML when no
        // content type says otherwise; its elements that have no SenML field at all were dropped with no record.
        string payload = """[{"hr":72,"v":3.7},{"ts":"2025-10-06T09:00:00Z","hr":73,"v":3.7},{"ts":"2025-10-06T09:00:01Z","hr":74}]""";

        var outcome = Parse(payload);

        outcome.Readings.ShouldBeEmpty();
        outcome.DeadLetters.Count.ShouldBe(3, "every element is accounted for");
        outcome.DeadLetters[2].Detail.ShouldContain("no SenML field");
        outcome.DeadLetters[2].Reason.ShouldBe(DeadLetterReasons.MalformedSenML);
    }

    [Fact]
    public void Base_name_plus_name_gives_the_field_and_the_channel()
    {
        var outcome = Parse("""
            [{"bn":"coat-4/","bt":1759741200,"n":"2/x","u":"m","v":1.5},
             {"n":"2/y","u":"m","v":2.5},
             {"n":"2/z","u":"m","v":0.5}]
            """, ReadingKind.Location);

        var reading = outcome.Readings.ShouldHaveSingleItem();
        reading.Channel.ShouldBe(2);
        (reading.X, reading.Y, reading.Z).ShouldBe((1.5, 2.5, 0.5));
        reading.DeviceId.ShouldBe(DeviceId);
        reading.Kind.ShouldBe(ReadingKind.Location);
    }

    [Theory]
    [InlineData("hr", 0)]
    [InlineData("wrist-17/hr", 0)]
    [InlineData("wrist-17:hr", 0)]
    [InlineData("urn:dev:mac:0024befffe804ff1/hr", 0)]
    [InlineData("wrist-17/3/hr", 3)]
    [InlineData("wrist-17:3:hr", 3)]
    [InlineData("7/hr", 7)]
    [InlineData("00012/hr", 12)]
    [InlineData("123456/hr", 0)]
    [InlineData("wrist-17/3a/hr", 0)]
    public void The_channel_is_the_segment_before_the_field_when_it_is_a_short_number(string name, int channel)
    {
        var outcome = Parse($$"""[{"n":"{{name}}","v":72}]""");

        outcome.Readings.ShouldHaveSingleItem().Channel.ShouldBe(channel);
    }

    [Fact]
    public void The_channel_may_span_base_name_and_name()
    {
        var outcome = Parse("""[{"bn":"coat-4/1","n":"2/kpa","v":1}]""", ReadingKind.Pressure);

        outcome.Readings.ShouldHaveSingleItem().Channel.ShouldBe(12);
    }

    [Fact]
    public void Base_time_plus_time_is_exact_to_the_microsecond()
    {
        var outcome = Parse("""
            [{"bt":1759741200.123456,"n":"hr","v":70},
             {"n":"hr","v":71,"t":0.000001},
             {"n":"hr","v":72,"t":-0.1234569}]
            """);

        outcome.Readings.Select(r => Iso(r.Timestamp)).ShouldBe([
            "2025-10-06T09:00:00.1234560Z",
            "2025-10-06T09:00:00.1234570Z",
            "2025-10-06T08:59:59.9999990Z",
        ]);
    }

    [Fact]
    public void Times_below_two_to_the_28_are_relative_to_the_received_time()
    {
        var outcome = Parse("""[{"bt":-10,"n":"hr","v":70,"t":0.5},{"n":"hr","v":71,"t":10},{"n":"temp","v":33,"bt":268435455,"t":-268435455}]""");

        outcome.Readings.Select(r => r.Timestamp).ShouldBe([ReceivedAt.AddSeconds(-9.5), ReceivedAt]);
        outcome.Readings[1].SkinTemperature.ShouldBe(33);
    }

    [Fact]
    public void A_record_without_any_time_is_stamped_with_the_received_time()
    {
        Parse("""[{"n":"hr","v":72}]""").Readings.ShouldHaveSingleItem().Timestamp.ShouldBe(ReceivedAt);
    }

    [Fact]
    public void Base_value_is_added_to_each_value()
    {
        var outcome = Parse("""[{"bv":70,"bt":1759741200,"n":"hr","v":1},{"n":"hr","v":-2,"t":1}]""");

        outcome.Readings.Select(r => r.HeartRate).ShouldBe([71.0, 68.0]);
    }

    [Fact]
    public void A_base_unit_applies_until_a_record_gives_its_own()
    {
        var outcome = Parse("""[{"bu":"K","bt":1759741200,"n":"temp","v":307.05},{"n":"temp","u":"Cel","v":33.9,"t":1},{"n":"temp","v":306.15,"t":2}]""");

        outcome.Readings.Select(r => r.SkinTemperature).ShouldBe([33.9, 33.9, 33.0]);
    }

    [Theory]
    [InlineData("hr", "beat/min", 72, 72)]
    [InlineData("hr", "1/min", 72, 72)]
    [InlineData("sys", "mmHg", 120, 120)]
    [InlineData("dia", "mmHg", 80, 80)]
    [InlineData("temp", "Cel", 33.5, 33.5)]
    [InlineData("temp", "K", 309.75, 36.6)]
    [InlineData("temp", "K", 293.15, 20)]
    public void Biosensor_units_are_checked_and_kelvin_converted(string field, string unit, double value, double stored)
    {
        var reading = Parse($$"""[{"n":"{{field}}","u":"{{unit}}","v":{{value.ToString(CultureInfo.InvariantCulture)}}}]""")
            .Readings.ShouldHaveSingleItem();

        ReadingValue(reading, field).ShouldBe(stored);
    }

    [Theory]
    [InlineData("p", "kPa", 4.2, 4.2)]
    [InlineData("kpa", "kPa", 4.2, 4.2)]
    [InlineData("p", "Pa", 101325, 101.325)]
    [InlineData("p", "Pa", 0, 0)]
    public void Pressure_units_are_checked_and_pascals_converted(string field, string unit, double value, double stored)
    {
        var reading = Parse($$"""[{"n":"mat-3/{{field}}","u":"{{unit}}","v":{{value.ToString(CultureInfo.InvariantCulture)}}}]""", ReadingKind.Pressure)
            .Readings.ShouldHaveSingleItem();

        reading.Kpa.ShouldBe(stored);
    }

    [Fact]
    public void A_record_without_a_unit_is_in_the_field_unit()
    {
        Parse("""[{"n":"temp","v":33.5}]""").Readings.ShouldHaveSingleItem().SkinTemperature.ShouldBe(33.5);
    }

    [Fact]
    public void Records_of_one_time_and_channel_make_one_reading()
    {
        var outcome = Parse("""
            [{"bn":"wrist-17/","bt":1759741200,"n":"hr","u":"beat/min","v":72},
             {"n":"temp","u":"Cel","v":33.9},
             {"n":"sys","u":"mmHg","v":118},
             {"n":"dia","u":"mmHg","v":76},
             {"n":"hr","u":"beat/min","v":73,"t":1}]
            """);

        outcome.Readings.Count.ShouldBe(2);
        var first = outcome.Readings[0];
        (first.HeartRate, first.Systolic, first.Diastolic, first.SkinTemperature).ShouldBe((72.0, 118.0, 76.0, 33.9));
        var second = outcome.Readings[1];
        (second.HeartRate, second.SkinTemperature).ShouldBe((73.0, (double?)null));
        second.Timestamp.ShouldBe(first.Timestamp.AddSeconds(1));
    }

    [Fact]
    public void Records_merge_even_when_other_records_come_between_them()
    {
        var outcome = Parse("""
            [{"bt":1759741200,"n":"0/x","v":1},{"n":"1/x","v":2},{"n":"0/y","v":3},
             {"n":"1/y","v":4},{"n":"1/z","v":5},{"n":"0/z","v":6}]
            """, ReadingKind.Location);

        outcome.Readings.Select(r => (r.Channel, r.X, r.Y, r.Z)).ShouldBe([(0, 1.0, 3.0, 6.0), (1, 2.0, 4.0, 5.0)]);
    }

    [Fact]
    public void Times_differing_below_a_microsecond_are_one_reading()
    {
        var outcome = Parse("""[{"bt":1759741200,"n":"x","v":1,"t":0.0000001},{"n":"y","v":2,"t":0.0000009},{"n":"z","v":3}]""", ReadingKind.Location);

        outcome.Readings.ShouldHaveSingleItem();
    }

    [Fact]
    public void A_location_missing_a_coordinate_is_one_dead_letter_with_its_records()
    {
        var outcome = Parse("""
            [{"bn":"coat-4/","bt":1759741200,"n":"0/x","v":1},{"n":"0/y","v":2},{"n":"0/z","v":3},
             {"n":"1/x","v":4},  {"n":"1/z","v":6}]
            """, ReadingKind.Location);

        outcome.Readings.ShouldHaveSingleItem().Channel.ShouldBe(0);
        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.MissingField);
        deadLetter.Detail.ShouldBe("channel 1 at 2025-10-06T09:00:00.000000Z: y missing; a location reading needs x, y and z at the same time and channel");
        deadLetter.Payload.ShouldBe("""[{"n":"1/x","v":4},{"n":"1/z","v":6}]""");
    }

    [Fact]
    public void A_diastolic_not_below_the_systolic_rejects_both_records_and_keeps_the_heart_rate()
    {
        var outcome = Parse("""[{"bt":1759741200,"n":"hr","v":72},{"n":"sys","v":80},{"n":"dia","v":95}]""");

        var reading = outcome.Readings.ShouldHaveSingleItem();
        (reading.HeartRate, reading.Systolic, reading.Diastolic).ShouldBe((72.0, (double?)null, (double?)null));
        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.OutOfRange);
        deadLetter.Payload.ShouldBe("""[{"n":"sys","v":80},{"n":"dia","v":95}]""");
    }

    [Fact]
    public void A_bad_record_is_dead_lettered_alone_with_its_index_name_and_json()
    {
        var outcome = Parse("""[{"bn":"wrist-17/","bt":1759741200,"n":"hr","v":72},{"n":"temp","vs":"warm"},{"n":"temp","v":33.1}]""");

        var reading = outcome.Readings.ShouldHaveSingleItem();
        (reading.HeartRate, reading.SkinTemperature).ShouldBe((72.0, 33.1));
        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.WrongType);
        deadLetter.Detail.ShouldBe("record 1 (\"wrist-17/temp\"): only a numeric value (v) can be a reading; this record has a string, boolean or data value");
        deadLetter.Payload.ShouldBe("""{"n":"temp","vs":"warm"}""");
    }

    [Fact]
    public void A_record_of_base_fields_only_sets_the_bases_and_is_not_a_reading()
    {
        var outcome = Parse("""[{"bn":"wrist-17/","bt":1759741200,"bu":"beat/min","bver":10},{"n":"hr","v":72},{"n":"hr","v":73,"t":1}]""");

        outcome.Result.ShouldBe(new MessageParseResult(2, 0));
        outcome.Readings[0].Timestamp.ShouldBe(Utc("2025-10-06T09:00:00Z"));
    }

    [Fact]
    public void Base_fields_given_after_the_name_still_apply_to_their_own_record()
    {
        var outcome = Parse("""[{"n":"0/x","v":1,"bn":"coat-4/","bt":1759741200},{"n":"0/y","v":2},{"n":"0/z","v":3}]""", ReadingKind.Location);

        outcome.Readings.ShouldHaveSingleItem().Timestamp.ShouldBe(Utc("2025-10-06T09:00:00Z"));
    }

    [Fact]
    public void Unknown_labels_sums_and_update_times_are_ignored()
    {
        var outcome = Parse("""[{"n":"hr","v":72,"s":1000,"ut":5,"bs":3,"vendor":{"x":[1]},"ct":"60"}]""");

        outcome.Readings.ShouldHaveSingleItem().HeartRate.ShouldBe(72);
    }

    [Fact]
    public void Escaped_names_and_units_are_read_like_plain_ones()
    {
        var outcome = Parse("""[{"\u0062n":"wrist-17\/","n":"t\u0065mp","u":"\u004B","v":306.15}]""");

        outcome.Readings.ShouldHaveSingleItem().SkinTemperature.ShouldBe(33);
    }

    [Fact]
    public void An_escaped_must_understand_label_still_makes_the_pack_unusable()
    {
        var outcome = Parse("""[{"n":"hr","v":72,"crc\u005f":"ab12"}]""");

        outcome.SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedSenML);
    }

    [Fact]
    public void A_pack_level_problem_discards_records_already_read()
    {
        var outcome = Parse("""[{"n":"hr","v":72},{"n":"hr","v":1000,"t":1},{"bt":"later","n":"hr","v":73}]""");

        var deadLetter = outcome.SingleDeadLetter();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.MalformedSenML);
        deadLetter.Detail.ShouldStartWith("record 2: \"bt\" must be a number of seconds");
    }

    [Fact]
    public void A_pack_with_the_content_type_but_readings_inside_an_object_is_malformed_senml()
    {
        Parse("""{"n":"hr","v":72}""", contentType: SenML).SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedSenML);
    }

    [Fact]
    public void A_name_of_257_bytes_is_refused_and_one_of_256_is_read()
    {
        string prefix256 = new string('a', 253) + "/hr";
        Parse($$"""[{"n":"{{prefix256}}","v":72}]""").Readings.ShouldHaveSingleItem();

        string prefix257 = new string('a', 254) + "/hr";
        Parse($$"""[{"n":"{{prefix257}}","v":72}]""").SingleDeadLetter().Reason.ShouldBe(DeadLetterReasons.MalformedSenML);
        Parse($$"""[{"bn":"{{new string('a', 200)}}/","n":"{{new string('b', 60)}}/hr","v":72}]""").SingleDeadLetter().Detail.ShouldContain("longer than 256");
    }

    private static double? ReadingValue(Reading reading, string field) => field switch
    {
        "hr" => reading.HeartRate,
        "sys" => reading.Systolic,
        "dia" => reading.Diastolic,
        _ => reading.SkinTemperature,
    };
}

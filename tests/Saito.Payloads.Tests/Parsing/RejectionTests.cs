using System.Text;
using Saito.Readings;
using static Saito.Payloads.Tests.Parsing.ParserHarness;

namespace Saito.Payloads.Tests.Parsing;

/// <summary>Every reason code, from each format where it can arise, with the detail a person reads.</summary>
public sealed class RejectionTests
{
    public sealed record BadPayload(string Reason, ReadingKind Kind, string Payload, string DetailContains, string? ContentType = null, int Accepted = 0)
    {
        public override string ToString() => $"{Reason}: {Payload}";
    }

    private const string Ts = "\"ts\":\"2025-10-06T09:00:00Z\"";

    public static readonly BadPayload[] Cases =
    [
        new(DeadLetterReasons.Empty, ReadingKind.Biosensor, "", "the payload is empty"),
        new(DeadLetterReasons.Empty, ReadingKind.Biosensor, " \r\n\t ", "the payload is empty"),
        new(DeadLetterReasons.Empty, ReadingKind.Biosensor, "[]", "empty array"),
        new(DeadLetterReasons.Empty, ReadingKind.Biosensor, "[]", "empty SenML pack", "application/senml+json"),
        new(DeadLetterReasons.Empty, ReadingKind.Biosensor, """[{"bn":"wrist-17/","bt":1759741200}]""", "holds no reading"),

        new(DeadLetterReasons.MalformedJson, ReadingKind.Biosensor, "hello", "not valid JSON"),
        new(DeadLetterReasons.MalformedJson, ReadingKind.Biosensor, "{\"ts\":", "not valid JSON"),
        new(DeadLetterReasons.MalformedJson, ReadingKind.Biosensor, """[{"n":"hr","v":72}""", "not valid JSON"),
        new(DeadLetterReasons.MalformedJson, ReadingKind.Biosensor, """[{"bver":11}] trailing""", "not valid JSON"),

        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """{"n":"hr","v":72}""", "a SenML pack is a JSON array", "application/senml+json"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bver":11,"n":"hr","v":72}]""", "SenML version 11"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bver":0,"n":"hr","v":72}]""", "\"bver\" must be a positive integer"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bt":"now","n":"hr","v":72}]""", "\"bt\" must be a number"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bn":7,"n":"hr","v":72}]""", "\"bn\" must be a string"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bu":1,"n":"hr","v":72}]""", "\"bu\" must be a string"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"bv":1e999,"n":"hr","v":72}]""", "\"bv\" must be a finite number"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"n":"hr","v":72,"crc_":"ab12"}]""", "must-understand"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"n":"wrist 17/hr","v":72}]""", "characters SenML does not allow"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"n":"/hr","v":72}]""", "characters SenML does not allow"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"u":"beat/min","v":72}]""", "no name"),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, """[{"n":"hr","v":72},5]""", "record 1: a SenML record is a JSON object", Accepted: 1),
        new(DeadLetterReasons.MalformedSenML, ReadingKind.Biosensor, "[5]", "record 0: a SenML record is a JSON object", "application/senml+json"),

        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":"72"}""", "\"hr\" must be a number, got a string \"72\""),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, "{" + Ts + ""","temp":{"v":33}}""", "\"temp\" must be a number, got a JSON object"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":true}""", "got true"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """{"ts":true,"hr":72}""", "\"ts\" must be an ISO 8601 string or epoch milliseconds"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, "42", "the payload is a JSON number"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, "\"hr\"", "the payload is a JSON string"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[[1,2]]""", "reading 0: expected an object, got a JSON array"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[{"n":"hr","v":"72"}]""", "\"v\" must be a number"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[{"n":"hr","vs":"72"}]""", "only a numeric value (v)"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[{"n":"hr","vb":true}]""", "only a numeric value (v)"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[{"n":5,"v":72}]""", "\"n\" must be a string"),
        new(DeadLetterReasons.WrongType, ReadingKind.Biosensor, """[{"n":"hr","v":72,"t":"-1"}]""", "\"t\" must be a number"),

        new(DeadLetterReasons.MissingField, ReadingKind.Biosensor, """{"hr":72}""", "no ts"),
        new(DeadLetterReasons.MissingField, ReadingKind.Biosensor, """{"ts":null,"hr":72}""", "no ts"),
        new(DeadLetterReasons.MissingField, ReadingKind.Biosensor, "{" + Ts + "}", "at least one of hr, sys, dia, temp"),
        new(DeadLetterReasons.MissingField, ReadingKind.Biosensor, $$"""{{{Ts}},"ch":0,"battery":1}""", "at least one of hr, sys, dia, temp"),
        new(DeadLetterReasons.MissingField, ReadingKind.Location, $$"""{{{Ts}},"x":1,"y":2}""", "z missing"),
        new(DeadLetterReasons.MissingField, ReadingKind.Location, $$"""{{{Ts}},"y":2}""", "x, z missing"),
        new(DeadLetterReasons.MissingField, ReadingKind.Location, "{" + Ts + "}", "needs x, y, z"),
        new(DeadLetterReasons.MissingField, ReadingKind.Pressure, $$"""{{{Ts}},"ch":1}""", "needs kpa"),
        new(DeadLetterReasons.MissingField, ReadingKind.Location, """[{"bt":1759741200,"n":"x","v":1},{"n":"y","v":2}]""", "z missing"),
        new(DeadLetterReasons.MissingField, ReadingKind.Biosensor, """[{"n":"hr","s":72}]""", "no value (v)"),

        new(DeadLetterReasons.DuplicateField, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":72,"hr":73}""", "\"hr\" is given twice"),
        new(DeadLetterReasons.DuplicateField, ReadingKind.Biosensor, $$"""{{{Ts}},{{Ts}},"hr":72}""", "\"ts\" is given twice"),
        new(DeadLetterReasons.DuplicateField, ReadingKind.Biosensor, """[{"bt":1759741200,"n":"hr","v":72},{"n":"hr","v":73}]""", "hr for channel 0 at 2025-10-06T09:00:00.000000Z is already given by record 0", Accepted: 1),

        new(DeadLetterReasons.WrongKind, ReadingKind.Biosensor, $$"""{{{Ts}},"kpa":4.2}""", "\"kpa\" is a pressure value; this topic carries biosensor readings"),
        new(DeadLetterReasons.WrongKind, ReadingKind.Pressure, $$"""{{{Ts}},"kpa":4.2,"x":1}""", "\"x\" is a location value"),
        new(DeadLetterReasons.WrongKind, ReadingKind.Location, $$"""{{{Ts}},"x":1,"y":1,"z":1,"hr":70}""", "\"hr\" is a biosensor value"),
        new(DeadLetterReasons.WrongKind, ReadingKind.Biosensor, """[{"n":"coat-4/0/x","u":"m","v":1}]""", "x is a location value"),

        new(DeadLetterReasons.NotFinite, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":1e999}""", "\"hr\" 1e999 is not a finite number"),
        new(DeadLetterReasons.NotFinite, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":-1E+400}""", "not a finite number"),
        new(DeadLetterReasons.NotFinite, ReadingKind.Biosensor, """[{"n":"hr","v":1e999}]""", "\"v\" 1e999 is not a finite number"),
        new(DeadLetterReasons.NotFinite, ReadingKind.Biosensor, """[{"bv":1.7e308,"n":"hr","v":1.7e308}]""", "bv + v"),

        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, $$"""{{{Ts}},"hr":301}""", "hr 301 is outside 20..300 beats/min"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, $$"""{{{Ts}},"sys":39.9}""", "sys 39.9 is outside 40..300 mmHg"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, $$"""{{{Ts}},"dia":201}""", "dia 201 is outside 20..200 mmHg"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, $$"""{{{Ts}},"temp":45.01}""", "temp 45.01 is outside 20..45 °C"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, $$"""{{{Ts}},"sys":80,"dia":80}""", "dia 80 is not below sys 80"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Location, $$"""{{{Ts}},"x":1,"y":-1000.5,"z":1}""", "y -1000.5 is outside -1000..1000 m"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Pressure, $$"""{{{Ts}},"kpa":-0.1}""", "kpa -0.1 is outside 0..1000 kPa"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, """[{"n":"temp","u":"K","v":273.15}]""", "temp 0 is outside 20..45 °C"),
        new(DeadLetterReasons.OutOfRange, ReadingKind.Biosensor, """[{"n":"sys","v":80},{"n":"dia","v":90}]""", "dia 90 is not below sys 80"),

        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06T09:00:00","hr":72}""", "has no time zone"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-02-29T09:00:00Z","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06T24:00:00Z","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06T09:00:00+25:00","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06T09:00:00.Z","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2025-10-06T09:00:00Z ","hr":72}""", "is not an ISO 8601 date-time"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"2016-12-31T23:59:60Z","hr":72}""", "leap second"),
        new(DeadLetterReasons.BadTimestamp, ReadingKind.Biosensor, """{"ts":"","hr":72}""", "is not an ISO 8601 date-time"),

        new(DeadLetterReasons.TimestampFuture, ReadingKind.Biosensor, """{"ts":"2025-10-06T09:05:05.000001Z","hr":72}""", "at most 300 s is allowed"),
        new(DeadLetterReasons.TimestampFuture, ReadingKind.Biosensor, """{"ts":1e30,"hr":72}""", "is not a time Saito can store"),
        new(DeadLetterReasons.TimestampFuture, ReadingKind.Biosensor, """{"ts":1759741200000000,"hr":72}""", "looks like microseconds"),
        new(DeadLetterReasons.TimestampFuture, ReadingKind.Biosensor, """[{"bt":1759744800,"n":"hr","v":72}]""", "3595 s ahead"),
        new(DeadLetterReasons.TimestampFuture, ReadingKind.Biosensor, """[{"n":"hr","v":72,"t":301}]""", "ahead"),

        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """{"ts":"2025-09-06T09:00:04.999999Z","hr":72}""", "more than 30 days before"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """{"ts":1759741200,"hr":72}""", "this looks like seconds"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """{"ts":-1e30,"hr":72}""", "is not a time Saito can store"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """{"ts":"0001-01-01T00:00:00+01:00","hr":72}""", "outside the calendar"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """[{"bt":300000000,"n":"hr","v":72}]""", "more than 30 days before"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """[{"n":"hr","v":72,"t":-1e9}]""", "more than 30 days before"),
        new(DeadLetterReasons.TimestampPast, ReadingKind.Biosensor, """[{"n":"hr","v":72,"t":-1e12}]""", "\"t\" -1e12 is not a time Saito can store"),

        new(DeadLetterReasons.BadChannel, ReadingKind.Location, $$"""{{{Ts}},"ch":-1,"x":1,"y":1,"z":1}""", "\"ch\" must be an integer from 0 to 65535, got -1"),
        new(DeadLetterReasons.BadChannel, ReadingKind.Location, $$"""{{{Ts}},"ch":65536,"x":1,"y":1,"z":1}""", "got 65536"),
        new(DeadLetterReasons.BadChannel, ReadingKind.Location, $$"""{{{Ts}},"ch":1.5,"x":1,"y":1,"z":1}""", "got 1.5"),
        new(DeadLetterReasons.BadChannel, ReadingKind.Location, $$"""{{{Ts}},"ch":"2","x":1,"y":1,"z":1}""", "got a string \"2\""),
        new(DeadLetterReasons.BadChannel, ReadingKind.Location, """[{"bn":"coat-4/","n":"70000/x","v":1}]""", "channel 70000"),

        new(DeadLetterReasons.UnknownName, ReadingKind.Biosensor, """[{"n":"wrist-17/spo2","v":98}]""", "\"spo2\" is not a field Saito knows"),
        new(DeadLetterReasons.UnknownName, ReadingKind.Biosensor, """[{"n":"HR","v":72}]""", "\"HR\" is not a field"),
        new(DeadLetterReasons.UnknownName, ReadingKind.Biosensor, """[{"n":"wrist-17/","v":72}]""", "\"\" is not a field"),

        new(DeadLetterReasons.UnitMismatch, ReadingKind.Biosensor, """[{"n":"temp","u":"%RH","v":45}]""", "unit \"%RH\" does not fit temp: use Cel or K"),
        new(DeadLetterReasons.UnitMismatch, ReadingKind.Biosensor, """[{"bu":"Cel","n":"hr","v":72}]""", "unit \"Cel\" does not fit hr: use beat/min or 1/min"),
        new(DeadLetterReasons.UnitMismatch, ReadingKind.Biosensor, """[{"bu":"bpm","n":"hr","v":72}]""", "unit \"bpm\" does not fit hr"),
        new(DeadLetterReasons.UnitMismatch, ReadingKind.Location, """[{"n":"x","u":"cm","v":1}]""", "unit \"cm\" does not fit x: use m"),
        new(DeadLetterReasons.UnitMismatch, ReadingKind.Pressure, """[{"n":"p","u":"mmHg","v":1}]""", "use kPa or Pa"),
    ];

    public static TheoryData<BadPayload> All => new(Cases);

    [Theory]
    [MemberData(nameof(All))]
    public void A_bad_payload_gives_its_reason_and_a_detail_a_person_understands(BadPayload c)
    {
        var outcome = Parse(c.Payload, c.Kind, c.ContentType);

        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem($"reasons: {string.Join(", ", outcome.Reasons)}");
        deadLetter.Reason.ShouldBe(c.Reason, deadLetter.Detail);
        deadLetter.Detail.ShouldContain(c.DetailContains, Case.Sensitive);
        outcome.Readings.Count.ShouldBe(c.Accepted);
    }

    [Fact]
    public void Every_reason_code_the_parser_gives_has_a_case_here()
    {
        var covered = Cases.Select(c => c.Reason).ToHashSet();
        covered.Add(DeadLetterReasons.PayloadTooLarge); // below
        covered.Add(DeadLetterReasons.TooManyReadings); // below
        covered.Add(DeadLetterReasons.TooManyRejections); // below
        covered.Add(DeadLetterReasons.TooManyNewDevices); // NewDeviceLimiterTests, RejectionLimitTests
        covered.Add(DeadLetterReasons.DeviceOfAnotherSite); // Saito.Server.Tests: HubSiteTests
        covered.Add(DeadLetterReasons.ConflictingReading); // Saito.Storage.Tests: ReadingStoreContractTests (the writers give it)
        covered.Add(DeadLetterReasons.BadTopic); // SaitoTopicParserTests
        covered.Add(DeadLetterReasons.BadHello); // HelloParsingTests
        covered.Add(DeadLetterReasons.BadCheckIn); // CheckInParserTests
        covered.Add(DeadLetterReasons.UnknownOwner); // Saito.Server.Tests: DeviceAndCheckInTests
        covered.Add(DeadLetterReasons.NotCheckedIn); // Saito.Server.Tests: DeviceAndCheckInTests
        covered.Add(DeadLetterReasons.RegistryUnavailable); // the registry's own outage; documented in docs/protocol.md

        DeadLetterReasons.All.Except(covered).ShouldBeEmpty();
        DeadLetterReasons.All.ShouldBeUnique();
    }

    [Fact]
    public void A_payload_above_the_limit_is_one_dead_letter_with_its_start_and_is_not_parsed()
    {
        var options = new PayloadLimits { MaxPayloadBytes = 64 };
        string payload = "[" + string.Join(",", Enumerable.Repeat("""{"ts":"2025-10-06T09:00:00Z","hr":72}""", 500)) + "]";

        var deadLetter = Parse(payload, options: options).SingleDeadLetter();

        deadLetter.Reason.ShouldBe(DeadLetterReasons.PayloadTooLarge);
        deadLetter.Detail.ShouldContain($"{Encoding.UTF8.GetByteCount(payload)} bytes; at most 64");
        deadLetter.Detail.ShouldContain($"its first {DeadLetter.MaxPayloadChars} bytes");
        deadLetter.Payload.Length.ShouldBe(DeadLetter.MaxPayloadChars);
        payload.ShouldStartWith(deadLetter.Payload);
    }

    [Fact]
    public void Rejections_past_the_cap_are_one_summary_naming_their_count_and_commonest_reasons_and_holding_the_message()
    {
        var options = new PayloadLimits { MaxDeadLettersPerMessage = 3 };
        string[] elements =
        [
            .. Enumerable.Repeat("0", 6), // wrong-type
            .. Enumerable.Repeat($$"""{{{Ts}},"hr":999}""", 3), // out-of-range
            $$"""{{{Ts}},"hr":72}""",
            """{"ts":1,"hr":72}""", // timestamp-past
        ];
        string payload = "[" + string.Join(",", elements) + "]";

        var outcome = Parse(payload, options: options);

        outcome.Readings.ShouldHaveSingleItem().HeartRate.ShouldBe(72);
        outcome.Reasons.ShouldBe([DeadLetterReasons.WrongType, DeadLetterReasons.WrongType, DeadLetterReasons.WrongType, DeadLetterReasons.TooManyRejections]);
        var summary = outcome.DeadLetters[^1];
        summary.Detail.ShouldContain("7 more reading(s) or record(s) of this message were rejected after the first 3 dead letters (Ingestion:MaxDeadLettersPerMessage)");
        summary.Detail.ShouldContain("most common: out-of-range (3), wrong-type (3), timestamp-past (1)");
        summary.OriginalPayload().ShouldBe(Encoding.UTF8.GetBytes(payload));
    }

    [Fact]
    public void A_payload_exactly_at_the_limit_is_parsed()
    {
        string payload = """{"ts":"2025-10-06T09:00:00Z","hr":72}""";
        var options = new PayloadLimits { MaxPayloadBytes = payload.Length };

        Parse(payload, options: options).Readings.ShouldHaveSingleItem();
    }

    [Fact]
    public void Readings_beyond_the_limit_are_one_dead_letter_holding_them_and_the_first_are_kept()
    {
        var options = new PayloadLimits { MaxReadingsPerMessage = 3 };
        string[] elements = [.. Enumerable.Range(0, 5).Select(i => $$"""{"ts":"2025-10-06T09:00:0{{i}}Z","kpa":{{i}}}""")];

        var outcome = Parse("[" + string.Join(", ", elements) + "]", ReadingKind.Pressure, options: options);

        outcome.Readings.Select(r => r.Kpa).ShouldBe([0.0, 1.0, 2.0]);
        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.TooManyReadings);
        deadLetter.Detail.ShouldContain("holds 5 readings; the first 3 were taken and the 2 after them dropped");
        deadLetter.Payload.ShouldBe($"[{elements[3]}, {elements[4]}]");
    }

    [Fact]
    public void Bad_readings_within_the_limit_count_towards_it()
    {
        var options = new PayloadLimits { MaxReadingsPerMessage = 2 };

        var outcome = Parse("""[{"ts":"2025-10-06T09:00:00Z","hr":1},{"ts":"2025-10-06T09:00:00Z","hr":72},{"ts":"2025-10-06T09:00:01Z","hr":73}]""", options: options);

        outcome.Readings.ShouldHaveSingleItem().HeartRate.ShouldBe(72);
        outcome.Reasons.ShouldBe([DeadLetterReasons.OutOfRange, DeadLetterReasons.TooManyReadings]);
    }

    [Fact]
    public void SenML_readings_beyond_the_limit_are_counted_as_readings_not_records()
    {
        var options = new PayloadLimits { MaxReadingsPerMessage = 2 };
        string pack = """
            [{"bn":"coat-4/","bt":1759741200,"bu":"m","n":"0/x","v":1},{"n":"0/y","v":1},{"n":"0/z","v":1},
             {"n":"1/x","v":2},{"n":"1/y","v":2},{"n":"1/z","v":2},
             {"n":"2/x","v":3},{"n":"2/y","v":3},{"n":"2/z","v":3}]
            """;

        var outcome = Parse(pack, ReadingKind.Location, options: options);

        outcome.Readings.Select(r => r.Channel).ShouldBe([0, 1]);
        var deadLetter = outcome.DeadLetters.ShouldHaveSingleItem();
        deadLetter.Reason.ShouldBe(DeadLetterReasons.TooManyReadings);
        deadLetter.Detail.ShouldContain("the pack makes 3 readings; the first 2 were taken and the 1 after them dropped");
    }

    [Theory]
    [InlineData(ReadingLimits.HeartRateMin, "hr")]
    [InlineData(ReadingLimits.HeartRateMax, "hr")]
    [InlineData(ReadingLimits.SystolicMin, "sys")]
    [InlineData(ReadingLimits.SystolicMax, "sys")]
    [InlineData(ReadingLimits.DiastolicMin, "dia")]
    [InlineData(ReadingLimits.DiastolicMax, "dia")]
    [InlineData(ReadingLimits.SkinTemperatureMin, "temp")]
    [InlineData(ReadingLimits.SkinTemperatureMax, "temp")]
    public void The_bounds_of_a_range_are_accepted(double value, string field)
    {
        Parse($$"""{"ts":"2025-10-06T09:00:00Z","{{field}}":{{value}}}""").Readings.ShouldHaveSingleItem();
    }

    [Fact]
    public void The_bounds_of_location_and_pressure_are_accepted()
    {
        Parse("""{"ts":"2025-10-06T09:00:00Z","x":-1000,"y":1000,"z":0}""", ReadingKind.Location).Readings.ShouldHaveSingleItem();
        Parse("""[{"ts":"2025-10-06T09:00:00Z","kpa":0},{"ts":"2025-10-06T09:00:00Z","ch":1,"kpa":1000}]""", ReadingKind.Pressure).Readings.Count.ShouldBe(2);
    }

    [Fact]
    public void The_edges_of_the_time_window_are_accepted()
    {
        var outcome = Parse("""[{"ts":"2025-10-06T09:05:05Z","hr":72},{"ts":"2025-09-06T09:00:05Z","hr":72}]""");

        outcome.Result.ShouldBe(new MessageParseResult(2, 0));
    }
}

using System.Text;

namespace Saito.Payloads.Tests.Parsing;

public sealed class TimestampAndNumberTests
{
    [Theory]
    [InlineData("0", 7, 0L)]
    [InlineData("-0", 7, 0L)]
    [InlineData("1", 7, 10_000_000L)]
    [InlineData("-1.5", 7, -15_000_000L)]
    [InlineData("0.00000001", 7, 0L)]
    [InlineData("1759741200.1234567", 7, 17_597_412_001_234_567L)]
    [InlineData("1759741200.12345678901234567890", 7, 17_597_412_001_234_567L)]
    [InlineData("1.7597412001234567e9", 7, 17_597_412_001_234_567L)]
    [InlineData("17597412001234567E-7", 7, 17_597_412_001_234_567L)]
    [InlineData("1e2", 0, 100L)]
    [InlineData("1E+2", 0, 100L)]
    [InlineData("123456789012345678901234", -10, 12_345_678_901_234L)]
    [InlineData("922337203685477.5807", 4, long.MaxValue)]
    [InlineData("-922337203685477.5807", 4, -long.MaxValue)]
    public void Scaled_numbers_are_exact_and_truncate_toward_zero(string number, int scale, long expected)
    {
        JsonNumbers.TryParseScaled(Encoding.ASCII.GetBytes(number), scale, out long value).ShouldBeTrue();
        value.ShouldBe(expected);
    }

    [Theory]
    [InlineData("922337203685477.5808", 4)]
    [InlineData("1e19", 0)]
    [InlineData("1e99999999999", 0)]
    [InlineData("12x", 0)]
    public void Scaled_numbers_that_do_not_fit_are_refused(string number, int scale)
    {
        JsonNumbers.TryParseScaled(Encoding.ASCII.GetBytes(number), scale, out _).ShouldBeFalse();
    }

    [Theory]
    [InlineData("2025-10-06T09:00:00Z", "2025-10-06T09:00:00.0000000")]
    [InlineData("2024-02-29T23:59:59.9999999Z", "2024-02-29T23:59:59.9999999")]
    [InlineData("2025-10-06T09:00:00+14:00", "2025-10-05T19:00:00.0000000")]
    [InlineData("2025-10-06T09:00:00-00:00", "2025-10-06T09:00:00.0000000")]
    [InlineData("2025-10-06T09:00:00+05", "2025-10-06T04:00:00.0000000")]
    public void Iso_timestamps_are_read_to_utc_ticks(string text, string expectedUtc)
    {
        IsoTimestamp.TryParse(Encoding.ASCII.GetBytes(text), out long ticks).ShouldBe(IsoTimestamp.Result.Ok);
        new DateTime(ticks).ToString("O", System.Globalization.CultureInfo.InvariantCulture).ShouldBe(expectedUtc);
    }

    [Theory]
    [InlineData("2025-10-06T09:00:00", "NoZone")]
    [InlineData("2025-10-06T09:00:00.5", "NoZone")]
    [InlineData("2025-10-06T09:00:60Z", "LeapSecond")]
    [InlineData("2025-10-06T09:00:61Z", "Invalid")]
    [InlineData("2025-13-06T09:00:00Z", "Invalid")]
    [InlineData("2025-00-06T09:00:00Z", "Invalid")]
    [InlineData("2025-04-31T09:00:00Z", "Invalid")]
    [InlineData("0000-01-01T00:00:00Z", "Invalid")]
    [InlineData("2025-10-06T09:60:00Z", "Invalid")]
    [InlineData("2025-10-06X09:00:00Z", "Invalid")]
    [InlineData("2025-10-06T09:00:00+1", "Invalid")]
    [InlineData("2025-10-06T09:00:00+19:00", "Invalid")]
    [InlineData("2025-10-06T09:00:00+01:60", "Invalid")]
    [InlineData("2025-10-06T09:00:00ZZ", "Invalid")]
    [InlineData("+2025-10-06T09:00:00Z", "Invalid")]
    [InlineData("２025-10-06T09:00:00Z", "Invalid")]
    public void Iso_timestamps_without_zone_or_with_impossible_fields_are_refused(string text, string expected)
    {
        IsoTimestamp.TryParse(Encoding.UTF8.GetBytes(text), out _).ToString().ShouldBe(expected);
    }
}

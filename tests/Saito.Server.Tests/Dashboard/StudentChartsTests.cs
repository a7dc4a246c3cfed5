using Saito.Live.Analytics;
using Saito.Readings;
using Saito.Server.Dashboard;
using Saito.Storage.Queries;

namespace Saito.Server.Tests.Dashboard;

/// <summary>The student charts' arithmetic: bucket width, merged averages, seat totals, sway replay.</summary>
public sealed class StudentChartsTests
{
    private static readonly DateTime T0 = new(2026, 3, 2, 9, 0, 0, DateTimeKind.Utc);

    private static double Ms(DateTime t) => (t - DateTime.UnixEpoch).TotalMilliseconds;

    [Theory]
    [InlineData(3_600, 2_000, 2)]
    [InlineData(600, 2_000, 1)]
    [InlineData(31 * 86_400, 2_000, 1_340)]
    [InlineData(7_200, 100_000, 1)]
    public void BucketIsTheRangeOverThePointsInWholeSecondsAtLeastOne(int rangeSeconds, int maxPoints, int expected) =>
        Assert.Equal(expected, StudentCharts.BucketSecondsOf(TimeSpan.FromSeconds(rangeSeconds), maxPoints));

    [Theory]
    [InlineData(100)]
    [InlineData(2_000)]
    [InlineData(StudentCharts.MaxChartPointsLimit)]
    public void No_range_touches_more_epoch_aligned_buckets_than_MaxChartPoints(int maxPoints)
    {
        foreach (int rangeSeconds in new[] { 99, 100, 3_600, 7_200, 86_400, 31 * 86_400 })
        {
            long width = StudentCharts.BucketSecondsOf(TimeSpan.FromSeconds(rangeSeconds), maxPoints);
            for (long from = 1_772_000_000; from < 1_772_000_000 + (2 * width); from++)
            {
                long to = from + rangeSeconds;
                long touched = ((to + width - 1) / width) - (from / width);
                touched.ShouldBeLessThanOrEqualTo(maxPoints, $"{rangeSeconds} s from {from} in buckets of {width} s");
            }
        }
    }

    [Fact]
    public void AverageWeighsDevicesByTheirReadingsAndSortsByTime()
    {
        var later = T0.AddMinutes(1);
        List<DownsampleBucket> buckets =
        [
            new(2, 0, later, 1, [new FieldStatistics(ValueField.HeartRate, 1, 90, 90, 90)]),
            new(1, 0, T0, 3, [new FieldStatistics(ValueField.HeartRate, 3, 60, 60, 60)]),
            new(2, 0, T0, 1, [new FieldStatistics(ValueField.HeartRate, 1, 80, 80, 80), new FieldStatistics(ValueField.SkinTemperature, 0, null, null, null)]),
        ];

        var hr = StudentCharts.Average(buckets, ValueField.HeartRate);

        Assert.Equal(2, hr.Count);
        Assert.Equal([Ms(T0), 65.0], hr[0]);
        Assert.Equal([Ms(later), 90.0], hr[1]);
        Assert.Empty(StudentCharts.Average(buckets, ValueField.SkinTemperature));
    }

    [Fact]
    public void SeatTotalSumsTheCellsMeans()
    {
        List<DownsampleBucket> buckets =
        [
            new(5, 0, T0, 2, [new FieldStatistics(ValueField.Pressure, 2, 1, 1.5, 2)]),
            new(5, 1, T0, 2, [new FieldStatistics(ValueField.Pressure, 2, 2, 2.5, 3)]),
        ];

        Assert.Equal([[Ms(T0), 4.0]], StudentCharts.Total(buckets));
    }

    [Fact]
    public void SwayIsSampledOncePerBucketAfterSettlingFromTheHeadChannelOnly()
    {
        var options = new SwayOptions { SettlingSeconds = 2, WindowSeconds = 10 };
        var readings = new List<Reading>();
        for (var i = 0; i < 100; i++)
        {
            var t = T0.AddSeconds(i * 0.5);
            readings.Add(new Reading(ReadingKind.Location, 7, 1, t, t, i % 2 == 0 ? 0.1 : -0.1, 0, 1.2));
            readings.Add(new Reading(ReadingKind.Location, 7, 2, t, t, 5, 5, 0));
        }

        var (points, truncated) = StudentCharts.Sway(readings, headChannel: 1, options, TimeSpan.FromSeconds(10));

        Assert.False(truncated);
        Assert.Equal(5, points.Count);
        Assert.Equal(Ms(T0), points[0][0]);
        Assert.All(points, p => Assert.InRange(p[1], 0.09, 0.11));
        Assert.Equal(10_000, points[1][0] - points[0][0]);
    }
}

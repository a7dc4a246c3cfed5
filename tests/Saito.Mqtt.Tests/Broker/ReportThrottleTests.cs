namespace Saito.Mqtt.Tests.Broker;

/// <summary>
/// The counts a throttled warning (and the Debug lines between two warnings) carries: a refused CONNECT between two
/// warnings once logged "(0 CONNECTs refused since the last warning, N in all)".
/// </summary>
public sealed class ReportThrottleTests
{
    [Fact]
    public void The_events_between_two_reports_count_those_since_the_last_report()
    {
        var throttle = new ReportThrottle(TimeSpan.FromHours(1));

        throttle.Due(1).ShouldBe(1, "the first event is reported");
        throttle.Due(2).ShouldBe(0, "the next is not due within the interval");
        throttle.SinceReport(2).ShouldBe(1);
        throttle.Due(3).ShouldBe(0);
        throttle.SinceReport(3).ShouldBe(2, "two events since the report, this one included");
    }

    [Fact]
    public void A_report_counts_the_events_since_the_one_before()
    {
        var throttle = new ReportThrottle(TimeSpan.Zero);

        throttle.Due(1).ShouldBe(1);
        throttle.Due(4).ShouldBe(3, "events 2, 3 and 4");
        throttle.SinceReport(5).ShouldBe(1);
    }
}

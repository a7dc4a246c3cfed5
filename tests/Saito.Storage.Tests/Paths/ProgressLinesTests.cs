using System.Diagnostics;

namespace Saito.Storage.Tests.Paths;

public sealed class ProgressLinesTests
{
    [Fact]
    public void A_line_at_the_start_then_one_per_interval_with_rate_and_time_left_then_the_total()
    {
        long now = 0;
        var output = new StringWriter();
        var lines = new ProgressLines(output, "rows", TimeSpan.FromSeconds(10), () => now);
        long second = Stopwatch.Frequency;

        lines.Report("moving rows", 0, 1_000_000);
        now = 5 * second;
        lines.Report("moving rows", 100_000, 1_000_000); // within the interval: no line
        now = 10 * second;
        lines.Report("moving rows", 200_000, 1_000_000);
        now = 40 * second;
        lines.Finish(1_000_000);

        output.ToString().Split(Environment.NewLine, StringSplitOptions.RemoveEmptyEntries).ShouldBe(
        [
            "moving rows: started, 1,000,000 rows",
            "moving rows: 200,000 of 1,000,000 rows (20 %), 20,000 rows/s, about 40 s left",
            "moving rows: done, 1,000,000 rows in 40.0 s (25,000 rows/s)",
        ]);
    }

    [Fact]
    public void The_time_left_reads_in_minutes_and_hours()
    {
        var lines = new ProgressLines(TextWriter.Null, "rows");
        lines.Line("x", 1_000, 100_000, TimeSpan.FromSeconds(10)).ShouldEndWith("100 rows/s, about 16 min 30 s left");
        lines.Line("x", 1_000, 10_000_000, TimeSpan.FromSeconds(10)).ShouldEndWith("about 27 h 46 min left");
        lines.Line("x", 0, 0, TimeSpan.Zero).ShouldBe("x: 0 of 0 rows, 0 rows/s");
    }
}

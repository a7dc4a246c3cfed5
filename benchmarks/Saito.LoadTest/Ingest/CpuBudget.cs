namespace Saito.LoadTest.Ingest;

/// <summary>
/// Where a run's CPU went per reading, and what a rate would take at those costs: a run at <c>c</c> cores and
/// <c>r</c> readings/s spent <c>c / r</c> core-seconds, so <c>c / r * 10^6</c> microseconds of CPU, per reading. A
/// rate that costs more cores than the machine has cannot be reached on it, however the work is spread.
/// </summary>
internal static class CpuBudget
{
    /// <summary>Microseconds of CPU per reading; NaN without readings.</summary>
    public static double MicrosPerReading(double cores, double readingsPerSecond) =>
        readingsPerSecond > 0 && !double.IsNaN(cores) ? cores / readingsPerSecond * 1e6 : double.NaN;

    /// <summary>Cores <paramref name="readingsPerSecond"/> takes at <paramref name="microsPerReading"/>.</summary>
    public static double CoresNeeded(double readingsPerSecond, double microsPerReading) => readingsPerSecond * microsPerReading / 1e6;
}

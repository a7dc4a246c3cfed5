using System.Globalization;

namespace Saito.LoadTest.Common;

/// <summary>What Linux's /proc says of a process and of the machine: resident memory and CPU time.</summary>
internal static class ProcStat
{
    private static readonly double s_ticksPerSecond = 100.0; // USER_HZ; 100 on every Linux the tool runs on

    /// <summary>VmRSS of a process in bytes, or -1 if it is gone.</summary>
    public static long ResidentBytes(int pid)
    {
        try
        {
            foreach (string line in File.ReadLines($"/proc/{pid}/status"))
            {
                if (line.StartsWith("VmRSS:", StringComparison.Ordinal))
                {
                    var parts = line.Split(' ', StringSplitOptions.RemoveEmptyEntries);
                    return long.Parse(parts[1], CultureInfo.InvariantCulture) * 1024;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return -1;
        }

        return -1;
    }

    /// <summary>User + system CPU seconds a process has used, or NaN if it is gone.</summary>
    public static double CpuSeconds(int pid)
    {
        try
        {
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            // Fields after the command name, which is in parentheses and may contain spaces.
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            long utime = long.Parse(fields[11], CultureInfo.InvariantCulture);
            long stime = long.Parse(fields[12], CultureInfo.InvariantCulture);
            return (utime + stime) / s_ticksPerSecond;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return double.NaN;
        }
    }

    /// <summary>
    /// CPU seconds of every process named <paramref name="name"/> (e.g. <c>postgres</c>: the postmaster, its backends and,
    /// through the postmaster's reaped-children times, backends that have exited). Every cluster on the machine counts.
    /// </summary>
    public static double CpuSecondsOfAll(string name)
    {
        double total = 0;
        foreach (string dir in Directory.EnumerateDirectories("/proc"))
        {
            string pid = Path.GetFileName(dir);
            if (pid.Length == 0 || !char.IsAsciiDigit(pid[0]))
            {
                continue;
            }

            try
            {
                string stat = File.ReadAllText(Path.Combine(dir, "stat"));
                int open = stat.IndexOf('(', StringComparison.Ordinal);
                int close = stat.LastIndexOf(')');
                if (stat.AsSpan(open + 1, close - open - 1).SequenceEqual(name))
                {
                    var fields = stat[(close + 2)..].Split(' ');
                    for (int i = 11; i <= 14; i++)
                    {
                        total += long.Parse(fields[i], CultureInfo.InvariantCulture);
                    }
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // The process ended while we looked.
            }
        }

        return total / s_ticksPerSecond;
    }

    /// <summary>Busy CPU seconds of the whole machine (every core; idle and iowait excluded).</summary>
    public static double MachineBusySeconds()
    {
        string first = File.ReadLines("/proc/stat").First();
        var f = first.Split(' ', StringSplitOptions.RemoveEmptyEntries);
        // cpu user nice system idle iowait irq softirq steal ...
        long busy = 0;
        for (int i = 1; i < f.Length && i <= 8; i++)
        {
            if (i is 4 or 5)
            {
                continue;
            }

            busy += long.Parse(f[i], CultureInfo.InvariantCulture);
        }

        return busy / s_ticksPerSecond;
    }

    /// <summary>CPU seconds this process (the load generator) has used.</summary>
    public static double OwnCpuSeconds() => Environment.CpuUsage.TotalTime.TotalSeconds;
}

/// <summary>Measures cores used over an interval: by one process, by this tool and by the whole machine.</summary>
internal sealed class CpuMeter
{
    private readonly int? _pid;
    private readonly double _process;
    private readonly double _own;
    private readonly double _machine;
    private readonly double _postgres;
    private readonly long _start = System.Diagnostics.Stopwatch.GetTimestamp();

    public CpuMeter(int? pid = null)
    {
        _pid = pid;
        _process = pid is { } p ? ProcStat.CpuSeconds(p) : double.NaN;
        _own = ProcStat.OwnCpuSeconds();
        _machine = ProcStat.MachineBusySeconds();
        _postgres = ProcStat.CpuSecondsOfAll("postgres");
    }

    public CpuUse Cores()
    {
        double seconds = System.Diagnostics.Stopwatch.GetElapsedTime(_start).TotalSeconds;
        double process = _pid is { } p ? (ProcStat.CpuSeconds(p) - _process) / seconds : 0;
        return new CpuUse(process, (ProcStat.OwnCpuSeconds() - _own) / seconds, (ProcStat.CpuSecondsOfAll("postgres") - _postgres) / seconds,
            (ProcStat.MachineBusySeconds() - _machine) / seconds);
    }
}

/// <summary>Cores used over an interval.</summary>
/// <param name="Process">the watched process (Saito.Server), 0 if none</param>
/// <param name="Tool">this load tool (which in <c>bulk</c> is where Saito's store or the SQLite loop runs)</param>
/// <param name="Postgres">every process named postgres</param>
/// <param name="Machine">the whole machine, kernel included</param>
internal readonly record struct CpuUse(double Process, double Tool, double Postgres, double Machine)
{
    /// <summary>The rest: kernel threads, psql, and whatever else runs on the machine (other people's work).</summary>
    public double Rest => Math.Max(0, Machine - Process - Tool - Postgres);
}

using Saito.Storage.Archive;

namespace Saito.Archiver;

/// <summary>
/// The crash tests' pause (<see cref="ArchivePausePoints"/>), read from the environment once, here at the edge: with
/// <c>SAITO_ARCHIVER_PAUSE_AT</c> set to a point, the first batch to reach it writes <c>SAITO-ARCHIVER-PAUSED point batch</c>
/// to stderr and waits forever (or <c>SAITO_ARCHIVER_PAUSE_SECONDS</c>, or until the file <c>SAITO_ARCHIVER_RESUME_FILE</c>
/// names exists), so the test can SIGKILL the process there, or act and let it go on.
/// Unset (always, outside tests): <see cref="IArchivePauses.None"/>.
/// </summary>
internal sealed class EnvironmentArchivePauses : IArchivePauses
{
    private readonly string _point;
    private readonly int _milliseconds;
    private readonly string? _resumeFile;
    private int _hit;

    private EnvironmentArchivePauses(string point, int milliseconds, string? resumeFile)
    {
        _point = point;
        _milliseconds = milliseconds;
        _resumeFile = resumeFile;
    }

    public static IArchivePauses FromEnvironment() =>
        Environment.GetEnvironmentVariable(ArchivePausePoints.EnvironmentVariable) is { } point
            ? new EnvironmentArchivePauses(
                point,
                int.TryParse(Environment.GetEnvironmentVariable(ArchivePausePoints.SecondsVariable), out int seconds) ? seconds * 1000 : Timeout.Infinite,
                Environment.GetEnvironmentVariable(ArchivePausePoints.ResumeFileVariable))
            : IArchivePauses.None;

    public void Reach(string point, string batchId)
    {
        if (!string.Equals(_point, point, StringComparison.Ordinal) || Interlocked.Exchange(ref _hit, 1) == 1)
        {
            return;
        }

        Console.Error.WriteLine($"SAITO-ARCHIVER-PAUSED {point} {batchId}");
        Console.Error.Flush();
        if (_resumeFile is null)
        {
            Thread.Sleep(_milliseconds);
            return;
        }

        long until = _milliseconds == Timeout.Infinite ? long.MaxValue : Environment.TickCount64 + _milliseconds;
        while (!File.Exists(_resumeFile) && Environment.TickCount64 < until)
        {
            Thread.Sleep(20);
        }
    }
}

namespace Saito.Storage.Archive;

/// <summary>
/// Named points in a batch's life where the crash tests stop the archiver: with <c>SAITO_ARCHIVER_PAUSE_AT</c> set to
/// one of these names, the first batch to reach it writes <c>SAITO-ARCHIVER-PAUSED name batch</c> to stderr and waits
/// forever, so the test can SIGKILL the process exactly there. Unset (always, outside tests): nothing happens.
/// </summary>
public static class ArchivePausePoints
{
    public const string EnvironmentVariable = "SAITO_ARCHIVER_PAUSE_AT";

    /// <summary>With this set too, the pause lasts that many seconds and the run then goes on (a test acts meanwhile).</summary>
    public const string SecondsVariable = "SAITO_ARCHIVER_PAUSE_SECONDS";

    /// <summary>Every point, in the order a batch passes them.</summary>
    public static IReadOnlyList<string> All { get; } =
    [
        "planned",              // journal says planned, nothing read yet
        "mid-select",           // half the batch read from the hot table
        "mid-export",           // half the rows written to the temporary export file
        "export-renamed",       // export file in place, no manifest yet
        "manifest-written",     // manifest in place, journal still says planned
        "exported",             // journal says exported
        "archive-uncommitted",  // rows inserted into the archive table, transaction open
        "archived",             // archive insert and journal 'archived' committed
        "delete-uncommitted",   // rows deleted from the hot table, transaction open
        "deleted",              // hot delete committed, journal not yet 'done' (SQLite: another file)
        "done",                 // journal says done
    ];

    private static readonly string? s_point = Environment.GetEnvironmentVariable(EnvironmentVariable);
    private static int s_hit;

    public static void Reach(string point, string batchId)
    {
        if (s_point is null || !string.Equals(s_point, point, StringComparison.Ordinal) || Interlocked.Exchange(ref s_hit, 1) == 1)
        {
            return;
        }

        Console.Error.WriteLine($"SAITO-ARCHIVER-PAUSED {point} {batchId}");
        Console.Error.Flush();
        Thread.Sleep(int.TryParse(Environment.GetEnvironmentVariable(SecondsVariable), out int seconds) ? seconds * 1000 : Timeout.Infinite);
    }
}

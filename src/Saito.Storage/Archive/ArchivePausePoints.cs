namespace Saito.Storage.Archive;

/// <summary>
/// Named points in a batch's life where a hook (<see cref="IArchivePauses"/>) may stop the archiver: the crash tests
/// run <c>saito-archiver</c> with <c>SAITO_ARCHIVER_PAUSE_AT</c> set to one of these names, and the CLI (the only place
/// that reads it) hands the engines a hook that pauses there, so the test can SIGKILL the process exactly there.
/// </summary>
internal static class ArchivePausePoints
{
    public const string EnvironmentVariable = "SAITO_ARCHIVER_PAUSE_AT";

    /// <summary>With this set too, the pause lasts that many seconds and the run then goes on (a test acts meanwhile).</summary>
    public const string SecondsVariable = "SAITO_ARCHIVER_PAUSE_SECONDS";

    /// <summary>With this set to a path, the pause ends as soon as that file exists (a test acts, then lets the run go on).</summary>
    public const string ResumeFileVariable = "SAITO_ARCHIVER_RESUME_FILE";

    /// <summary>Restore, before it reads a file's rows (not a batch's step, so not in <see cref="All"/>): the stop test signals it there.</summary>
    public const string RestoreFile = "restore-file";

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
}

/// <summary>
/// Called as a batch reaches each of <see cref="ArchivePausePoints.All"/>. Synchronous on purpose: several points sit
/// inside SQLite's synchronous loops, and a pause must hold the thread exactly there (with its transaction open).
/// </summary>
internal interface IArchivePauses
{
    void Reach(string point, string batchId);

    /// <summary>Production: nothing happens.</summary>
    static IArchivePauses None { get; } = new NoPauses();

    private sealed class NoPauses : IArchivePauses
    {
        public void Reach(string point, string batchId)
        {
        }
    }
}

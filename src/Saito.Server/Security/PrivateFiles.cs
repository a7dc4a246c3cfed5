using System.Runtime.InteropServices;

namespace Saito.Server.Security;

/// <summary>
/// The server's files are its owner's alone: the process's file mode creation mask is set to 077 at start, so the data
/// folder and every folder under it are created 0700 and every file 0600 (SQLite's hot and archive databases and their
/// <c>-wal</c> and <c>-shm</c> files, the registry in the hot database, the credentials file, the sign-in keys). They were
/// created 0644, readable by every account on the machine: children's vitals, contacts, hub secrets' hashes and the keys
/// that sign staff cookies. A mask, not a mode per call site: SQLite, EF Core and Data Protection create files themselves.
/// Files made before this keep their mode (<c>chmod -R go= /var/lib/saito</c> tightens them). Tests that start Saito in
/// their own process do not call it: the mask is the process's, and would reach their other files.
/// </summary>
public static class PrivateFiles
{
    private const uint OwnerOnly = 0x3F; // 077: no permission for group or others

    /// <summary>Sets the mask on Unix; does nothing elsewhere (Windows folders inherit their ACL).</summary>
    public static void Restrict()
    {
        if (OperatingSystem.IsLinux() || OperatingSystem.IsMacOS() || OperatingSystem.IsFreeBSD())
        {
            _ = umask(OwnerOnly);
        }
    }

    // DllImport, not LibraryImport: the latter needs unsafe code in the whole project for one blittable call.
    [DllImport("libc", EntryPoint = "umask")]
    [DefaultDllImportSearchPaths(DllImportSearchPath.SafeDirectories)]
    private static extern uint umask(uint mask);
}

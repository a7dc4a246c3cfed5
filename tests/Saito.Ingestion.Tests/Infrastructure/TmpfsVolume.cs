using Microsoft.Data.Sqlite;

namespace Saito.Ingestion.Tests.Infrastructure;

/// <summary>
/// A tmpfs of a fixed size mounted on a folder, unmounted (lazily, in case a file is still open) at the end: a small
/// real filesystem to fill. Mounting needs root (CAP_SYS_ADMIN), as scripts/test.sh and CI run; elsewhere the test is
/// skipped and says why.
/// </summary>
public sealed class TmpfsVolume : IAsyncDisposable
{
    private readonly string _path;

    private TmpfsVolume(string path) => _path = path;

    public static async Task<TmpfsVolume> MountAsync(string path, int sizeMegabytes)
    {
        var (code, output) = await Commands.RunAsync("mount", "-t", "tmpfs", "-o", $"size={sizeMegabytes}m", "tmpfs", path);
        Assert.SkipWhen(code != 0, $"needs permission to mount a tmpfs (root with CAP_SYS_ADMIN): mount said {output.Trim()}");
        return new TmpfsVolume(path);
    }

    public long FreeBytes() => new DriveInfo(_path).AvailableFreeSpace;

    /// <summary>
    /// Takes every free byte with <c>fallocate</c> into <paramref name="file"/>, as an operator's copy or another program
    /// would: retried a little smaller while the volume's other files (a database's log) grow under it.
    /// </summary>
    public async Task FillAsync(string file)
    {
        for (long size = FreeBytes(); size > 0; size = Math.Min(size - 64 * 1024, FreeBytes()))
        {
            var (code, _) = await Commands.RunAsync("fallocate", "-l", size.ToString(System.Globalization.CultureInfo.InvariantCulture), file);
            if (code == 0)
            {
                return;
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        SqliteConnection.ClearAllPools();
        await Commands.RunAsync("umount", "--lazy", _path);
    }
}

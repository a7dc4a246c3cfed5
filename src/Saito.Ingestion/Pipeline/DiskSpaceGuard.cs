using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Saito.Readings.Configuration;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.Ingestion.Pipeline;

/// <summary>
/// The free-space watermark (<c>Storage:MinFreeDiskMegabytes</c>, <c>Storage:FreeSpacePaths</c>), read from the
/// <c>Storage</c> section beside <see cref="StorageOptions"/>.
/// </summary>
public sealed class DiskSpaceOptions
{
    public const string SectionName = StorageOptions.SectionName;

    /// <summary>Below this much free space on a watched folder's volume, writes wait. 0 turns the watermark off.</summary>
    public int MinFreeDiskMegabytes { get; set; } = 256;

    /// <summary>
    /// Folders whose volumes are watched besides SQLite's <see cref="StorageOptions.HotPath"/> and
    /// <see cref="StorageOptions.ArchivePath"/>: for PostgreSQL or SQL Server on this machine, their data folders
    /// (Saito cannot see a remote server's disks, so without these nothing is watched for them).
    /// </summary>
    public string[] FreeSpacePaths { get; set; } = [];
}

public sealed class DiskSpaceOptionsValidator : IValidateOptions<DiskSpaceOptions>
{
    public ValidateOptionsResult Validate(string? name, DiskSpaceOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        OptionFailures.Range(failures, "Storage:MinFreeDiskMegabytes", options.MinFreeDiskMegabytes, 0, 1_048_576, minMeaning: "off");

        if (options.FreeSpacePaths.Any(string.IsNullOrWhiteSpace))
        {
            failures.Add("Storage:FreeSpacePaths must name folders (one is empty).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

/// <summary>A watched folder whose volume has less free space than the watermark.</summary>
public sealed record DiskSpaceShortage(string Path, long FreeBytes, long MinimumBytes)
{
    public string Describe() =>
        $"free disk space for {Path} is {FreeBytes / (1024 * 1024)} MB, below Storage:MinFreeDiskMegabytes ({MinimumBytes / (1024 * 1024)} MB): " +
        "readings are held and not acknowledged until space is freed";
}

/// <summary>
/// Keeps writes off a volume that is nearly full: before each batch a writer waits while a watched folder's volume has
/// less free space than the watermark, so the queue fills, publishers wait (their acknowledgements held) and nothing is
/// acknowledged that was not stored, instead of a commit failing half-way on a full disk. When space returns, writing
/// carries on. Checked at most once a second while there is room, every half second while there is not.
/// </summary>
public sealed partial class DiskSpaceGuard
{
    private static readonly TimeSpan RecheckAfter = TimeSpan.FromSeconds(1);
    private static readonly TimeSpan PollWhileLow = TimeSpan.FromMilliseconds(500);

    private readonly string[] _paths;
    private readonly long _minimumBytes;
    private readonly TimeProvider _time;
    private readonly ILogger<DiskSpaceGuard> _logger;
    private readonly object _lock = new();
    private long _checkedAt;
    private DiskSpaceShortage? _shortage;

    public DiskSpaceGuard(IOptions<DiskSpaceOptions> options, IOptions<StorageOptions> storage, TimeProvider time, ILogger<DiskSpaceGuard> logger)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(storage);
        _minimumBytes = options.Value.MinFreeDiskMegabytes * 1024L * 1024L;
        var paths = new List<string>();
        if (storage.Value.Provider == StorageProvider.Sqlite)
        {
            paths.Add(storage.Value.HotPath);
            paths.Add(storage.Value.ArchivePath);
        }

        paths.AddRange(options.Value.FreeSpacePaths);
        _paths = [.. paths.Select(Path.GetFullPath).Distinct(StringComparer.Ordinal)];
        _time = time;
        _logger = logger;
        if (_minimumBytes > 0 && _paths.Length == 0)
        {
            LogNothingToWatch(storage.Value.Provider.ToString());
        }
    }

    /// <summary>Whether anything is watched: the watermark is on and there is a local folder to watch.</summary>
    public bool IsWatching => _minimumBytes > 0 && _paths.Length > 0;

    public long MinimumBytes => _minimumBytes;

    /// <summary>
    /// The free bytes on the volume holding <paramref name="path"/> (or its nearest existing parent, for a folder
    /// not created yet), from <see cref="DriveInfo"/>.
    /// </summary>
    public static long FreeBytes(string path)
    {
        string? folder = Path.GetFullPath(path);
        while (folder is not null && !Directory.Exists(folder))
        {
            folder = Path.GetDirectoryName(folder);
        }

        return new DriveInfo(folder ?? Path.GetPathRoot(Path.GetFullPath(path))!).AvailableFreeSpace;
    }

    /// <summary>Looks at every watched volume now; null when all have room (or nothing is watched).</summary>
    public DiskSpaceShortage? Check()
    {
        if (!IsWatching)
        {
            return null;
        }

        DiskSpaceShortage? shortage = null;
        foreach (string path in _paths)
        {
            long free = FreeBytes(path);
            if (free < _minimumBytes)
            {
                shortage = new DiskSpaceShortage(path, free, _minimumBytes);
                break;
            }
        }

        DiskSpaceShortage? before;
        lock (_lock)
        {
            before = _shortage;
            _shortage = shortage;
            _checkedAt = Stopwatch.GetTimestamp();
        }

        if (shortage is not null && before is null)
        {
            LogLow(shortage.Path, shortage.FreeBytes / (1024 * 1024), _minimumBytes / (1024 * 1024));
        }
        else if (shortage is null && before is not null)
        {
            LogRecovered(before.Path, _minimumBytes / (1024 * 1024));
        }

        return shortage;
    }

    /// <summary>Completes once every watched volume has room: at once, unless the last look found one short or is stale.</summary>
    public async ValueTask WaitForSpaceAsync(CancellationToken cancellationToken)
    {
        if (!IsWatching)
        {
            return;
        }

        lock (_lock)
        {
            if (_shortage is null && Stopwatch.GetElapsedTime(_checkedAt) < RecheckAfter)
            {
                return;
            }
        }

        while (Check() is not null)
        {
            await Task.Delay(PollWhileLow, _time, cancellationToken);
        }
    }

    [LoggerMessage(2501, LogLevel.Warning, "Free disk space for {Path} is {FreeMegabytes} MB, below Storage:MinFreeDiskMegabytes ({MinimumMegabytes} MB): holding writes and acknowledgements until space is freed")]
    private partial void LogLow(string path, long freeMegabytes, long minimumMegabytes);

    [LoggerMessage(2502, LogLevel.Information, "Free disk space for {Path} is back above {MinimumMegabytes} MB: writing again")]
    private partial void LogRecovered(string path, long minimumMegabytes);

    [LoggerMessage(2503, LogLevel.Information, "Storage:MinFreeDiskMegabytes watches nothing for {Provider}: its data is not in a local folder Saito knows. Set Storage:FreeSpacePaths to the database's data folder if it runs on this machine")]
    private partial void LogNothingToWatch(string provider);
}

using System.Buffers;
using System.IO.Compression;
using System.Security.Cryptography;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Archive;

/// <summary>The manifest beside each export file: what the file holds and its SHA-256.</summary>
public sealed record ExportManifest
{
    public const string CurrentFormat = "saito-archive-csv/1";

    public string Format { get; init; } = CurrentFormat;

    public required string BatchId { get; init; }

    public required string Kind { get; init; }

    public required string KeyStrategy { get; init; }

    /// <summary>The hot table the rows came from.</summary>
    public required string Table { get; init; }

    /// <summary>The export file's name (in the manifest's folder).</summary>
    public required string File { get; init; }

    public required bool Gzip { get; init; }

    public required long Rows { get; init; }

    public string? FirstKey { get; init; }

    public string? LastKey { get; init; }

    public required string Sha256 { get; init; }

    public required DateTime CutoffUtc { get; init; }

    public required DateTime CreatedUtc { get; init; }

    public ReadingKind ReadingKind() => ReadingKinds.TryParse(Kind, out var kind)
        ? kind
        : throw new InvalidDataException($"Manifest of {BatchId}: unknown kind '{Kind}'.");

    public KeyStrategy Keys() => KeyStrategy switch
    {
        "natural" => Saito.Storage.Keys.KeyStrategy.Natural,
        "guid" => Saito.Storage.Keys.KeyStrategy.Guid,
        "sequential-guid" => Saito.Storage.Keys.KeyStrategy.SequentialGuid,
        _ => throw new InvalidDataException($"Manifest of {BatchId}: unknown key strategy '{KeyStrategy}'."),
    };
}

/// <summary>
/// Writing export files so that a crash never leaves a corrupt one under its real name: write to
/// <c>name.tmp</c>, flush to disk (fsync), then rename over the real name. A reader sees the old file or the
/// whole new one. The manifest follows its data file the same way, so a manifest always describes a whole file.
/// </summary>
public static class ExportFiles
{
    private static readonly JsonSerializerOptions s_json = new()
    {
        WriteIndented = true,
        PropertyNamingPolicy = JsonNamingPolicy.CamelCase,
        DefaultIgnoreCondition = JsonIgnoreCondition.WhenWritingNull,
    };

    public const string TempSuffix = ".tmp";

    public static string DataPath(string directory, string batchId, ReadingKind kind, bool gzip) =>
        Path.Combine(Path.GetFullPath(directory), ReadingKinds.Name(kind), batchId + (gzip ? ".csv.gz" : ".csv"));

    public static string ManifestPath(string dataPath)
    {
        ArgumentNullException.ThrowIfNull(dataPath);
        string name = dataPath.EndsWith(".csv.gz", StringComparison.Ordinal) ? dataPath[..^7] : dataPath[..^4];
        return name + ".manifest.json";
    }

    /// <summary>
    /// Writes the rows to <paramref name="dataPath"/> atomically; returns the file's SHA-256 (hex), computed over the
    /// bytes as they go to the file (the compressed bytes with gzip), so the file is never read back.
    /// </summary>
    public static string WriteData(string dataPath, IReadOnlyList<ArchiveRow> rows, ReadingKind kind, KeyStrategy keys, bool gzip,
        Action<int>? afterRow = null)
    {
        ArgumentNullException.ThrowIfNull(rows);
        Directory.CreateDirectory(Path.GetDirectoryName(dataPath)!);
        string temp = dataPath + TempSuffix;
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(1 << 16);
        try
        {
            // No FileStream buffer: the rows are formatted into one 64 KB buffer, hashed and written from there.
            using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None, bufferSize: 0))
            {
                using (var hashed = new HashingWriteStream(file, hash))
                {
                    using (Stream target = gzip ? new GZipStream(hashed, CompressionLevel.Fastest, leaveOpen: true) : hashed)
                    {
                        int used = Encoding.UTF8.GetBytes(ArchiveCsv.Header(kind, keys), buffer);
                        buffer[used++] = (byte)'\n';
                        for (int i = 0; i < rows.Count; i++)
                        {
                            if (buffer.Length - used < ArchiveCsv.MaxRowBytes)
                            {
                                target.Write(buffer, 0, used);
                                used = 0;
                            }

                            if (!ArchiveCsv.TryFormatRow(buffer.AsSpan(used), rows[i], keys, valueCount, out int written))
                            {
                                throw new InvalidOperationException($"Row {i} of {dataPath} does not fit in {ArchiveCsv.MaxRowBytes} bytes.");
                            }

                            used += written;
                            afterRow?.Invoke(i);
                        }

                        target.Write(buffer, 0, used);
                    }
                }

                file.Flush(flushToDisk: true);
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        string sha = Convert.ToHexStringLower(hash.GetHashAndReset());
        File.Move(temp, dataPath, overwrite: true);
        return sha;
    }

    public static void WriteManifest(string dataPath, ExportManifest manifest)
    {
        string path = ManifestPath(dataPath);
        string temp = path + TempSuffix;
        using (var file = new FileStream(temp, FileMode.Create, FileAccess.Write, FileShare.None))
        {
            JsonSerializer.Serialize(file, manifest, s_json);
            file.Flush(flushToDisk: true);
        }

        File.Move(temp, path, overwrite: true);
        // The data file and then its manifest were renamed into this folder: make both renames durable, so that after
        // a power cut the journal's "exported" never points at a file the file system forgot.
        SyncDirectory(Path.GetDirectoryName(path)!);
    }

    /// <summary>
    /// fsync of a folder, which makes the renames into it durable (Linux: open(O_DIRECTORY) and fsync, as .NET has no
    /// API for it). Elsewhere a no-op: Windows' NTFS journals renames, and macOS is not a supported server platform.
    /// </summary>
    public static void SyncDirectory(string directory)
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        int fd = NativeFiles.Open(directory, NativeFiles.ReadOnlyDirectory);
        if (fd < 0)
        {
            throw new IOException($"Could not open folder {directory} to flush it to disk (errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}).");
        }

        try
        {
            if (NativeFiles.Fsync(fd) != 0)
            {
                throw new IOException($"fsync of folder {directory} failed (errno {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}).");
            }
        }
        finally
        {
            _ = NativeFiles.Close(fd);
        }
    }

    /// <summary>
    /// The export file a manifest names, as a full path, when it is a file in the manifest's own folder (the archiver
    /// writes the manifest beside its file and names it by its bare file name, <see cref="Manifest"/>). Else null, and
    /// <paramref name="refusal"/> says why: an absolute path, a name with a folder in it (<c>/</c>, <c>\</c>, so also any
    /// <c>..</c>), or a symbolic link whose final target is not in that folder. A manifest is a file anyone with
    /// access to the export folder can write, so restore must not follow it to read files elsewhere.
    /// </summary>
    public static string? DataPathOf(string manifestPath, ExportManifest manifest, out string? refusal)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        string folder = Path.GetDirectoryName(Path.GetFullPath(manifestPath))!;
        string name = manifest.File ?? string.Empty;
        if (name.Length == 0 || Path.IsPathRooted(name) || name.AsSpan().IndexOfAny('/', '\\') >= 0 || name is "." or "..")
        {
            refusal = $"its file \"{name}\" is not a file name in the manifest's folder {folder} (absolute paths, folders and '..' are refused); nothing was read from it";
            return null;
        }

        string data = Path.Combine(folder, name);
        var target = File.Exists(data) ? File.ResolveLinkTarget(data, returnFinalTarget: true) : null;
        if (target is not null && !string.Equals(Path.GetDirectoryName(Path.GetFullPath(target.FullName)), folder, StringComparison.Ordinal))
        {
            refusal = $"its file \"{name}\" is a symbolic link to {target.FullName}, outside the manifest's folder {folder}; nothing was read from it";
            return null;
        }

        refusal = null;
        return data;
    }

    public static ExportManifest ReadManifest(string manifestPath)
    {
        using var file = File.OpenRead(manifestPath);
        return JsonSerializer.Deserialize<ExportManifest>(file, s_json)
               ?? throw new InvalidDataException($"{manifestPath} is empty.");
    }

    public static string Sha256Of(string path)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16);
        return Convert.ToHexStringLower(SHA256.HashData(file));
    }

    /// <summary>Removes what an interrupted export of this batch left (temporary and real files); the batch is exported again.</summary>
    public static void Discard(string dataPath)
    {
        if (!Directory.Exists(Path.GetDirectoryName(dataPath)))
        {
            return;
        }

        foreach (string path in new[] { dataPath, dataPath + TempSuffix, ManifestPath(dataPath), ManifestPath(dataPath) + TempSuffix })
        {
            File.Delete(path);
        }
    }

    public static ExportManifest Manifest(ArchiveBatch batch, string dataPath, bool gzip, long rows, string? firstKey, string? lastKey, string sha) => new()
    {
        BatchId = batch.Id,
        Kind = ReadingKinds.Name(batch.Kind),
        KeyStrategy = SchemaScript.KeyStrategyName(batch.Keys),
        Table = ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot),
        File = Path.GetFileName(dataPath),
        Gzip = gzip,
        Rows = rows,
        FirstKey = firstKey,
        LastKey = lastKey,
        Sha256 = sha,
        CutoffUtc = ReadingTime.FromUnixMicroseconds(batch.CutoffMicros),
        CreatedUtc = DateTime.UtcNow,
    };
}

/// <summary>A write-only stream that hashes every byte on its way to the stream under it (which it leaves open).</summary>
internal sealed class HashingWriteStream(Stream inner, IncrementalHash hash) : Stream
{
    public override bool CanRead => false;

    public override bool CanSeek => false;

    public override bool CanWrite => true;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override void Write(byte[] buffer, int offset, int count) => Write(buffer.AsSpan(offset, count));

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        hash.AppendData(buffer);
        inner.Write(buffer);
    }

    public override void Flush() => inner.Flush();

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}

/// <summary>
/// The libc calls Saito makes itself (Linux): <see cref="ExportFiles.SyncDirectory"/>'s open, fsync and close, and the
/// SQLite writer's log flush (<c>SqliteWalSync</c>).
/// </summary>
internal static class NativeFiles
{
    /// <summary>O_RDONLY | O_DIRECTORY on Linux (x86-64 and arm64).</summary>
    public const int ReadOnlyDirectory = 0x10000;

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "open", SetLastError = true)]
    public static extern int Open([System.Runtime.InteropServices.MarshalAs(System.Runtime.InteropServices.UnmanagedType.LPUTF8Str)] string path, int flags);

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "fsync", SetLastError = true)]
    public static extern int Fsync(int fd);

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "close", SetLastError = true)]
    public static extern int Close(int fd);

    /// <summary>fdatasync(2). The SafeHandle parameter keeps the descriptor open for the length of the call.</summary>
    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "fdatasync", SetLastError = true)]
    public static extern int FileDataSync(Microsoft.Win32.SafeHandles.SafeFileHandle handle);
}

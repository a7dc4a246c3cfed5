using System.Globalization;
using System.IO.Compression;
using System.Text;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>What <c>restore</c> is asked to do, and the limits it holds each file and row to.</summary>
public sealed record ArchiveRestoreRequest
{
    /// <summary>Manifests, export files, or folders (searched for <c>*.manifest.json</c>; links in them are not followed).</summary>
    public required IReadOnlyList<string> Sources { get; init; }

    /// <summary><c>hot</c>, <c>archive</c> or a table name.</summary>
    public required string Into { get; init; }

    /// <summary>Most bytes of one file once decompressed (<see cref="ArchiverOptions.RestoreMaxFileMegabytes"/>).</summary>
    public long MaxFileBytes { get; init; } = ArchiverOptions.DefaultRestoreMaxFileMegabytes * (1L << 20);

    /// <summary>Ingestion's window (<c>Ingestion:MaxFutureSkewSeconds</c>): a reading's ts at most this far after its received_at.</summary>
    public required TimeSpan MaxFutureSkew { get; init; }

    /// <summary>Ingestion's window (<c>Ingestion:MaxAgeDays</c>): a reading's ts at most this far before its received_at.</summary>
    public required TimeSpan MaxAge { get; init; }

    /// <summary>Device ids that are not in the device registry are restored too (the registry was lost as well).</summary>
    public bool AllowUnknownDevices { get; init; }

    /// <summary>Where rejected lines go; null: <c>restore-rejects/</c> under <see cref="StorageOptions.ArchivePath"/>.</summary>
    public string? RejectsFile { get; init; }
}

/// <summary>
/// The parts of <c>restore</c> that face files anyone with access to an export folder can write: finding manifests
/// without following links, bounding what a file may hold, reading it line by line with a bound on each line, and
/// holding each row to the limits ingestion holds a reading to.
/// </summary>
public static class ArchiveRestore
{
    /// <summary>Rows inserted per statement batch: the most rows of a file restore holds in memory.</summary>
    public const int ChunkRows = 10_000;

    /// <summary>Rejected lines named one by one in the summary; the rest are counted (every one is in the rejects file).</summary>
    public const int ReportedLines = 100;

    /// <summary>
    /// Every <c>*.manifest.json</c> under the sources, in ordinal order. A source the caller names is taken as given;
    /// inside a folder, symbolic links (to folders or files) are not followed but listed in <paramref name="skippedLinks"/>,
    /// so a link loop or a link out of the folder cannot make the walk endless or leave the folder.
    /// </summary>
    public static List<string> FindManifests(IReadOnlyList<string> sources, List<string> skippedLinks, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(sources);
        ArgumentNullException.ThrowIfNull(skippedLinks);
        var manifests = new List<string>();
        var options = new EnumerationOptions { RecurseSubdirectories = false, IgnoreInaccessible = true, AttributesToSkip = 0 };
        foreach (string source in sources)
        {
            if (!Directory.Exists(source))
            {
                manifests.Add(source.EndsWith(".manifest.json", StringComparison.Ordinal) ? source : ExportFiles.ManifestPath(source));
                continue;
            }

            var found = new List<string>();
            var folders = new Stack<DirectoryInfo>();
            folders.Push(new DirectoryInfo(source));
            while (folders.TryPop(out var folder))
            {
                cancellationToken.ThrowIfCancellationRequested();
                foreach (var entry in folder.EnumerateFileSystemInfos("*", options))
                {
                    if (entry.LinkTarget is { } target)
                    {
                        skippedLinks.Add($"{entry.FullName} -> {target}");
                    }
                    else if (entry is DirectoryInfo child)
                    {
                        folders.Push(child);
                    }
                    else if (entry.Name.EndsWith(".manifest.json", StringComparison.Ordinal))
                    {
                        found.Add(entry.FullName);
                    }
                }
            }

            manifests.AddRange(found.Order(StringComparer.Ordinal));
        }

        return manifests;
    }

    /// <summary>
    /// The most bytes the export a manifest describes can hold: its header line and <c>rows</c> lines of at most
    /// <see cref="ArchiveCsv.MaxRowBytes"/> (what <see cref="ExportFiles.WriteData"/> writes), capped by <paramref name="maxFileBytes"/>.
    /// </summary>
    public static long MaxBytesOf(ExportManifest manifest, ReadingKind kind, Keys.KeyStrategy keys, long maxFileBytes)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        long rows = Math.Clamp(manifest.Rows, 0, maxFileBytes / ArchiveCsv.MaxRowBytes);
        return Math.Min(maxFileBytes, Encoding.UTF8.GetByteCount(ArchiveCsv.Header(kind, keys)) + 1 + (rows * ArchiveCsv.MaxRowBytes));
    }

    /// <summary>
    /// Null when the file holds at most <paramref name="maxBytes"/> once decompressed; else why it is refused. A gzip file
    /// is decompressed into a small buffer and counted, stopping at the limit, so nothing of it is kept.
    /// </summary>
    public static string? CheckSize(string path, long maxBytes, CancellationToken cancellationToken)
    {
        if (!ArchiveCsv.IsGzip(path))
        {
            long length = new FileInfo(path).Length;
            return length <= maxBytes
                ? null
                : string.Create(CultureInfo.InvariantCulture, $"it holds {length:N0} bytes, more than the {maxBytes:N0} its manifest's row count and Archiver:RestoreMaxFileMegabytes allow");
        }

        using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1 << 16);
        using var gzip = new GZipStream(file, CompressionMode.Decompress);
        byte[] buffer = new byte[1 << 16];
        long total = 0;
        try
        {
            int read;
            while ((read = gzip.Read(buffer)) > 0)
            {
                total += read;
                if (total > maxBytes)
                {
                    return string.Create(CultureInfo.InvariantCulture,
                        $"it decompresses to more than {maxBytes:N0} bytes (from {file.Length:N0}), more than its manifest's row count and Archiver:RestoreMaxFileMegabytes allow: refused as a possible gzip bomb");
                }

                if ((total & ((1 << 24) - 1)) < read)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }
            }
        }
        catch (InvalidDataException e)
        {
            return $"it is not a readable gzip file ({e.Message})";
        }

        return null;
    }

    /// <summary>
    /// Null when the row is one ingestion could have stored (and so an export could hold); else the reason, in the
    /// words of ingestion's dead letters: values finite and within <see cref="ReadingLimits"/>, the values a kind
    /// needs, a diastolic below the systolic, a channel within range, a ts inside ingestion's window around its
    /// received_at, a received_at not in the future, and a device id the registry gave out (<paramref name="devices"/>;
    /// null: any id above 0).
    /// </summary>
    public static string? Check(in ArchiveRow row, IReadOnlySet<int>? devices, TimeSpan maxFutureSkew, TimeSpan maxAge, DateTime nowUtc)
    {
        var reading = row.Reading;
        if (reading.DeviceId < 1)
        {
            return string.Create(CultureInfo.InvariantCulture, $"device id {reading.DeviceId}: the device registry's ids start at 1, so no export holds it");
        }

        if (devices is not null && !devices.Contains(reading.DeviceId))
        {
            return string.Create(CultureInfo.InvariantCulture,
                $"device id {reading.DeviceId} is not in the device registry (an export holds only ids the registry gave out; --allow-unknown-devices if the registry was lost too)");
        }

        if (reading.Channel is < ReadingLimits.ChannelMin or > ReadingLimits.ChannelMax)
        {
            return string.Create(CultureInfo.InvariantCulture, $"channel {reading.Channel} is outside {ReadingLimits.ChannelMin}..{ReadingLimits.ChannelMax}");
        }

        var fields = ReadingFields.FieldsOf(reading.Kind);
        int mask = 0;
        for (int i = 0; i < fields.Count; i++)
        {
            if (ReadingTables.Value(reading, i) is not { } value)
            {
                continue;
            }

            if (!double.IsFinite(value))
            {
                return string.Create(CultureInfo.InvariantCulture, $"{ReadingFields.NameOf(fields[i])} {value} is not a finite number");
            }

            if (!ReadingFields.InRange(fields[i], value))
            {
                return ReadingFields.OutOfRangeDetail(fields[i], value);
            }

            mask |= 1 << i;
        }

        int required = ReadingFields.RequiredMask(reading.Kind);
        if (mask == 0 || (mask & required) != required)
        {
            return $"a {ReadingKinds.Name(reading.Kind)} reading needs {(required == 0 ? "at least one of " : string.Empty)}{ReadingFields.NamesOf(reading.Kind)}";
        }

        if (reading.Kind == ReadingKind.Biosensor && reading.V1 is { } systolic && reading.V2 is { } diastolic && diastolic >= systolic)
        {
            return string.Create(CultureInfo.InvariantCulture, $"dia {diastolic} is not below sys {systolic}");
        }

        // Differences, not sums: a crafted year 1 or 9999 must be a bad line, not an overflow that ends the run.
        if (reading.Timestamp - reading.ReceivedAt > maxFutureSkew)
        {
            return string.Create(CultureInfo.InvariantCulture,
                $"ts {reading.Timestamp:O} is more than {maxFutureSkew.TotalSeconds:0} s after received_at {reading.ReceivedAt:O} (Ingestion:MaxFutureSkewSeconds)");
        }

        if (reading.ReceivedAt - reading.Timestamp > maxAge)
        {
            return string.Create(CultureInfo.InvariantCulture,
                $"ts {reading.Timestamp:O} is more than {maxAge.TotalDays:0} days before received_at {reading.ReceivedAt:O} (Ingestion:MaxAgeDays)");
        }

        if (reading.ReceivedAt - nowUtc > maxFutureSkew)
        {
            return string.Create(CultureInfo.InvariantCulture, $"received_at {reading.ReceivedAt:O} is in the future");
        }

        return null;
    }

    /// <summary>
    /// A line of a file for messages: control characters (a forged log line, a terminal escape) shown as <c>\xNN</c>,
    /// and at most <paramref name="max"/> characters.
    /// </summary>
    public static string Printable(string text, int max = 120)
    {
        ArgumentNullException.ThrowIfNull(text);
        var builder = new StringBuilder(Math.Min(text.Length, max) + 8);
        foreach (char c in text)
        {
            if (builder.Length >= max)
            {
                builder.Append('…');
                break;
            }

            if (char.IsControl(c))
            {
                builder.Append(CultureInfo.InvariantCulture, $"\\x{(int)c:x2}");
            }
            else
            {
                builder.Append(c);
            }
        }

        return builder.ToString();
    }
}

/// <summary>Thrown when a file grows past its byte limit while it is read (it changed after <see cref="ArchiveRestore.CheckSize"/>).</summary>
public sealed class RestoreLimitException(string message) : IOException(message);

/// <summary>
/// The <c>\n</c>-ended lines of a stream, read through one 64 KB buffer: a line longer than the limit is not kept
/// (it is skipped up to its end and reported as too long), and the stream may yield at most a given number of bytes,
/// so neither a file without line ends nor a file that keeps growing can take memory.
/// </summary>
internal sealed class ExportLineReader(Stream stream, int maxLineBytes, long maxBytes)
{
    private static readonly UTF8Encoding s_strictUtf8 = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    private readonly byte[] _buffer = new byte[1 << 16];
    private int _start;
    private int _end;
    private bool _ended;
    private long _bytes;

    /// <summary>The number of the line <see cref="Next"/> returned last (the first is 1).</summary>
    public long LineNumber { get; private set; }

    /// <summary>
    /// The next line: true with its text, or with text null and <paramref name="error"/> saying why it was not kept
    /// (too long, not UTF-8); false at the end of the stream.
    /// </summary>
    public bool Next(out string? text, out string? error)
    {
        bool tooLong = false;
        while (true)
        {
            int newline = Array.IndexOf(_buffer, (byte)'\n', _start, _end - _start);
            if (newline >= 0 || (_ended && _end > _start))
            {
                int lineEnd = newline >= 0 ? newline : _end;
                var line = _buffer.AsSpan(_start, lineEnd - _start);
                _start = newline >= 0 ? newline + 1 : _end;
                LineNumber++;
                return Line(line, tooLong, out text, out error);
            }

            if (_ended)
            {
                text = null;
                error = null;
                if (tooLong)
                {
                    LineNumber++;
                    error = $"longer than {maxLineBytes} bytes (no export line is)";
                    return true;
                }

                return false;
            }

            if (_end - _start > maxLineBytes)
            {
                // Too long already: drop what is buffered and read on to the line's end.
                tooLong = true;
                _start = _end = 0;
            }
            else if (_start > 0)
            {
                Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
                _end -= _start;
                _start = 0;
            }

            int read = stream.Read(_buffer, _end, _buffer.Length - _end);
            _bytes += read;
            if (_bytes > maxBytes)
            {
                throw new RestoreLimitException(string.Create(CultureInfo.InvariantCulture,
                    $"it grew past {maxBytes:N0} bytes while it was read (it changed after it was checked); the rest of it was not read"));
            }

            _end += read;
            _ended = read == 0;
        }
    }

    private bool Line(ReadOnlySpan<byte> line, bool tooLong, out string? text, out string? error)
    {
        text = null;
        if (tooLong || line.Length > maxLineBytes)
        {
            error = $"longer than {maxLineBytes} bytes (no export line is)";
            return true;
        }

        try
        {
            text = s_strictUtf8.GetString(line);
            error = null;
        }
        catch (DecoderFallbackException)
        {
            error = "not valid UTF-8";
        }

        return true;
    }
}

/// <summary>
/// The rejected lines of a restore, one a line: <c>source file, line number, reason, the line as it was</c>, tab-separated,
/// so nothing a restore skips is lost. Created at the first rejected line (a clean restore leaves no file).
/// </summary>
internal sealed class RestoreRejects(string path) : IDisposable
{
    private StreamWriter? _writer;

    public string Path { get; } = System.IO.Path.GetFullPath(path);

    public long Count { get; private set; }

    public void Add(string file, long line, string reason, string? text)
    {
        if (_writer is null)
        {
            Directory.CreateDirectory(System.IO.Path.GetDirectoryName(Path)!);
            _writer = new StreamWriter(new FileStream(Path, FileMode.CreateNew, FileAccess.Write, FileShare.Read), new UTF8Encoding(false)) { NewLine = "\n" };
            _writer.WriteLine("# saito-archiver restore: lines not restored. source<TAB>line<TAB>reason<TAB>the line as it was (empty: too long or not UTF-8; see the source)");
        }

        Count++;
        _writer.Write(file);
        _writer.Write('\t');
        _writer.Write(line.ToString(CultureInfo.InvariantCulture));
        _writer.Write('\t');
        _writer.Write(reason.Replace('\t', ' ').Replace('\n', ' '));
        _writer.Write('\t');
        _writer.WriteLine(text);
    }

    public void Dispose()
    {
        if (_writer is not null)
        {
            _writer.Flush();
            ((FileStream)_writer.BaseStream).Flush(flushToDisk: true);
            _writer.Dispose();
        }
    }
}

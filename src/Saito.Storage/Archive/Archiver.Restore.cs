using System.Globalization;
using System.IO.Compression;
using System.Text.Json;
using Microsoft.Extensions.Logging;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Archive;

// CA1873: the log arguments below are computed once per file, or per rejected line the summary names, never per row.
#pragma warning disable CA1873

public sealed partial class Archiver
{
    /// <summary>
    /// Reinserts export files (a manifest, an export file, or a folder searched for manifests, its links not followed)
    /// into <c>hot</c>, <c>archive</c> (each kind's table of that tier for the file's key strategy) or a table name.
    /// Whatever of Saito's schema is missing is created first, as the server does on start, so a lost archive file
    /// can be restored into a fresh one. Rows whose key is already there are skipped, so a restore can be repeated.
    /// Each manifest stands alone: one that is missing, unreadable, names a file outside its own folder
    /// (<see cref="ExportFiles.DataPathOf"/>), whose file's SHA-256 differs, or whose file is larger than its row count
    /// allows (<see cref="ArchiveRestore.MaxBytesOf"/>) is a problem in the summary, nothing is read from its file, and
    /// the others are still restored. Files are read line by line and inserted <see cref="ArchiveRestore.ChunkRows"/>
    /// rows at a time; a line that is malformed or that ingestion would not have stored (<see cref="ArchiveRestore.Check"/>)
    /// is skipped, named (file:line and why) and written to the rejects file, and the good lines are restored.
    /// (A database error stops the run, after the chunks before it.)
    /// </summary>
    public async Task<ArchiveRestoreSummary> RestoreAsync(ArchiveRestoreRequest request, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(request);
        string into = request.Into;
        ArgumentException.ThrowIfNullOrEmpty(into);
        if (into is not ("hot" or "archive") && !StorageOptionsValidator.IsPlainIdentifier(into))
        {
            throw new ArgumentException($"--into must be hot, archive or a table name (letters, digits, underscore), was '{into}'.", nameof(request));
        }

        var summary = new ArchiveRestoreSummary();
        var manifests = ArchiveRestore.FindManifests(request.Sources, summary.SkippedLinks, cancellationToken);
        foreach (string link in summary.SkippedLinks)
        {
            ArchiveLog.RestoreLinkSkipped(_logger, link);
        }

        // The server's own schema step: a fresh (lost) tier gets its tables, on every database, before rows go in.
        IReadOnlySet<int>? devices;
        await using (var store = ReadingStores.Create(_storage, _loggerFactory))
        {
            var schema = await store.EnsureSchemaAsync(cancellationToken);
            summary.SchemaCreated.AddRange(schema.Created);
            if (schema.CreatedAnything)
            {
                ArchiveLog.RestoreSchemaCreated(_logger, string.Join(", ", schema.Created));
            }

            devices = request.AllowUnknownDevices ? null : (await store.LoadDevicesAsync(cancellationToken)).Values.ToHashSet();
        }

        string rejectsPath = request.RejectsFile ?? Path.Combine(_storage.ArchivePath, "restore-rejects",
            string.Create(CultureInfo.InvariantCulture, $"restore-{DateTime.UtcNow:yyyyMMdd'T'HHmmss'Z'}-{Random.Shared.Next(0x10000):x4}.tsv"));
        using var rejects = new RestoreRejects(rejectsPath);
        try
        {
            foreach (string manifestPath in manifests)
            {
                cancellationToken.ThrowIfCancellationRequested();
                await RestoreFileAsync(manifestPath, request, devices, rejects, summary, cancellationToken);
            }
        }
        finally
        {
            summary.RowsRejected = rejects.Count;
            summary.RejectsFile = rejects.Count > 0 ? rejects.Path : null;
            if (rejects.Count > ArchiveRestore.ReportedLines)
            {
                summary.Problems.Add(string.Create(CultureInfo.InvariantCulture,
                    $"{rejects.Count - ArchiveRestore.ReportedLines:N0} more line(s) were rejected; every rejected line is in {rejects.Path}"));
            }
        }

        return summary;
    }

    private async Task RestoreFileAsync(string manifestPath, ArchiveRestoreRequest request, IReadOnlySet<int>? devices, RestoreRejects rejects,
        ArchiveRestoreSummary summary, CancellationToken cancellationToken)
    {
        if (!File.Exists(manifestPath))
        {
            summary.Problems.Add($"{manifestPath} is missing.");
            return;
        }

        ExportManifest manifest;
        ReadingKind kind;
        KeyStrategy keys;
        try
        {
            manifest = ExportFiles.ReadManifest(manifestPath);
            kind = manifest.ReadingKind();
            keys = manifest.Keys();
        }
        catch (Exception ex) when (ex is JsonException or InvalidDataException)
        {
            Skip(summary, manifestPath, $"not a readable manifest: {ex.Message}");
            return;
        }

        if (ExportFiles.DataPathOf(manifestPath, manifest, out string? refusal) is not { } data)
        {
            Skip(summary, manifestPath, refusal!);
            return;
        }

        string sha = File.Exists(data) ? ExportFiles.Sha256Of(data) : "(missing)";
        if (!string.Equals(sha, manifest.Sha256, StringComparison.OrdinalIgnoreCase))
        {
            summary.Problems.Add($"{data}: SHA-256 {sha}, the manifest says {manifest.Sha256}; not restored.");
            return;
        }

        long maxBytes = ArchiveRestore.MaxBytesOf(manifest, kind, keys, request.MaxFileBytes);
        if (ArchiveRestore.CheckSize(data, maxBytes, cancellationToken) is { } tooLarge)
        {
            Skip(summary, manifestPath, $"its file {data}: {tooLarge}; nothing was read from it");
            return;
        }

        _pauses.Reach(ArchivePausePoints.RestoreFile, data);
        cancellationToken.ThrowIfCancellationRequested();
        string table = request.Into switch
        {
            "hot" => ReadingTables.TableName(kind, keys, StorageTier.Hot),
            "archive" => ReadingTables.TableName(kind, keys, StorageTier.Archive),
            _ => request.Into,
        };
        long read = 0;
        long inserted = 0;
        try
        {
            await using var file = new FileStream(data, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0);
            await using Stream stream = ArchiveCsv.IsGzip(data) ? new GZipStream(file, CompressionMode.Decompress) : file;
            var lines = new ExportLineReader(stream, ArchiveCsv.MaxRowBytes, maxBytes);
            string header = ArchiveCsv.Header(kind, keys);
            if (!lines.Next(out string? first, out _) || !string.Equals(first, header, StringComparison.Ordinal))
            {
                Skip(summary, manifestPath, $"its file {data} does not start with the header '{header}' of a {ReadingKinds.Name(kind)} export ({manifest.KeyStrategy} keys)");
                return;
            }

            int valueCount = ReadingTables.ValueColumns(kind).Count;
            int expectedFields = ReadingTables.Columns(kind, keys).Count;
            var values = new double?[4];
            var chunk = new List<ArchiveRow>(ArchiveRestore.ChunkRows);
            var now = DateTime.UtcNow;
            while (lines.Next(out string? text, out string? error))
            {
                if ((lines.LineNumber & 4095) == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                if (text is null
                    || !ArchiveCsv.TryParseRow(text, kind, keys, valueCount, expectedFields, values, out var row, out error)
                    || (error = ArchiveRestore.Check(row, devices, request.MaxFutureSkew, request.MaxAge, now)) is not null)
                {
                    Reject(summary, rejects, data, lines.LineNumber, error!, text);
                    continue;
                }

                chunk.Add(row);
                if (chunk.Count == ArchiveRestore.ChunkRows)
                {
                    inserted += await _engine.InsertAsync(table, kind, keys, chunk, cancellationToken);
                    read += chunk.Count;
                    chunk.Clear();
                }
            }

            if (chunk.Count > 0)
            {
                inserted += await _engine.InsertAsync(table, kind, keys, chunk, cancellationToken);
                read += chunk.Count;
            }
        }
        catch (Exception ex) when (ex is RestoreLimitException or InvalidDataException)
        {
            Skip(summary, manifestPath, $"its file {data}: {ex.Message} ({read:N0} rows before it were restored)");
        }
        finally
        {
            summary.RowsRead += read;
            summary.RowsInserted += inserted;
        }

        summary.Files++;
        if (_logger.IsEnabled(LogLevel.Information))
        {
            ArchiveLog.Restored(_logger, inserted, read, data, table);
        }
    }

    /// <summary>A line restore skips: into the rejects file, and named in the summary (the first <see cref="ArchiveRestore.ReportedLines"/>) and the log.</summary>
    private void Reject(ArchiveRestoreSummary summary, RestoreRejects rejects, string file, long line, string reason, string? text)
    {
        rejects.Add(file, line, reason, text);
        if (rejects.Count <= ArchiveRestore.ReportedLines)
        {
            // The file name and the parser's words may carry a crafted file's bytes: control characters are shown, not sent.
            string printable = ArchiveRestore.Printable(reason, 400);
            string name = ArchiveRestore.Printable(file, 400);
            summary.Problems.Add(string.Create(CultureInfo.InvariantCulture, $"{name}:{line}: {printable}; line skipped (kept in {rejects.Path})"));
            ArchiveLog.RestoreLineRejected(_logger, name, line, printable);
        }
    }

    /// <summary>A manifest restore does not follow: a problem in the summary (the run goes on with the others) and a warning.</summary>
    private void Skip(ArchiveRestoreSummary summary, string manifestPath, string problem)
    {
        summary.Problems.Add($"{manifestPath}: {problem}; not restored.");
        ArchiveLog.RestoreSkipped(_logger, manifestPath, problem);
    }
}

using System.Globalization;
using Saito.Readings;

namespace Saito.Storage.Archive;

public sealed partial class Archiver
{
    /// <summary>
    /// Checks every batch in the journal: its manifest, its file's SHA-256 and row count, every exported row in the
    /// archive table with the same values and none in the hot table; then that no key is in both tiers.
    /// </summary>
    public Task<ArchiveVerifyReport> VerifyAsync(IReadOnlyList<ReadingKind> kinds, CancellationToken cancellationToken) =>
        VerifyAsync(kinds, exportDirectory: null, cancellationToken);

    /// <summary>
    /// <see cref="VerifyAsync(IReadOnlyList{ReadingKind}, CancellationToken)"/>; when the journal is missing or holds no
    /// batch of these kinds (a lost archive file took it along), there is nothing to check the exports against: that is
    /// a problem that says so and counts the manifests in <paramref name="exportDirectory"/>, never an "OK on 0 batches".
    /// </summary>
    public async Task<ArchiveVerifyReport> VerifyAsync(IReadOnlyList<ReadingKind> kinds, string? exportDirectory, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(kinds);
        var report = new ArchiveVerifyReport();
        IReadOnlyList<ArchiveBatch> batches = await _engine.JournalExistsAsync(cancellationToken)
            ? await _engine.LoadJournalAsync(unfinishedOnly: false, cancellationToken)
            : [];
        if (!batches.Any(b => kinds.Contains(b.Kind)))
        {
            var skipped = new List<string>();
            string folder = Path.GetFullPath(exportDirectory ?? new ArchiverOptions().EffectiveExportDirectory(_storage));
            report.NothingToVerify = true;
            report.ExportFiles = Directory.Exists(folder) ? ArchiveRestore.FindManifests([folder], skipped, cancellationToken).Count : 0;
            string kindsNote = batches.Count > 0 ? " for these kinds" : string.Empty;
            string hint = report.ExportFiles > 0 ? " (if the archive database was lost, `restore` them into a fresh archive tier; verify checks batches the journal recorded)" : string.Empty;
            report.Problems.Add(string.Create(CultureInfo.InvariantCulture,
                $"the archive journal ({_engine.Describe()}) is empty or missing{kindsNote}: nothing to verify against; {report.ExportFiles} export file(s) found in {folder}{hint}"));
            return report;
        }

        foreach (var batch in batches.Where(b => kinds.Contains(b.Kind)))
        {
            cancellationToken.ThrowIfCancellationRequested();
            report.BatchesChecked++;
            if (batch.State != BatchState.Done)
            {
                report.Problems.Add($"batch {batch.Id} is unfinished (journal: {ArchiveBatch.StateName(batch.State)}); `run` finishes it first.");
                continue;
            }

            string manifestPath = ExportFiles.ManifestPath(batch.File);
            if (!File.Exists(batch.File) || !File.Exists(manifestPath))
            {
                report.Problems.Add($"batch {batch.Id}: {(File.Exists(batch.File) ? manifestPath : batch.File)} is missing.");
                continue;
            }

            var manifest = ExportFiles.ReadManifest(manifestPath);
            string sha = ExportFiles.Sha256Of(batch.File);
            if (!string.Equals(manifest.Sha256, batch.Sha256, StringComparison.OrdinalIgnoreCase))
            {
                report.Problems.Add($"batch {batch.Id}: the manifest's SHA-256 {manifest.Sha256} differs from the journal's {batch.Sha256}.");
            }

            if (!string.Equals(sha, batch.Sha256, StringComparison.OrdinalIgnoreCase))
            {
                report.Problems.Add($"batch {batch.Id}: {batch.File} has SHA-256 {sha}, but {batch.Sha256} was recorded when it was written: the file was changed or damaged.");
                continue;
            }

            List<ArchiveRow> rows;
            try
            {
                rows = ArchiveCsv.Read(batch.File, batch.Kind, batch.Keys).ToList();
            }
            catch (InvalidDataException e)
            {
                report.Problems.Add($"batch {batch.Id}: {e.Message}");
                continue;
            }

            report.RowsChecked += rows.Count;
            if (rows.Count != batch.Rows || rows.Count != manifest.Rows)
            {
                report.Problems.Add($"batch {batch.Id}: the file holds {rows.Count} rows, the manifest says {manifest.Rows}, the journal {batch.Rows}.");
            }

            var (inArchive, inHot) = await _engine.CheckAsync(batch.Kind, batch.Keys, rows, cancellationToken);
            if (inArchive != rows.Count)
            {
                report.Problems.Add($"batch {batch.Id}: {rows.Count - inArchive} of its {rows.Count} rows are missing from {ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Archive)} or differ there.");
            }

            if (inHot != 0)
            {
                report.Problems.Add($"batch {batch.Id}: {inHot} of its rows are still (or again) in {ReadingTables.TableName(batch.Kind, batch.Keys, StorageTier.Hot)}.");
            }
        }

        foreach (var kind in kinds)
        {
            long both = await _engine.InBothTiersAsync(kind, _keys, cancellationToken);
            if (both != 0)
            {
                report.Problems.Add($"{both} {ReadingKinds.Name(kind)} rows are in both {ReadingTables.TableName(kind, _keys, StorageTier.Hot)} and {ReadingTables.TableName(kind, _keys, StorageTier.Archive)}.");
            }
        }

        return report;
    }
}

using Microsoft.Extensions.Options;

namespace Saito.Storage.Archive;

/// <summary>The <c>Archiver</c> section: defaults for <c>saito-archiver run</c>; its options override them.</summary>
public sealed class ArchiverOptions
{
    public const string SectionName = "Archiver";

    /// <summary>Where export files and manifests go; unset: <c>exports</c> under <see cref="StorageOptions.ArchivePath"/>.</summary>
    public string? ExportDirectory { get; set; }

    /// <summary>Rows per batch: one export file, one archive transaction, one hot-delete transaction.</summary>
    public int BatchRows { get; set; } = 50_000;

    /// <summary>Workers, each moving its own slices.</summary>
    public int Threads { get; set; } = 1;

    /// <summary>Compress export files with gzip.</summary>
    public bool Gzip { get; set; }

    /// <summary>
    /// <c>restore</c>: most bytes one export file may hold once decompressed, in MiB (a <c>.csv</c> file's size, a
    /// <c>.csv.gz</c> file's content). A file past it is refused before any of its rows is read, so a gzip bomb costs
    /// at most this much decompression and no memory. The default holds the largest batch <c>run</c> writes
    /// (<see cref="ArchiverOptionsValidator.MaxBatchRows"/> rows of at most <see cref="ArchiveCsv.MaxRowBytes"/> bytes);
    /// each file is also held to what its manifest's row count allows (<see cref="ArchiveRestore"/>).
    /// </summary>
    public int RestoreMaxFileMegabytes { get; set; } = DefaultRestoreMaxFileMegabytes;

    public const int DefaultRestoreMaxFileMegabytes = 1280;

    public string EffectiveExportDirectory(StorageOptions storage)
    {
        ArgumentNullException.ThrowIfNull(storage);
        return ExportDirectory is { Length: > 0 } configured ? configured : Path.Combine(storage.ArchivePath, "exports");
    }
}

public sealed class ArchiverOptionsValidator : IValidateOptions<ArchiverOptions>
{
    public const int MaxBatchRows = 5_000_000;
    public const int MaxThreads = 64;
    public const int MaxRestoreMaxFileMegabytes = 1 << 20;

    public ValidateOptionsResult Validate(string? name, ArchiverOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (options.BatchRows is < 1 or > MaxBatchRows)
        {
            failures.Add($"Archiver:BatchRows (--batch-rows) must be between 1 and {MaxBatchRows:N0} (was {options.BatchRows}).");
        }

        if (options.RestoreMaxFileMegabytes is < 1 or > MaxRestoreMaxFileMegabytes)
        {
            failures.Add($"Archiver:RestoreMaxFileMegabytes must be between 1 and {MaxRestoreMaxFileMegabytes:N0} (was {options.RestoreMaxFileMegabytes}).");
        }

        if (options.Threads is < 1 or > MaxThreads)
        {
            failures.Add($"Archiver:Threads (--threads) must be between 1 and {MaxThreads} (was {options.Threads}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

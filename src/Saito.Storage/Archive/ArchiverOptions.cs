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

    public ValidateOptionsResult Validate(string? name, ArchiverOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (options.BatchRows is < 1 or > MaxBatchRows)
        {
            failures.Add($"Archiver:BatchRows (--batch-rows) must be between 1 and {MaxBatchRows:N0} (was {options.BatchRows}).");
        }

        if (options.Threads is < 1 or > MaxThreads)
        {
            failures.Add($"Archiver:Threads (--threads) must be between 1 and {MaxThreads} (was {options.Threads}).");
        }

        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

using System.Data.Common;
using Saito.Storage.Data;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage.Archive;

/// <summary>Where a batch is: each state is recorded in the journal once what it names is durable.</summary>
public enum BatchState
{
    /// <summary>The batch is chosen (kind, slice, start after <see cref="ArchiveBatch.Cursor"/>); nothing moved yet.</summary>
    Planned,

    /// <summary>Its rows are in the export file and the manifest, both synced and renamed into place.</summary>
    Exported,

    /// <summary>The export's rows are in the archive table (committed with this state, in one transaction).</summary>
    Archived,

    /// <summary>The export's rows are gone from the hot table: the batch is finished.</summary>
    Done,
}

/// <summary>One row of the journal (<c>archive_journal</c>): a batch, what it moves, and how far it has got.</summary>
public sealed record ArchiveBatch
{
    /// <summary>
    /// One journal row, as every engine selects it: the columns <c>batch_id, run_id, kind, key_strategy, slice,
    /// slice_low, slice_high, cursor, cutoff, batch_rows, state, file, rows, first_key, last_key, sha256</c>, in that order.
    /// </summary>
    private static readonly string[] s_journalColumns =
        ["batch_id", "run_id", "kind", "key_strategy", "slice", "slice_low", "slice_high", "cursor", "cutoff", "batch_rows", "state", "file", "rows", "first_key", "last_key", "sha256"];

    /// <summary>
    /// The journal's batches (all, or those not done) in id order: the one read of every engine. <paramref name="column"/>
    /// names a column as the database's SQL does, <paramref name="done"/> is the literal 'done' in its dialect.
    /// </summary>
    internal static async Task<IReadOnlyList<ArchiveBatch>> LoadAsync(
        DbConnection connection, string journal, Func<string, string> column, string done, bool unfinishedOnly, CancellationToken cancellationToken, int? timeoutSeconds = null)
    {
        await using var command = connection.Command(
            $"SELECT {string.Join(", ", s_journalColumns.Select(column))} " +
            $"FROM {journal}{(unfinishedOnly ? $" WHERE {column("state")} <> {done}" : string.Empty)} ORDER BY {column("batch_id")}",
            timeoutSeconds);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var batches = new List<ArchiveBatch>();
        while (await reader.ReadAsync(cancellationToken))
        {
            batches.Add(FromRecord(reader));
        }

        return batches;
    }

    internal static ArchiveBatch FromRecord(System.Data.IDataRecord r) => new()
    {
        Id = r.GetString(0),
        RunId = r.GetString(1),
        Kind = ArchiveNames.Kind(r.GetString(2)),
        Keys = ArchiveNames.Keys(r.GetString(3)),
        Slice = r.GetInt32(4),
        SliceLow = r.IsDBNull(5) ? null : r.GetInt64(5),
        SliceHigh = r.IsDBNull(6) ? null : r.GetInt64(6),
        Cursor = r.IsDBNull(7) ? null : r.GetString(7),
        CutoffMicros = r.GetInt64(8),
        BatchRows = r.GetInt32(9),
        State = ParseState(r.GetString(10)),
        File = r.GetString(11),
        Rows = r.GetInt64(12),
        FirstKey = r.IsDBNull(13) ? null : r.GetString(13),
        LastKey = r.IsDBNull(14) ? null : r.GetString(14),
        Sha256 = r.IsDBNull(15) ? null : r.GetString(15),
    };

    public required string Id { get; init; }

    public required string RunId { get; init; }

    public required ReadingKind Kind { get; init; }

    public required KeyStrategy Keys { get; init; }

    public required int Slice { get; init; }

    public long? SliceLow { get; init; }

    public long? SliceHigh { get; init; }

    /// <summary>The batch takes the rows after this key (in key order); null: from the start of the slice.</summary>
    public string? Cursor { get; init; }

    /// <summary>Rows with ts before this (microseconds since 1970 UTC) are moved.</summary>
    public required long CutoffMicros { get; init; }

    public required int BatchRows { get; init; }

    public required BatchState State { get; init; }

    /// <summary>The export file (absolute path); its manifest is beside it (<see cref="ExportFiles.ManifestPath"/>).</summary>
    public required string File { get; init; }

    public long Rows { get; init; }

    public string? FirstKey { get; init; }

    public string? LastKey { get; init; }

    public string? Sha256 { get; init; }

    public ArchiveSlice SliceOf() => new(Kind, Slice, SliceLow, SliceHigh);

    public static string StateName(BatchState state) => state switch
    {
        BatchState.Planned => "planned",
        BatchState.Exported => "exported",
        BatchState.Archived => "archived",
        BatchState.Done => "done",
        _ => throw new ArgumentOutOfRangeException(nameof(state), state, null),
    };

    public static BatchState ParseState(string name) => name switch
    {
        "planned" => BatchState.Planned,
        "exported" => BatchState.Exported,
        "archived" => BatchState.Archived,
        "done" => BatchState.Done,
        _ => throw new InvalidDataException($"Unknown batch state '{name}' in the archive journal."),
    };
}

/// <summary>The archiver cannot start here: a database file is missing, or a setting names something that does not exist.</summary>
public sealed class ArchiveSetupException : Exception
{
    public ArchiveSetupException()
    {
    }

    public ArchiveSetupException(string message) : base(message)
    {
    }

    public ArchiveSetupException(string message, Exception innerException) : base(message, innerException)
    {
    }
}

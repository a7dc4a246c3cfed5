namespace Saito.Storage.Archive;

/// <summary>
/// How many database connections a run may hold, whatever the database: one per worker, plus
/// <see cref="Extra"/> (the run lock's, and a lone worker's second batch in flight and the next batch's plan; several
/// workers keep one batch in flight each). The engines size their pools to it (docs/archiver.md#connections).
/// </summary>
internal static class ArchiveConnections
{
    public const int Extra = 3;

    /// <summary>The most connections the archiver opens with <paramref name="workers"/> workers.</summary>
    public static int Max(int workers) => Math.Max(1, workers) + Extra;
}

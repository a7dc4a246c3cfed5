using Saito.Readings;
using Saito.Storage.Keys;

namespace Saito.Storage;

// The roles one database plays, each taken by the code that needs only it (the writer pool the writer, the start-up
// step the schema, the API the queries: IReadingQueries, in Queries/IReadingQueries.cs beside the records it
// returns). ReadingDatabase plays them all, as IReadingStore.

/// <summary>The database's schema, created at start (<c>StorageStartup</c> in Saito.Ingestion) before anything else touches it.</summary>
public interface IStorageSchema
{
    /// <summary>Where the data goes, for logs (no passwords).</summary>
    string Describe();

    /// <summary>Creates what is missing (tiers, tables, registry, dead letters) and says what it created.</summary>
    Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken);
}

/// <summary>The device table: serials to ids, the hub each device is bound to, and registering new devices.</summary>
public interface IDeviceTable
{
    /// <summary>Every registered device: serial to id.</summary>
    Task<IReadOnlyDictionary<string, int>> LoadDevicesAsync(CancellationToken cancellationToken);

    /// <summary>
    /// The hub each device is bound to (its <c>hub</c> column; devices without one are left out): every device's, or
    /// the one device's with <paramref name="serial"/> (empty when it has none or is not registered).
    /// </summary>
    Task<IReadOnlyDictionary<string, string>> LoadDeviceHubsAsync(string? serial, CancellationToken cancellationToken);

    /// <summary>
    /// The id of the device with this serial, registering it (no owner) when it is new; with an announcement
    /// (a hello message), records what the device says of itself. Safe when two writers register the same
    /// serial at once: both get the same id.
    /// </summary>
    Task<int> RegisterDeviceAsync(string serial, DeviceAnnouncement? announcement, CancellationToken cancellationToken);

    /// <summary>
    /// <see cref="RegisterDeviceAsync"/> for many devices in one statement and one transaction (SQLite: one transaction):
    /// their ids and the hubs they are bound to as stored after it, in the order given. A serial given twice gets one
    /// row; of its announcements, later ones overwrite what they state (<see cref="DeviceRegistration.Distinct"/>). A new
    /// device is bound to its registration's hub; a hello binds the device to the hub it came through; a registration
    /// without a hello leaves a registered device's hub as it is.
    /// </summary>
    Task<IReadOnlyList<RegisteredDevice>> RegisterDevicesAsync(IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken);

    /// <summary>
    /// Records when devices were last heard from (the <c>last_seen</c> column): each device's to its time, unless the
    /// table already holds a later one; one transaction.
    /// </summary>
    Task MarkSeenAsync(IReadOnlyCollection<KeyValuePair<int, DateTime>> seen, CancellationToken cancellationToken);
}

/// <summary>
/// The writer's side: commits batches of readings through the database's native bulk path, and says which of the
/// database's errors are worth retrying. A call that returns has committed: the rows are durable as
/// <c>docs/durability.md</c> describes for that database.
/// </summary>
public interface IReadingWriter
{
    KeyStrategy KeyStrategy { get; }

    /// <summary>
    /// Commits the batch in one transaction: readings into the hot tables of the configured key strategy
    /// (a reading already stored is skipped, never an error) and dead letters. All or nothing.
    /// </summary>
    Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken);

    /// <summary>
    /// Whether an error from this database is worth retrying (connection lost, deadlock, timeout, busy, and every
    /// <see cref="IsStorageOutage"/>). What is not transient is the data's fault: the writers split the batch to find
    /// the message at fault and store it as a dead letter.
    /// </summary>
    bool IsTransient(Exception exception);

    /// <summary>
    /// Whether the database's storage failed rather than the data: out of space (SQLite's SQLITE_FULL, PostgreSQL's
    /// class 53 such as 53100 disk_full, SQL Server's 9002 log full or 1105 filegroup full) or an I/O error. Transient
    /// too; the writers hold the batch (its acknowledgements with it) and try again every half second, so that writing
    /// resumes soon after space is freed, and never take it for a message the database refuses.
    /// </summary>
    bool IsStorageOutage(Exception exception) => false;

    /// <summary>
    /// The database was lost (a write failed with a transient error): idle pooled connections are dropped, so that the
    /// first query after it comes back (a dashboard, /health) opens a fresh one instead of failing once on a dead one.
    /// </summary>
    void ConnectionsLost()
    {
    }
}

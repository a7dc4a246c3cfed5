using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Storage;

/// <summary>
/// One database behind Saito: creates its schema, keeps the device registry, and commits batches of readings
/// through the database's native bulk path. Safe to call from many writer threads at once (each call takes
/// its own connection). A call that returns has committed: the rows are durable as
/// <c>docs/durability.md</c> describes for that database.
/// </summary>
public interface IReadingStore : IAsyncDisposable
{
    StorageProvider Provider { get; }

    KeyStrategy KeyStrategy { get; }

    /// <summary>Where the data goes, for logs (no passwords).</summary>
    string Describe();

    /// <summary>Creates what is missing (tiers, tables, registry, dead letters) and says what it created.</summary>
    Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken);

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
    /// Commits the batch in one transaction: readings into the hot tables of the configured key strategy
    /// (a reading already stored is skipped, never an error) and dead letters. All or nothing.
    /// </summary>
    Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken);

    /// <summary>Rows in one reading table.</summary>
    Task<long> CountAsync(ReadingKind kind, StorageTier tier, CancellationToken cancellationToken);

    /// <summary>
    /// The time (ts, UTC) of the oldest reading in one reading table, or null when it is empty: the archiver's lag.
    /// <c>MIN(ts)</c>: no index leads with ts, so this reads the whole table's key index (or the table); call it a few
    /// times an hour, not per request.
    /// </summary>
    Task<DateTime?> OldestAsync(ReadingKind kind, StorageTier tier, CancellationToken cancellationToken);

    /// <summary>Readings of one kind for one device, oldest first (for tests, tools and the dashboard; not the hot path).</summary>
    Task<IReadOnlyList<Reading>> ReadAsync(ReadingKind kind, StorageTier tier, int deviceId, CancellationToken cancellationToken);

    /// <summary>The newest dead letters, newest first.</summary>
    Task<IReadOnlyList<DeadLetter>> ReadDeadLettersAsync(int limit, CancellationToken cancellationToken);

    /// <summary>A cheap round trip, for /health.</summary>
    Task PingAsync(CancellationToken cancellationToken);

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

/// <summary>
/// A device to register (<see cref="IReadingStore.RegisterDevicesAsync"/>): its serial, its hello if it sent one, and
/// the hub it came through (recorded when the device is new; a hello's own <see cref="DeviceAnnouncement.Hub"/> is
/// recorded whether it is new or not).
/// </summary>
public readonly record struct DeviceRegistration(string Serial, DeviceAnnouncement? Announcement, string? Hub = null)
{
    /// <summary>The hub a new row gets: the hello's, else the registration's.</summary>
    public string? NewHub => Announcement?.Hub ?? Hub;

    /// <summary>
    /// One registration per serial, in ordinal order of serial: the announcements of a serial given more than once are
    /// merged in the order given (a later one overwrites what it states, keeps what it leaves out), as registering them
    /// one after another would leave the row.
    /// </summary>
    public static IReadOnlyList<DeviceRegistration> Distinct(IReadOnlyList<DeviceRegistration> devices)
    {
        ArgumentNullException.ThrowIfNull(devices);
        var merged = new SortedDictionary<string, (DeviceAnnouncement? Announcement, string? Hub)>(StringComparer.Ordinal);
        foreach (var (serial, announcement, hub) in devices)
        {
            ArgumentException.ThrowIfNullOrEmpty(serial);
            merged[serial] = merged.TryGetValue(serial, out var earlier)
                ? (Merge(earlier.Announcement, announcement), earlier.Hub ?? hub)
                : (announcement, hub);
        }

        return merged.Select(p => new DeviceRegistration(p.Key, p.Value.Announcement, p.Value.Hub)).ToList();
    }

    private static DeviceAnnouncement? Merge(DeviceAnnouncement? earlier, DeviceAnnouncement? later) =>
        earlier is null || later is null
            ? later ?? earlier
            : new DeviceAnnouncement(later.Kind ?? earlier.Kind, later.Channels ?? earlier.Channels, later.Firmware ?? earlier.Firmware, later.Hub ?? earlier.Hub);
}

/// <summary>A registered device (<see cref="IReadingStore.RegisterDevicesAsync"/>): its id, and the hub it is bound to (null: none yet).</summary>
public readonly record struct RegisteredDevice(int Id, string? Hub);

/// <summary>What <see cref="IReadingStore.EnsureSchemaAsync"/> found and did.</summary>
public sealed record SchemaReport(IReadOnlyList<string> Created, IReadOnlyList<string> Existing)
{
    public bool CreatedAnything => Created.Count > 0;
}

using Saito.Readings;
using Saito.Storage.Keys;
using Saito.Storage.Queries;

namespace Saito.Storage;

/// <summary>
/// One database behind Saito, whole: its schema, its device table, the writer of readings and the queries (each a role
/// of its own below, which the pipeline and the API take one at a time), plus the counts and reads that tests, tools
/// and the archiver use. Safe to call from many threads at once (each call takes its own connection).
/// <see cref="ReadingDatabase"/> implements it once for every database; the host registers that one instance under
/// each role.
/// </summary>
public interface IReadingStore : IStorageSchema, IDeviceTable, IReadingWriter, IReadingQueries, IAsyncDisposable
{
    StorageProvider Provider { get; }

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
}

/// <summary>
/// A device to register (<see cref="IDeviceTable.RegisterDevicesAsync"/>): its serial, its hello if it sent one, and
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

/// <summary>A registered device (<see cref="IDeviceTable.RegisterDevicesAsync"/>): its id, and the hub it is bound to (null: none yet).</summary>
public readonly record struct RegisteredDevice(int Id, string? Hub);

/// <summary>What <see cref="IStorageSchema.EnsureSchemaAsync"/> found and did.</summary>
public sealed record SchemaReport(IReadOnlyList<string> Created, IReadOnlyList<string> Existing)
{
    public bool CreatedAnything => Created.Count > 0;
}

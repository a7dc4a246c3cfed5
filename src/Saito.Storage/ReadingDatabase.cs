using System.Data.Common;
using Saito.Readings;
using Saito.Storage.Data;
using Saito.Storage.Keys;

namespace Saito.Storage;

/// <summary>
/// What every database behind Saito shares, on the ADO.NET base types (<see cref="DbDataSource"/>,
/// <see cref="DbConnection"/>, <see cref="DbCommand"/>): the connection source, the reads (device registry, counts,
/// readings, dead letters, ping), written once with the dialect's differences as small members (quoting, parameter
/// prefix, statement end, <c>LIMIT</c>/<c>TOP</c>, how a timestamp is read back). A database adds its folder: one class
/// deriving from this one (or from <see cref="BulkCopyReadingDatabase"/> for the shared write loop), its schema, its
/// bulk step, and one line in <see cref="StorageProviders"/>.
/// </summary>
public abstract partial class ReadingDatabase : IReadingStore
{
    private protected ReadingDatabase(StorageOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Options = options;
    }

    private protected StorageOptions Options { get; }

    /// <summary>Storage:CommandTimeoutSeconds, set on every command.</summary>
    private protected int TimeoutSeconds => Options.CommandTimeoutSeconds;

    public abstract StorageProvider Provider { get; }

    public KeyStrategy KeyStrategy => Options.KeyStrategy;

    public abstract string Describe();

    public abstract Task<SchemaReport> EnsureSchemaAsync(CancellationToken cancellationToken);

    public async Task<int> RegisterDeviceAsync(string serial, DeviceAnnouncement? announcement, CancellationToken cancellationToken) =>
        (await RegisterDevicesAsync([new DeviceRegistration(serial, announcement)], cancellationToken))[0].Id;

    public async Task<IReadOnlyList<RegisteredDevice>> RegisterDevicesAsync(IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(devices);
        if (devices.Count == 0)
        {
            return [];
        }

        var distinct = DeviceRegistration.Distinct(devices);
        var registered = await RegisterDistinctAsync(distinct, cancellationToken);
        var result = new RegisteredDevice[devices.Count];
        for (int i = 0; i < devices.Count; i++)
        {
            result[i] = registered.TryGetValue(devices[i].Serial, out var device)
                ? device
                : throw new InvalidOperationException($"Device '{devices[i].Serial}' could not be registered: the database returned no id for it.");
        }

        return result;
    }

    /// <summary>
    /// Registers <paramref name="devices"/> (one entry per serial, in ordinal order of serial: two Saito instances
    /// registering overlapping serials lock their rows in the same order) in one transaction; serial to id and hub as
    /// stored after it. A new row gets <see cref="DeviceRegistration.NewHub"/>; an existing row's hub changes only with
    /// a hello that names one.
    /// </summary>
    private protected abstract Task<IReadOnlyDictionary<string, RegisteredDevice>> RegisterDistinctAsync(IReadOnlyList<DeviceRegistration> devices, CancellationToken cancellationToken);

    public abstract Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken);

    public abstract bool IsTransient(Exception exception);

    /// <inheritdoc cref="IReadingWriter.IsStorageOutage"/>
    public abstract bool IsStorageOutage(Exception exception);

    /// <inheritdoc cref="IReadingWriter.ConnectionsLost"/>
    public virtual void ConnectionsLost()
    {
    }

    private int _disposed;

    // Once only: the host registers this one instance under each of its roles, and the container disposes every one.
    public async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) == 0)
        {
            await DisposeCoreAsync();
        }

        GC.SuppressFinalize(this);
    }

    /// <summary>Closes the connection sources; called once.</summary>
    private protected abstract ValueTask DisposeCoreAsync();

    /// <summary>Where a tier's tables are (SQLite: a file each; the servers: one database).</summary>
    private protected abstract DbDataSource Source(StorageTier tier);

    /// <summary>An open connection to the tier's database, for reading (PostgreSQL, SQL Server: the <see cref="ConnectionPool.Queries"/> pool).</summary>
    private protected virtual ValueTask<DbConnection> OpenAsync(StorageTier tier, CancellationToken cancellationToken) =>
        Source(tier).OpenConnectionAsync(cancellationToken);

    /// <summary>An open connection to the hot tier for a write: a batch, a registration, the schema (the <see cref="ConnectionPool.Writes"/> pool).</summary>
    private protected virtual ValueTask<DbConnection> OpenWriterAsync(CancellationToken cancellationToken) => OpenAsync(StorageTier.Hot, cancellationToken);

    // The dialect: what differs between the databases' SQL for the same read.

    /// <summary>A table as the SQL names it (SQL Server: <c>[dbo].[name]</c>).</summary>
    private protected virtual string Table(string name) => name;

    /// <summary>A column as the SQL names it (SQL Server: <c>[name]</c>).</summary>
    private protected virtual string Column(string name) => name;

    /// <summary>A parameter as the SQL names it, and as the command's parameter is named: <c>@name</c> (SQLite: <c>$name</c>).</summary>
    private protected virtual string Parameter(string name) => "@" + name;

    /// <summary>What ends a statement (SQL Server: <c>;</c>).</summary>
    private protected virtual string End => string.Empty;

    /// <summary>The count of all rows as a 64-bit integer (SQL Server: <c>COUNT_BIG(*)</c>; its <c>count(*)</c> is an int).</summary>
    private protected virtual string CountAll => "count(*)";

    /// <summary>At most <paramref name="limit"/> rows: after SELECT (SQL Server: <c>TOP (n) </c>) ...</summary>
    private protected virtual string Top(string limit) => string.Empty;

    /// <summary>... or at the end of the statement (<c> LIMIT n</c>).</summary>
    private protected virtual string Limit(string limit) => " LIMIT " + limit;

    /// <summary>A stored timestamp as UTC (SQLite keeps microseconds since 1970 in an integer).</summary>
    private protected virtual DateTime ReadTime(DbDataReader reader, int ordinal) => reader.GetDateTime(ordinal);

    private string Columns(IEnumerable<string> names) => string.Join(", ", names.Select(Column));

    /// <summary>A command with Storage:CommandTimeoutSeconds.</summary>
    private protected DbCommand Command(DbConnection connection, string sql, DbTransaction? transaction = null) =>
        connection.Command(sql, TimeoutSeconds, transaction);

    private protected Task<int> ExecuteAsync(DbConnection connection, string sql, CancellationToken cancellationToken, DbTransaction? transaction = null) =>
        connection.ExecuteAsync(sql, cancellationToken, TimeoutSeconds, transaction);

    private protected Task<object?> ScalarAsync(DbConnection connection, string sql, CancellationToken cancellationToken, DbTransaction? transaction = null) =>
        connection.ScalarAsync(sql, cancellationToken, TimeoutSeconds, transaction);

    public async Task<IReadOnlyDictionary<string, int>> LoadDevicesAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        await using var command = Command(connection, $"SELECT {Columns(["serial", "id"])} FROM {Table(ReadingTables.DeviceTable)}{End}");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var devices = new Dictionary<string, int>(StringComparer.Ordinal);
        while (await reader.ReadAsync(cancellationToken))
        {
            devices[reader.GetString(0)] = reader.GetInt32(1);
        }

        return devices;
    }

    public async Task<IReadOnlyDictionary<string, string>> LoadDeviceHubsAsync(string? serial, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        string sql = $"SELECT {Columns(["serial", "hub"])} FROM {Table(ReadingTables.DeviceTable)} WHERE {Column("hub")} IS NOT NULL";
        await using var command = Command(connection, serial is null ? sql + End : $"{sql} AND {Column("serial")} = {Parameter("serial")}{End}");
        if (serial is not null)
        {
            command.Add(Parameter("serial"), serial);
        }

        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var hubs = new Dictionary<string, string>(StringComparer.Ordinal);
        while (await reader.ReadAsync(cancellationToken))
        {
            hubs[reader.GetString(0)] = reader.GetString(1);
        }

        return hubs;
    }

    public async Task<long> CountAsync(ReadingKind kind, StorageTier tier, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(tier, cancellationToken);
        return (long)(await ScalarAsync(connection, $"SELECT {CountAll} FROM {Table(ReadingTables.TableName(kind, KeyStrategy, tier))}{End}", cancellationToken))!;
    }

    public async Task<DateTime?> OldestAsync(ReadingKind kind, StorageTier tier, CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(tier, cancellationToken);
        await using var command = Command(connection,
            $"SELECT min({Column("ts")}) FROM {Table(ReadingTables.TableName(kind, KeyStrategy, tier))}{End}");
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await reader.ReadAsync(cancellationToken) && !await reader.IsDBNullAsync(0, cancellationToken) ? ReadTime(reader, 0) : null;
    }

    public async Task<IReadOnlyList<Reading>> ReadAsync(ReadingKind kind, StorageTier tier, int deviceId, CancellationToken cancellationToken)
    {
        var valueColumns = ReadingTables.ValueColumns(kind);
        await using var connection = await OpenAsync(tier, cancellationToken);
        await using var command = Command(connection,
            $"SELECT {Columns(["device_id", "channel", "ts", .. valueColumns, "received_at"])} " +
            $"FROM {Table(ReadingTables.TableName(kind, KeyStrategy, tier))} WHERE {Column("device_id")} = {Parameter("device_id")} " +
            $"ORDER BY {Column("ts")}, {Column("channel")}{End}");
        command.Add(Parameter("device_id"), deviceId);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        return await ReadReadingsAsync(reader, kind, cancellationToken);
    }

    /// <summary>Readings from rows of device_id, channel, ts, the kind's value columns, received_at.</summary>
    private protected async Task<List<Reading>> ReadReadingsAsync(DbDataReader reader, ReadingKind kind, CancellationToken cancellationToken)
    {
        int valueCount = ReadingTables.ValueColumns(kind).Count;
        var readings = new List<Reading>();
        var values = new double?[4];
        int receivedAt = 3 + valueCount;
        while (await reader.ReadAsync(cancellationToken))
        {
            for (int i = 0; i < valueCount; i++)
            {
                values[i] = await reader.IsDBNullAsync(3 + i, cancellationToken) ? null : reader.GetDouble(3 + i);
            }

            readings.Add(new Reading(
                kind,
                reader.GetInt32(0),
                reader.GetInt32(1),
                ReadTime(reader, 2),
                ReadTime(reader, receivedAt),
                values[0],
                values[1],
                values[2],
                values[3]));
        }

        return readings;
    }

    public async Task<IReadOnlyList<DeadLetter>> ReadDeadLettersAsync(int limit, CancellationToken cancellationToken)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(limit);
        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        await using var command = Command(connection,
            $"SELECT {Top(Parameter("limit"))}{Columns(["received_at", "topic", "client_id", "reason", "detail", "payload", "payload_bytes"])} " +
            $"FROM {Table(ReadingTables.DeadLetterTable)} ORDER BY {Column("id")} DESC{Limit(Parameter("limit"))}{End}");
        command.Add(Parameter("limit"), limit);
        await using var reader = await command.ExecuteReaderAsync(cancellationToken);
        var letters = new List<DeadLetter>();
        while (await reader.ReadAsync(cancellationToken))
        {
            letters.Add(new DeadLetter(
                ReadTime(reader, 0),
                reader.GetString(1),
                await reader.IsDBNullAsync(2, cancellationToken) ? null : reader.GetString(2),
                reader.GetString(3),
                reader.GetString(4),
                reader.GetString(5),
                await reader.IsDBNullAsync(6, cancellationToken) ? null : await reader.GetFieldValueAsync<byte[]>(6, cancellationToken)));
        }

        return letters;
    }

    public async Task PingAsync(CancellationToken cancellationToken)
    {
        await using var connection = await OpenAsync(StorageTier.Hot, cancellationToken);
        await ScalarAsync(connection, $"SELECT 1{End}", cancellationToken);
    }
}

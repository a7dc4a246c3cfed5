using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Npgsql;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Benchmarks;

/// <summary>
/// A store on a fresh database for one benchmark run, and an endless supply of new, unique biosensor readings:
/// 64 devices x 4 channels, one reading per channel per second, so no batch ever meets a duplicate key. Each
/// invocation's readings come after the previous invocation's, so the table only grows at its end (as in
/// production, where readings arrive in time order) and by <see cref="BatchSize"/> rows per invocation.
/// </summary>
internal sealed class BulkWriterWorkload : IAsyncDisposable
{
    public const int BatchSize = 5000;
    private const int Devices = 64;
    private const int Channels = 4;
    private const int Series = Devices * Channels;

    private static readonly DateTime s_start = new(2026, 11, 23, 8, 0, 0, DateTimeKind.Utc);
    private readonly Func<ValueTask> _drop;
    private readonly ReadingBatch _batch = new();
    private long _next;

    private BulkWriterWorkload(IReadingStore store, Func<ValueTask> drop)
    {
        Store = store;
        _drop = drop;
    }

    public IReadingStore Store { get; }

    /// <summary>SQLite files in a new temporary folder, deleted afterwards.</summary>
    public static async Task<BulkWriterWorkload> SqliteAsync(SqliteSynchronous synchronous)
    {
        string dir = Path.Combine(Path.GetTempPath(), "saito-bdn-" + Guid.NewGuid().ToString("N")[..8]);
        var options = new StorageOptions { Provider = StorageProvider.Sqlite, HotPath = Path.Combine(dir, "hot"), ArchivePath = Path.Combine(dir, "archive") };
        options.Sqlite.Synchronous = synchronous;
        var store = ReadingStores.Create(options, NullLoggerFactory.Instance);
        var workload = new BulkWriterWorkload(store, () =>
        {
            SqliteConnection.ClearAllPools();
            Directory.Delete(dir, recursive: true);
            return ValueTask.CompletedTask;
        });
        await workload.PrepareAsync();
        return workload;
    }

    /// <summary>A new database on the server <paramref name="server"/> names, dropped afterwards.</summary>
    public static async Task<BulkWriterWorkload> PostgresAsync(string server)
    {
        string name = $"saito_bdn_{Environment.ProcessId}_{DateTime.UtcNow:HHmmssfff}";
        await using (var admin = new NpgsqlConnection(server))
        {
            await admin.OpenAsync();
            await using var create = new NpgsqlCommand($"CREATE DATABASE \"{name}\"", admin);
            await create.ExecuteNonQueryAsync();
        }

        var options = new StorageOptions
        {
            Provider = StorageProvider.Postgres,
            ConnectionString = new NpgsqlConnectionStringBuilder(server) { Database = name }.ConnectionString,
        };
        var store = ReadingStores.Create(options, NullLoggerFactory.Instance);
        var workload = new BulkWriterWorkload(store, async () =>
        {
            NpgsqlConnection.ClearAllPools();
            await using var admin = new NpgsqlConnection(server);
            await admin.OpenAsync();
            await using var drop = new NpgsqlCommand($"DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)", admin);
            await drop.ExecuteNonQueryAsync();
        });
        await workload.PrepareAsync();
        return workload;
    }

    private async Task PrepareAsync()
    {
        await Store.EnsureSchemaAsync(CancellationToken.None);
        for (int device = 0; device < Devices; device++)
        {
            await Store.RegisterDeviceAsync($"bdn-wrist-{device:D2}", null, CancellationToken.None);
        }
    }

    /// <summary>Fills the reused batch with the next <see cref="BatchSize"/> readings and commits it.</summary>
    public Task<BatchWriteResult> WriteNextAsync()
    {
        _batch.Clear();
        for (int i = 0; i < BatchSize; i++)
        {
            long k = _next++;
            int series = (int)(k % Series);
            var ts = s_start.AddTicks(((k / Series) * TimeSpan.TicksPerSecond) + (series * 31_250));
            _batch.Add(Reading.Biosensor(1 + (series / Channels), series % Channels, ts, ts.AddMilliseconds(150),
                58 + (k * 7 % 45), 104 + (k * 11 % 32), 64 + (k * 13 % 22), 31.8 + (k * 17 % 30 / 10.0)));
        }

        return Store.WriteAsync(_batch, CancellationToken.None);
    }

    /// <summary>Rows written so far (for the note on table growth).</summary>
    public long Written => _next;

    public async ValueTask DisposeAsync()
    {
        await Store.DisposeAsync();
        await _drop();
    }
}

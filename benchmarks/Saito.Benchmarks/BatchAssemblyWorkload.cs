using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Saito.Ingestion.Pipeline;
using Saito.Storage;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Benchmarks;

/// <summary>
/// A store that does, with each batch, what the SQLite and PostgreSQL stores do before their first row leaves for
/// the database (<c>SqliteWriter.Write</c>, <c>PostgresReadingStore.WriteAsync</c>): for each kind with readings,
/// <see cref="ReadingOrder.ByteOrdered"/> (the key of every reading, computed once, and the readings sorted into
/// primary-key order), then each row read in that order with its key. Then it reports the batch committed. SQL
/// Server's store does not sort: it derives each row's key as SqlBulkCopy reads it (see
/// <see cref="KeyDerivationBenchmarks"/>).
/// </summary>
internal sealed class OrderingStore(KeyStrategy keys) : IReadingWriter
{
    private long _batches;
    private long _readings;

    public KeyStrategy KeyStrategy { get; } = keys;

    /// <summary>Batches written so far (to check that each invocation is one batch).</summary>
    public long Batches => Interlocked.Read(ref _batches);

    public long ReadingsWritten => Interlocked.Read(ref _readings);

    /// <summary>Orders each kind's readings as the stores do and visits them in that order; returns a checksum so nothing is optimised away.</summary>
    public static long Order(ReadingBatch batch, KeyStrategy keys)
    {
        long checksum = 0;
        foreach (var kind in ReadingKinds.All)
        {
            var readings = batch.Of(kind);
            if (readings.Count == 0)
            {
                continue;
            }

            using var order = ReadingOrder.ByteOrdered(readings, keys, StorageProvider.Postgres);
            var ids = order.Ids;
            for (int position = 0; position < order.Count; position++)
            {
                int index = order.IndexAt(position);
                checksum += readings[index].Channel ^ ids[index].GetHashCode();
            }
        }

        return checksum;
    }

    public Task<BatchWriteResult> WriteAsync(ReadingBatch batch, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(batch);
        Order(batch, KeyStrategy);
        Interlocked.Increment(ref _batches);
        Interlocked.Add(ref _readings, batch.ReadingCount);
        return Task.FromResult(new BatchWriteResult(batch.ReadingCount, 0, batch.DeadLetters.Count));
    }

    public bool IsTransient(Exception exception) => false;
}

/// <summary>
/// A real <see cref="ReadingWriterPool"/> (with its <see cref="StorageResilience"/>,
/// <see cref="StorageHealth"/> and <see cref="IngestionMetrics"/>, registered as <c>AddSaitoIngestion</c> does)
/// writing to an <see cref="OrderingStore"/>: one writer, batches of <see cref="ReadingWorkload.BatchSize"/>
/// readings, the default batch age and queue capacity. One writer is SQLite's default, and it makes each batch
/// exactly the messages one invocation submits.
/// </summary>
internal sealed class WriterPoolRig : IAsyncDisposable
{
    private readonly ServiceProvider _services;

    private WriterPoolRig(ServiceProvider services)
    {
        _services = services;
        Store = (OrderingStore)services.GetRequiredService<IReadingWriter>();
        Pool = services.GetRequiredService<ReadingWriterPool>();
    }

    public OrderingStore Store { get; }

    public ReadingWriterPool Pool { get; }

    public static async Task<WriterPoolRig> StartAsync(KeyStrategy keys)
    {
        var services = new ServiceCollection();
        services.AddSingleton<ILoggerFactory>(NullLoggerFactory.Instance);
        services.AddSingleton(typeof(ILogger<>), typeof(NullLogger<>));
        services.AddMetrics();
        services.AddSingleton(TimeProvider.System);
        services.AddOptions<StorageOptions>().Configure(o =>
        {
            o.Provider = StorageProvider.Postgres;
            o.KeyStrategy = keys;
            o.Writers = 1;
            o.BatchSize = ReadingWorkload.BatchSize;
        });
        services.AddSingleton<IReadingWriter>(new OrderingStore(keys));
        services.AddSingleton<IngestionMetrics>();
        services.AddSingleton<StorageHealth>();
        services.AddSingleton<StorageResilience>();
        services.AddSingleton<ReadingWriterPool>();

        var rig = new WriterPoolRig(services.BuildServiceProvider());
        await rig.Pool.StartAsync(CancellationToken.None);
        return rig;
    }

    public async ValueTask DisposeAsync()
    {
        await Pool.StopAsync(CancellationToken.None);
        await _services.DisposeAsync();
    }
}

using BenchmarkDotNet.Attributes;
using Saito.Storage.Keys;
using Saito.Readings;

namespace Saito.Benchmarks;

/// <summary>
/// <see cref="ReadingKeys.For"/>: the GUID key a reading gets under each key strategy that has one, as the stores
/// call it (the SQLite and PostgreSQL stores once per reading in <c>ReadingOrder.ByteOrdered</c>, SQL Server's
/// once per row in <c>ReadingRowSource</c>). <c>Guid</c> is the version 5 UUID (SHA-1) of the natural key;
/// <c>SequentialGuid</c> hashes it with SHA-256 and puts the time in the bytes the database compares first: SQL
/// Server's last six, or the first (<c>ByteOrder</c>: PostgreSQL's uuid and SQLite's BLOB). The natural key
/// derives nothing and is left out.
/// <para>
/// <see cref="OneReading"/> is one call; <see cref="BatchOf5000"/> keys a whole batch of
/// <see cref="ReadingWorkload.BatchSize"/> readings into an array (as <c>ReadingOrder</c> holds them), with
/// <c>OperationsPerInvoke</c> set so that <b>Mean and Allocated are per reading</b> in both; a batch takes
/// 5,000 times that.
/// </para>
/// </summary>
[MemoryDiagnoser]
public class KeyDerivationBenchmarks
{
    private readonly Guid[] _ids = new Guid[ReadingWorkload.BatchSize];
    private Reading[] _readings = [];

    /// <summary><c>Guid</c>, <c>SeqGuid-SqlServer</c>, <c>SeqGuid-ByteOrder</c> (PostgreSQL and SQLite): short, as BenchmarkDotNet cuts longer values.</summary>
    [ParamsSource(nameof(Layouts))]
    public KeyLayout Layout { get; set; } = KeyLayout.All[0];

    public static IEnumerable<KeyLayout> Layouts => KeyLayout.All;

    [GlobalSetup]
    public void Setup()
    {
        _readings = ReadingWorkload.Readings(ReadingWorkload.BatchSize);

        // Fail fast if the workload stopped giving one key per reading: hashing the same name twice measures less.
        if (BatchOf5000().Distinct().Count() != ReadingWorkload.BatchSize)
        {
            throw new InvalidOperationException($"{Layout}: the workload's {ReadingWorkload.BatchSize} readings do not get distinct keys");
        }
    }

    [Benchmark(OperationsPerInvoke = 1)]
    public Guid OneReading() => ReadingKeys.For(_readings[0], Layout.Strategy, Layout.Provider)!.Value;

    [Benchmark(OperationsPerInvoke = ReadingWorkload.BatchSize)]
    public Guid[] BatchOf5000()
    {
        var strategy = Layout.Strategy;
        var provider = Layout.Provider;
        var readings = _readings;
        var ids = _ids;
        for (int i = 0; i < readings.Length; i++)
        {
            ids[i] = ReadingKeys.For(readings[i], strategy, provider)!.Value;
        }

        return ids;
    }
}

/// <summary>A key strategy on a database, named as it reads in the results table.</summary>
public sealed record KeyLayout(string Name, KeyStrategy Strategy, StorageProvider Provider)
{
    public static IReadOnlyList<KeyLayout> All { get; } =
    [
        // Name-based: the same GUID on every database.
        new("Guid", KeyStrategy.Guid, StorageProvider.Postgres),
        new("SeqGuid-SqlServer", KeyStrategy.SequentialGuid, StorageProvider.SqlServer),
        // Time in the first bytes: PostgreSQL and SQLite share this layout.
        new("SeqGuid-ByteOrder", KeyStrategy.SequentialGuid, StorageProvider.Postgres),
    ];

    public override string ToString() => Name;
}

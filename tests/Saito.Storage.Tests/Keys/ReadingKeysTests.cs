using System.ComponentModel;
using System.Data.SqlTypes;
using FsCheck;
using FsCheck.Fluent;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Readings.Configuration;

namespace Saito.Storage.Tests.Keys;

/// <summary>GUID keys derived from readings: the same reading always gets the same key, and sequential keys sort by time.</summary>
public sealed class ReadingKeysTests
{
    private static readonly Config Runs = Config.QuickThrowOnFailure.WithMaxTest(500).WithQuietOnSuccess(true);

    private static readonly DateTime Epoch2000 = new(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc);

    private static readonly (KeyStrategy Keys, StorageProvider Provider)[] GuidKeyings =
    [
        (KeyStrategy.Guid, StorageProvider.Postgres),
        (KeyStrategy.SequentialGuid, StorageProvider.Postgres),
        (KeyStrategy.SequentialGuid, StorageProvider.Sqlite),
        (KeyStrategy.SequentialGuid, StorageProvider.SqlServer),
    ];

    /// <summary>Any reading between 2000 and 2063, to the microsecond.</summary>
    private static Gen<Reading> AnyReading =>
        from kind in Gen.Elements(ReadingKind.Biosensor, ReadingKind.Location, ReadingKind.Pressure)
        from device in Gen.Choose(1, int.MaxValue)
        from channel in Gen.Choose(0, 255)
        from seconds in Gen.Choose(0, 2_000_000_000)
        from micros in Gen.Choose(0, 999_999)
        select new Reading(kind, device, channel, Epoch2000.AddSeconds(seconds).AddTicks(micros * 10L), Epoch2000, 1.0, 2.0, 3.0);

    /// <summary>A reading and another that differs from it in exactly one part of its key (kind, device, channel or time).</summary>
    private static Gen<(Reading, Reading)> NeighbourPairs =>
        from reading in AnyReading
        from part in Gen.Choose(0, 3)
        from step in Gen.Choose(1, 3)
        select (reading, part switch
        {
            0 => new Reading((ReadingKind)(((int)reading.Kind + 1 + (step % 2)) % 3), reading.DeviceId, reading.Channel, reading.Timestamp, reading.ReceivedAt, 1.0, 2.0, 3.0),
            1 => new Reading(reading.Kind, reading.DeviceId - step, reading.Channel, reading.Timestamp, reading.ReceivedAt, 1.0, 2.0, 3.0),
            2 => new Reading(reading.Kind, reading.DeviceId, reading.Channel + step, reading.Timestamp, reading.ReceivedAt, 1.0, 2.0, 3.0),
            _ => new Reading(reading.Kind, reading.DeviceId, reading.Channel, reading.Timestamp.AddTicks(step * 10L), reading.ReceivedAt, 1.0, 2.0, 3.0),
        });

    /// <summary>Two readings whose times differ by 1 µs to about 36 minutes, the first older.</summary>
    private static Gen<(Reading Older, Reading Newer)> OlderNewerPairs =>
        from older in AnyReading
        from newer in AnyReading
        from gapMicros in Gen.Choose(1, int.MaxValue)
        select (older, new Reading(newer.Kind, newer.DeviceId, newer.Channel, older.Timestamp.AddTicks(gapMicros * 10L), newer.ReceivedAt, 1.0, 2.0, 3.0));

    [Fact]
    public void The_same_reading_always_gets_the_same_key_whatever_its_values_and_arrival()
    {
        var reading = Reading.Biosensor(12, 3, Epoch2000.AddTicks(123_456_789), Epoch2000, 70, 120, 80, 36.6);
        var again = Reading.Biosensor(12, 3, Epoch2000.AddTicks(123_456_789), Epoch2000.AddHours(1), null, 121, null, null);

        foreach (var (keys, provider) in GuidKeyings)
        {
            var key = ReadingKeys.For(reading, keys, provider);
            key.ShouldNotBeNull();
            ReadingKeys.For(reading, keys, provider).ShouldBe(key, $"{keys} on {provider}");
            ReadingKeys.For(again, keys, provider).ShouldBe(key, $"{keys} on {provider}");
        }

        ReadingKeys.For(reading, KeyStrategy.Natural, StorageProvider.Postgres).ShouldBeNull();
    }

    [Fact]
    public void Name_based_keys_match_rfc_9562_version_5_as_python_computes_it()
    {
        // python3: uuid.UUID(bytes=sha1(ns.bytes + name).digest()[:16], version=5), name = kind, device, channel,
        // microseconds since 1970, big-endian (see ReadingKeys.WriteName).
        var ts = new DateTime(2026, 3, 1, 12, 0, 0, DateTimeKind.Utc).AddTicks(1_234_560);

        ReadingKeys.NameBased(Reading.Biosensor(1, 2, ts, ts, null, null, null, null))
            .ShouldBe(new Guid("8cb529c0-f613-57aa-98a0-076724a9da69"));
        ReadingKeys.NameBased(Reading.Pressure(70000, 0, ts, ts, 1))
            .ShouldBe(new Guid("e8ec627e-9cb9-5f5a-8961-1933c26106cc"));
    }

    [Fact]
    public void Name_based_keys_carry_version_5_and_the_rfc_variant()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(AnyReading), reading =>
        {
            byte[] bytes = ReadingKeys.NameBased(reading).ToByteArray(bigEndian: true);
            (bytes[6] >> 4).ShouldBe(5);
            (bytes[8] & 0xC0).ShouldBe(0x80);
        }));
    }

    [Fact]
    public void Sequential_keys_for_byte_order_carry_version_8_and_the_rfc_variant()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(AnyReading), reading =>
        {
            byte[] bytes = ReadingKeys.SequentialForByteOrder(reading).ToByteArray(bigEndian: true);
            (bytes[6] >> 4).ShouldBe(8);
            (bytes[8] & 0xC0).ShouldBe(0x80);
        }));
    }

    [Fact]
    public void Readings_that_differ_in_any_part_of_their_key_get_different_keys()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(NeighbourPairs), pair =>
        {
            var (one, other) = pair;
            foreach (var (keys, provider) in GuidKeyings)
            {
                ReadingKeys.For(one, keys, provider).ShouldNotBe(ReadingKeys.For(other, keys, provider), $"{keys} on {provider}: {one} / {other}");
            }
        }));
    }

    [Fact]
    public void A_hundred_thousand_distinct_readings_get_a_hundred_thousand_distinct_keys()
    {
        var readings = Enumerable.Range(0, 100_000)
            .Select(i => new Reading((ReadingKind)(i % 3), 1 + (i % 50), i % 4, Epoch2000.AddTicks(i / 200 * 10L), Epoch2000, 1, 2, 3))
            .ToList();
        readings.Select(r => (r.Kind, r.DeviceId, r.Channel, r.Timestamp)).Distinct().Count().ShouldBe(100_000);

        foreach (var (keys, provider) in GuidKeyings)
        {
            readings.Select(r => ReadingKeys.For(r, keys, provider)).Distinct().Count().ShouldBe(100_000, $"{keys} on {provider}");
        }
    }

    [Fact]
    public void Sequential_keys_for_sql_server_sort_by_time_in_sql_servers_uniqueidentifier_order()
    {
        Check.One(Runs, Prop.ForAll(Arb.From(OlderNewerPairs), pair =>
        {
            // SqlGuid.CompareTo is SQL Server's order: bytes 10-15 first, then 8-9, 6-7, 4-5, 0-3.
            var older = new SqlGuid(ReadingKeys.For(pair.Older, KeyStrategy.SequentialGuid, StorageProvider.SqlServer)!.Value);
            var newer = new SqlGuid(ReadingKeys.For(pair.Newer, KeyStrategy.SequentialGuid, StorageProvider.SqlServer)!.Value);
            older.CompareTo(newer).ShouldBeLessThan(0, $"{pair.Older.Timestamp:O} before {pair.Newer.Timestamp:O}");
        }));
    }

    [Theory]
    [InlineData(StorageProvider.Postgres)]
    [InlineData(StorageProvider.Sqlite)]
    public void Sequential_keys_for_postgres_and_sqlite_sort_by_time_in_big_endian_byte_order(StorageProvider provider)
    {
        Check.One(Runs, Prop.ForAll(Arb.From(OlderNewerPairs), pair =>
        {
            // PostgreSQL compares uuid, and SQLite a BLOB, byte by byte from the first (memcmp).
            byte[] older = ReadingKeys.For(pair.Older, KeyStrategy.SequentialGuid, provider)!.Value.ToByteArray(bigEndian: true);
            byte[] newer = ReadingKeys.For(pair.Newer, KeyStrategy.SequentialGuid, provider)!.Value.ToByteArray(bigEndian: true);
            older.AsSpan().SequenceCompareTo(newer).ShouldBeLessThan(0, $"{pair.Older.Timestamp:O} before {pair.Newer.Timestamp:O}");
        }));
    }

    [Fact]
    public void Each_database_needs_its_own_sequential_layout()
    {
        // A thousand readings a millisecond apart: in time order under their own database's order, not under the other's.
        var readings = Enumerable.Range(0, 1000)
            .Select(i => Reading.Pressure(1 + (i % 5), 0, Epoch2000.AddYears(26).AddMilliseconds(i), Epoch2000, 1))
            .ToList();
        var byteOrdered = readings.Select(r => ReadingKeys.SequentialForByteOrder(r)).ToList();
        var sqlServer = readings.Select(r => ReadingKeys.SequentialForSqlServer(r)).ToList();

        Inversions(byteOrdered, ByteOrder).ShouldBe(0);
        Inversions(sqlServer, SqlServerOrder).ShouldBe(0);
        Inversions(byteOrdered, SqlServerOrder).ShouldBeGreaterThan(100);
        Inversions(sqlServer, ByteOrder).ShouldBeGreaterThan(100);
    }

    private static int ByteOrder(Guid a, Guid b) => a.ToByteArray(bigEndian: true).AsSpan().SequenceCompareTo(b.ToByteArray(bigEndian: true));

    private static int SqlServerOrder(Guid a, Guid b) => new SqlGuid(a).CompareTo(new SqlGuid(b));

    /// <summary>Neighbours (in time) that the comparison puts the wrong way round.</summary>
    private static int Inversions(List<Guid> keysInTimeOrder, Func<Guid, Guid, int> compare) =>
        keysInTimeOrder.Zip(keysInTimeOrder.Skip(1)).Count(pair => compare(pair.First, pair.Second) >= 0);

    [Theory]
    [InlineData("natural", KeyStrategy.Natural)]
    [InlineData("guid", KeyStrategy.Guid)]
    [InlineData("sequential-guid", KeyStrategy.SequentialGuid)]
    [InlineData("SequentialGuid", KeyStrategy.SequentialGuid)]
    [InlineData("sequential_guid", KeyStrategy.SequentialGuid)]
    [InlineData(" Sequential-Guid ", KeyStrategy.SequentialGuid)]
    public void Key_strategy_names_parse_in_kebab_and_pascal_case(string text, KeyStrategy expected)
    {
        KebabCaseEnum.Parse<KeyStrategy>(text).ShouldBe(expected);
        TypeDescriptor.GetConverter(typeof(KeyStrategy)).ConvertFrom(text).ShouldBe(expected);
    }

    [Theory]
    [InlineData("SqlServer", StorageProvider.SqlServer)]
    [InlineData("sqlserver", StorageProvider.SqlServer)]
    [InlineData("sql-server", StorageProvider.SqlServer)]
    [InlineData("postgres", StorageProvider.Postgres)]
    [InlineData("SQLITE", StorageProvider.Sqlite)]
    public void Provider_names_parse_in_any_case(string text, StorageProvider expected) =>
        KebabCaseEnum.Parse<StorageProvider>(text).ShouldBe(expected);

    [Theory]
    [InlineData("junk")]
    [InlineData("")]
    [InlineData("-")]
    [InlineData("1")]
    [InlineData("-1")]
    [InlineData("+1")]
    [InlineData("natural,guid")]
    public void Anything_else_parses_to_minus_one_which_validation_refuses(string text)
    {
        var parsed = KebabCaseEnum.Parse<KeyStrategy>(text);

        ((int)parsed).ShouldBe(-1);
        Enum.IsDefined(parsed).ShouldBeFalse();
        new StorageOptionsValidator().Validate(null, new StorageOptions { KeyStrategy = parsed }).Failed.ShouldBeTrue();
    }
}

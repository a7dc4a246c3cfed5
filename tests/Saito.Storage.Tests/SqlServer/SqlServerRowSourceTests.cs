using System.Data;
using System.Data.SqlTypes;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.SqlServer;

namespace Saito.Storage.Tests.SqlServer;

/// <summary>
/// The rows SqlBulkCopy sends, read through the reader the way SqlBulkCopy (Microsoft.Data.SqlClient 6.x) reads a
/// DbDataReader that is not a SqlDataReader: GetOrdinal once per name mapping, then per row Read and, per column,
/// IsDBNull (EnableStreaming) and GetValue. Expected values come from the Reading's named properties, not from
/// the V0..V3 mapping the row source uses, so a value landing in the wrong column is caught.
/// </summary>
public sealed class SqlServerRowSourceTests
{
    private static readonly DateTime Received = new(2025, 3, 4, 5, 6, 7, DateTimeKind.Utc);

    public static TheoryData<ReadingKind, KeyStrategy> EveryTable()
    {
        var data = new TheoryData<ReadingKind, KeyStrategy>();
        foreach (var kind in ReadingKinds.All)
        {
            foreach (var keys in new[] { KeyStrategy.Natural, KeyStrategy.Guid, KeyStrategy.SequentialGuid })
            {
                data.Add(kind, keys);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(EveryTable))]
    public void Every_column_reads_back_as_SqlBulkCopy_reads_it(ReadingKind kind, KeyStrategy keys)
    {
        var readings = Sample(kind);
        var columns = ReadingTables.Columns(kind, keys);
        using var source = new ReadingRowSource(kind, keys, readings);

        var rows = ReadLikeSqlBulkCopy(source, columns);

        rows.Count.ShouldBe(readings.Count);
        for (int row = 0; row < readings.Count; row++)
        {
            for (int column = 0; column < columns.Count; column++)
            {
                rows[row][column].ShouldBe(Expected(readings[row], columns[column], keys), $"row {row}, column {columns[column]}");
            }
        }
    }

    [Theory]
    [MemberData(nameof(EveryTable))]
    public void Names_ordinals_and_field_types_follow_ReadingTables(ReadingKind kind, KeyStrategy keys)
    {
        var columns = ReadingTables.Columns(kind, keys);
        using var source = new ReadingRowSource(kind, keys, Sample(kind));

        source.FieldCount.ShouldBe(columns.Count);
        for (int i = 0; i < columns.Count; i++)
        {
            source.GetName(i).ShouldBe(columns[i]);
            source.GetOrdinal(columns[i]).ShouldBe(i);
            source.GetOrdinal(columns[i].ToUpperInvariant()).ShouldBe(i);
            (source.GetFieldType(i), source.GetDataTypeName(i)).ShouldBe(columns[i] switch
            {
                "id" => (typeof(Guid), "uniqueidentifier"),
                "device_id" or "channel" => (typeof(int), "int"),
                "ts" or "received_at" => (typeof(DateTime), "datetime2"),
                _ => (typeof(double), "float"),
            });
        }

        Should.Throw<IndexOutOfRangeException>(() => source.GetOrdinal("no_such_column"));
        Should.Throw<IndexOutOfRangeException>(() => source.GetName(columns.Count));
    }

    [Theory]
    [MemberData(nameof(EveryTable))]
    public void Typed_getters_agree_with_GetValue(ReadingKind kind, KeyStrategy keys)
    {
        var readings = Sample(kind);
        using var source = new ReadingRowSource(kind, keys, readings);
        int row = 0;
        while (source.Read())
        {
            for (int i = 0; i < source.FieldCount; i++)
            {
                object value = source.GetValue(i);
                if (source.IsDBNull(i))
                {
                    value.ShouldBe(DBNull.Value);
                    Should.Throw<InvalidCastException>(() => source.GetDouble(i));
                    continue;
                }

                object typed = source.GetFieldType(i) switch
                {
                    var t when t == typeof(Guid) => source.GetGuid(i),
                    var t when t == typeof(int) => source.GetInt32(i),
                    var t when t == typeof(DateTime) => source.GetDateTime(i),
                    _ => source.GetDouble(i),
                };
                typed.ShouldBe(value, $"row {row}, column {source.GetName(i)}");
                value.GetType().ShouldBe(source.GetFieldType(i));
            }

            row++;
        }

        row.ShouldBe(readings.Count);
    }

    [Fact]
    public void Missing_biosensor_values_are_DBNull()
    {
        var reading = Reading.Biosensor(7, 1, Received, Received, heartRate: 61, systolic: null, diastolic: null, skinTemperature: 33.5);
        using var source = new ReadingRowSource(ReadingKind.Biosensor, KeyStrategy.Natural, [reading]);
        source.Read().ShouldBeTrue();

        source.IsDBNull(source.GetOrdinal("heart_rate")).ShouldBeFalse();
        source.IsDBNull(source.GetOrdinal("systolic")).ShouldBeTrue();
        source.IsDBNull(source.GetOrdinal("diastolic")).ShouldBeTrue();
        source.GetValue(source.GetOrdinal("systolic")).ShouldBe(DBNull.Value);
        source.GetDouble(source.GetOrdinal("skin_temp")).ShouldBe(33.5);
        source.IsDBNull(source.GetOrdinal("device_id")).ShouldBeFalse();
    }

    [Theory]
    [InlineData(KeyStrategy.Guid)]
    [InlineData(KeyStrategy.SequentialGuid)]
    public void Ids_are_the_SQL_Server_keys_of_ReadingKeys(KeyStrategy keys)
    {
        var readings = Sample(ReadingKind.Location);
        using var source = new ReadingRowSource(ReadingKind.Location, keys, readings);
        int row = 0;
        while (source.Read())
        {
            source.GetGuid(0).ShouldBe(ReadingKeys.For(readings[row], keys, StorageProvider.SqlServer)!.Value);
            row++;
        }

        row.ShouldBe(readings.Count);
    }

    [Fact]
    public void Sequential_ids_sort_by_time_in_SQL_Server_uniqueidentifier_order()
    {
        // SqlGuid compares as SQL Server compares uniqueidentifier (bytes 10-15 first).
        var start = new DateTime(2025, 1, 1, 0, 0, 0, DateTimeKind.Utc);
        var readings = Enumerable.Range(0, 50)
            .Select(i => Reading.Pressure(1000 - i, i % 3, start.AddTicks(i * 10 * ReadingTime.TicksPerMicrosecond + i * 7_000_000), Received, i))
            .ToList();
        using var source = new ReadingRowSource(ReadingKind.Pressure, KeyStrategy.SequentialGuid, readings);
        var ids = new List<SqlGuid>();
        while (source.Read())
        {
            ids.Add(new SqlGuid(source.GetGuid(0)));
        }

        ids.ShouldBe(ids.OrderBy(id => id).ToList());
    }

    [Fact]
    public void Wrong_typed_getters_and_reads_outside_a_row_are_refused()
    {
        using var source = new ReadingRowSource(ReadingKind.Pressure, KeyStrategy.Natural, Sample(ReadingKind.Pressure));
        Should.Throw<InvalidOperationException>(() => source.GetValue(0));
        source.Read().ShouldBeTrue();
        Should.Throw<InvalidCastException>(() => source.GetString(0));
        Should.Throw<InvalidCastException>(() => source.GetGuid(0));
        Should.Throw<InvalidCastException>(() => source.GetDateTime(0));
        Should.Throw<InvalidCastException>(() => source.GetInt32(source.GetOrdinal("kpa")));
        Should.Throw<IndexOutOfRangeException>(() => source.GetValue(99));
        while (source.Read())
        {
        }

        source.Read().ShouldBeFalse();
        Should.Throw<InvalidOperationException>(() => source.GetValue(0));
    }

    [Fact]
    public async Task ReadAsync_walks_the_rows_as_SqlBulkCopy_does_when_copying_asynchronously()
    {
        var readings = Sample(ReadingKind.Location);
        await using var source = new ReadingRowSource(ReadingKind.Location, KeyStrategy.Natural, readings);
        int rows = 0;
        while (await source.ReadAsync(TestContext.Current.CancellationToken))
        {
            source.GetInt32(0).ShouldBe(readings[rows].DeviceId);
            rows++;
        }

        rows.ShouldBe(readings.Count);
        source.HasRows.ShouldBeTrue();
        source.NextResult().ShouldBeFalse();
    }

    [Fact]
    public void An_empty_list_has_no_rows()
    {
        using var source = new ReadingRowSource(ReadingKind.Biosensor, KeyStrategy.Guid, []);
        source.HasRows.ShouldBeFalse();
        source.Read().ShouldBeFalse();
    }

    [Fact]
    public void A_reading_of_another_kind_is_a_bug_and_says_so()
    {
        var mixed = new[] { Reading.Pressure(1, 0, Received, Received, 101.3), Reading.Location(1, 0, Received, Received, 1, 2, 3) };
        using var source = new ReadingRowSource(ReadingKind.Pressure, KeyStrategy.Natural, mixed);
        source.Read().ShouldBeTrue();
        Should.Throw<InvalidOperationException>(() => source.Read()).Message.ShouldContain("Location");
    }

    [Fact]
    public void A_closed_source_refuses_to_read()
    {
        var source = new ReadingRowSource(ReadingKind.Pressure, KeyStrategy.Natural, Sample(ReadingKind.Pressure));
        source.Close();
        source.IsClosed.ShouldBeTrue();
        Should.Throw<ObjectDisposedException>(() => source.Read());
    }

    [Fact]
    public void Dead_letters_read_back_as_SqlBulkCopy_reads_them()
    {
        var letters = new[]
        {
            new DeadLetter(Received, "saito/hub-1/biosensor", "hub-1", "malformed-json", "unexpected end at 12", "{\"hr\": 6"),
            new DeadLetter(Received.AddSeconds(1), "saito/hub-2/location", clientId: null, "out-of-range", "x = 1e9 m", new string('p', DeadLetter.MaxPayloadChars)),
            DeadLetter.FromPayload(Received.AddSeconds(2), "saito/hub-2", null, "bad-topic", "no kind", [0, 0xFF, 0x7B]),
        };
        using var source = new DeadLetterRowSource(letters);
        var columns = SqlServerSchema.DeadLetterColumns;

        var rows = ReadLikeSqlBulkCopy(source, columns);

        rows.Count.ShouldBe(3);
        for (int i = 0; i < letters.Length; i++)
        {
            rows[i].ShouldBe(new object[]
            {
                letters[i].ReceivedAt, letters[i].Topic, (object?)letters[i].ClientId ?? DBNull.Value, letters[i].Reason, letters[i].Detail, letters[i].Payload,
                (object?)letters[i].PayloadBytes ?? DBNull.Value,
            });
        }

        source.GetFieldType(0).ShouldBe(typeof(DateTime));
        source.GetFieldType(5).ShouldBe(typeof(string));
        source.GetFieldType(6).ShouldBe(typeof(byte[]));
    }

    [Fact]
    public void Dead_letter_bytes_stream_through_GetStream_as_for_a_varbinary_max_column()
    {
        // With EnableStreaming and a varbinary(max) destination SqlBulkCopy asks for a Stream.
        byte[] bytes = [0, 0xFF, 0xFE, 0x7B];
        using var source = new DeadLetterRowSource([DeadLetter.FromPayload(Received, "t", null, "bad-topic", "d", bytes)]);
        source.Read().ShouldBeTrue();
        source.IsDBNull(6).ShouldBeFalse();
        using var stream = source.GetStream(6);
        using var copy = new MemoryStream();
        stream.CopyTo(copy);
        copy.ToArray().ShouldBe(bytes);
        var buffer = new byte[2];
        source.GetBytes(6, 2, buffer, 0, 2).ShouldBe(2);
        buffer.ShouldBe(new byte[] { 0xFE, 0x7B });
    }

    [Fact]
    public void Dead_letter_payload_streams_through_GetTextReader_as_for_an_nvarchar_max_column()
    {
        // With EnableStreaming and an nvarchar(max) destination SqlBulkCopy asks for a TextReader.
        var letter = new DeadLetter(Received, "t", null, "malformed-json", "detail", "payload \u00e9\u4e2d");
        using var source = new DeadLetterRowSource([letter]);
        source.Read().ShouldBeTrue();
        source.IsDBNull(5).ShouldBeFalse();
        using var text = source.GetTextReader(5);
        text.ReadToEnd().ShouldBe("payload \u00e9\u4e2d");
        source.IsDBNull(2).ShouldBeTrue();
        Should.Throw<InvalidCastException>(() => source.GetString(2));
    }

    /// <summary>What SqlBulkCopy.GetValueFromSourceRow does for a DbDataReader source with EnableStreaming.</summary>
    internal static List<object[]> ReadLikeSqlBulkCopy(IDataReader reader, IReadOnlyList<string> mappedColumns)
    {
        int[] ordinals = mappedColumns.Select(reader.GetOrdinal).ToArray();
        var rows = new List<object[]>();
        while (reader.Read())
        {
            var row = new object[ordinals.Length];
            for (int i = 0; i < ordinals.Length; i++)
            {
                row[i] = reader.IsDBNull(ordinals[i]) ? DBNull.Value : reader.GetValue(ordinals[i]);
            }

            rows.Add(row);
        }

        return rows;
    }

    internal static List<Reading> Sample(ReadingKind kind)
    {
        var ts = new DateTime(2025, 3, 4, 5, 6, 7, DateTimeKind.Utc).AddTicks(123_456 * ReadingTime.TicksPerMicrosecond);
        return kind switch
        {
            ReadingKind.Biosensor =>
            [
                Reading.Biosensor(1, 0, ts, Received, 72, 120, 80, 36.6),
                Reading.Biosensor(1, 1, ts.AddTicks(ReadingTime.TicksPerMicrosecond), Received, 180.5, null, null, null),
                Reading.Biosensor(int.MaxValue, int.MaxValue, ts.AddYears(-20), Received, null, 95.25, 60, null),
            ],
            ReadingKind.Location =>
            [
                Reading.Location(2, 0, ts, Received, 0.1, -0.2, 1e-300),
                Reading.Location(2, 3, ts.AddMinutes(1), Received, double.MaxValue, double.MinValue, 0),
            ],
            ReadingKind.Pressure =>
            [
                Reading.Pressure(3, 0, ts, Received, 101.325),
                Reading.Pressure(3, 0, ts.AddDays(1), Received, -0.0001),
            ],
            _ => throw new ArgumentOutOfRangeException(nameof(kind)),
        };
    }

    private static object Expected(Reading reading, string column, KeyStrategy keys)
    {
        object Value(double? value) => value is { } v ? v : DBNull.Value;
        return column switch
        {
            "id" => ReadingKeys.For(reading, keys, StorageProvider.SqlServer)!.Value,
            "device_id" => reading.DeviceId,
            "channel" => reading.Channel,
            "ts" => reading.Timestamp,
            "received_at" => reading.ReceivedAt,
            "heart_rate" => Value(reading.HeartRate),
            "systolic" => Value(reading.Systolic),
            "diastolic" => Value(reading.Diastolic),
            "skin_temp" => Value(reading.SkinTemperature),
            "x" => Value(reading.X),
            "y" => Value(reading.Y),
            "z" => Value(reading.Z),
            "kpa" => Value(reading.Kpa),
            _ => throw new ArgumentOutOfRangeException(nameof(column), column, null),
        };
    }
}

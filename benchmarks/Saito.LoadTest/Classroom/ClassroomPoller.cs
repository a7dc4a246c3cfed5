using System.Data.Common;
using System.Diagnostics;
using System.Globalization;
using System.Text;
using Microsoft.Data.Sqlite;
using Npgsql;
using Saito.Storage;
using Saito.Storage.Keys;

namespace Saito.LoadTest.Classroom;

/// <summary>Where the readings end up: the database the tool reads committed rows back from, and which tables.</summary>
internal sealed record ClassroomDatabase(StorageProvider Provider, string? ConnectionString, string? SqliteHotFile, KeyStrategy Keys);

/// <summary>
/// Watches the database for the run's readings, every poll interval, with one connection of its own:
/// <list type="bullet">
/// <item><see cref="Committed"/>: how many of the run's readings are committed (rows of the run's devices; exact at
/// each poll), for the committed rate over time.</item>
/// <item>Publish-to-commit latency as observed: a reading counts as committed at the start of the first poll
/// whose snapshot holds it and every earlier reading of its sensor (so a reading committed out of order, behind a
/// gap, is counted late, never early). Its latency is that moment minus the time its message was due: an upper
/// bound, too high by at most one poll interval plus the poll's own time.</item>
/// </list>
/// Per sensor it asks for the rows newer than the newest reading already seen: with the natural key that is a
/// range of the primary key (device_id, channel, ts), so a poll costs the same at the end of an hour as at the
/// start. GUID-keyed tables have no such index; there each poll counts the run's rows by (device, channel), which
/// grows with the table.
/// </summary>
internal sealed class ClassroomPoller : IAsyncDisposable
{
    private const int SensorsPerCommand = 200; // SQLite allows 500 terms in a compound SELECT
    private readonly ClassroomDatabase _database;
    private readonly ClassroomLayout _layout;
    private readonly DbConnection _connection;
    private readonly Dictionary<string, int> _deviceIds = new(StringComparer.Ordinal);
    private readonly long[] _seenCount;
    private readonly long[] _watermark;
    private readonly long[] _beyond;
    private readonly long[] _newest;
    private readonly List<(long At, long Ticks)> _seen = new();
    private readonly List<DbCommand> _commands = new();
    private readonly Dictionary<(int DeviceId, int Channel), int> _sensorByKey = new();
    private long _committed;
    private long _seenReadings;
    private long _polls;
    private long _pollTicks;
    private long _maxPollTicks;

    private ClassroomPoller(ClassroomDatabase database, ClassroomLayout layout, DbConnection connection)
    {
        _database = database;
        _layout = layout;
        _connection = connection;
        int n = layout.Sensors.Count;
        _seenCount = new long[n];
        _watermark = new long[n];
        _beyond = new long[n];
        _newest = new long[n];
    }

    /// <summary>Readings of the run committed, as of the last poll.</summary>
    public long Committed => Interlocked.Read(ref _committed);

    /// <summary>Readings whose commit has been observed (in order, per sensor).</summary>
    public long SeenReadings => Interlocked.Read(ref _seenReadings);

    public long Polls => Interlocked.Read(ref _polls);

    /// <summary>Mean and longest time a poll took, in milliseconds.</summary>
    public (double Mean, double Max) PollMilliseconds =>
        Polls == 0 ? (0, 0) : (_pollTicks * 1000.0 / Stopwatch.Frequency / Polls, _maxPollTicks * 1000.0 / Stopwatch.Frequency);

    /// <summary>Each reading seen committed: when (Stopwatch ticks), and due-to-seen in ticks. Read once polling has stopped.</summary>
    public IReadOnlyList<(long At, long Ticks)> Seen => _seen;

    public static async Task<ClassroomPoller> OpenAsync(ClassroomDatabase database, ClassroomLayout layout, CancellationToken token)
    {
        DbConnection connection;
        if (database.Provider == StorageProvider.Sqlite)
        {
            string file = database.SqliteHotFile ?? throw new InvalidOperationException("SQLite needs the hot file.");
            if (!File.Exists(file))
            {
                throw new InvalidOperationException($"{file} does not exist: point --sqlite-hot at Saito's Storage:HotPath (or its saito-hot.db).");
            }

            connection = new SqliteConnection(new SqliteConnectionStringBuilder { DataSource = file, Mode = SqliteOpenMode.ReadWrite, Pooling = false }.ToString());
        }
        else if (database.Provider == StorageProvider.Postgres)
        {
            connection = new NpgsqlConnection(new NpgsqlConnectionStringBuilder(database.ConnectionString) { Pooling = false }.ToString());
        }
        else
        {
            throw new NotSupportedException($"The classroom poller reads SQLite or PostgreSQL, not {database.Provider}.");
        }

        try
        {
            await connection.OpenAsync(token);
            if (connection is SqliteConnection)
            {
                await using var busy = connection.CreateCommand();
                busy.CommandText = "PRAGMA busy_timeout = 10000";
                await busy.ExecuteNonQueryAsync(token);
            }
        }
        catch
        {
            await connection.DisposeAsync();
            throw;
        }

        return new ClassroomPoller(database, layout, connection);
    }

    /// <summary>Polls every <paramref name="interval"/> until <paramref name="token"/> fires.</summary>
    public async Task RunAsync(TimeSpan interval, CancellationToken token)
    {
        try
        {
            while (true)
            {
                long started = Stopwatch.GetTimestamp();
                await PollOnceAsync(token);
                var rest = interval - Stopwatch.GetElapsedTime(started);
                if (rest > TimeSpan.Zero)
                {
                    await Task.Delay(rest, token);
                }
            }
        }
        catch (OperationCanceledException) when (token.IsCancellationRequested)
        {
            // Stopped.
        }
    }

    public async Task PollOnceAsync(CancellationToken token)
    {
        if (_deviceIds.Count < _layout.Devices.Count)
        {
            await ResolveDevicesAsync(token);
        }

        if (_commands.Count == 0)
        {
            return;
        }

        // The snapshot each statement reads is taken after this moment: whatever it finds was committed by then.
        long at = Stopwatch.GetTimestamp();
        foreach (var command in _commands)
        {
            SetWatermarks(command);
            await using var reader = await command.ExecuteReaderAsync(token);
            while (await reader.ReadAsync(token))
            {
                int sensor;
                long count;
                if (_database.Keys == KeyStrategy.Natural)
                {
                    sensor = reader.GetInt32(0);
                    count = reader.GetInt64(1);
                    if (count > 0)
                    {
                        _newest[sensor] = Micros(reader, 2);
                    }

                    _beyond[sensor] = count;
                }
                else if (_sensorByKey.TryGetValue((reader.GetInt32(0), reader.GetInt32(1)), out sensor))
                {
                    count = reader.GetInt64(2) - _seenCount[sensor];
                    _beyond[sensor] = count;
                    _newest[sensor] = Micros(reader, 3);
                }
            }
        }

        long committed = 0;
        long seen = 0;
        foreach (var sensor in _layout.Sensors)
        {
            int g = sensor.Id;
            long beyond = _beyond[g];
            if (beyond > 0)
            {
                lock (sensor.Gate)
                {
                    // Every published reading up to the newest row found, and exactly that many rows: no gap.
                    int upTo = 0;
                    foreach (var (ts, _) in sensor.Pending)
                    {
                        if (ts > _newest[g])
                        {
                            break;
                        }

                        upTo++;
                    }

                    if (upTo == beyond)
                    {
                        for (int i = 0; i < upTo; i++)
                        {
                            var (_, due) = sensor.Pending.Dequeue();
                            _seen.Add((at, at - due));
                        }

                        _seenCount[g] += upTo;
                        _watermark[g] = _newest[g];
                        _beyond[g] = 0;
                        beyond = 0;
                    }
                }
            }

            committed += _seenCount[g] + beyond;
            seen += _seenCount[g];
        }

        long took = Stopwatch.GetTimestamp() - at;
        _pollTicks += took;
        _maxPollTicks = Math.Max(_maxPollTicks, took);
        Interlocked.Exchange(ref _committed, committed);
        Interlocked.Exchange(ref _seenReadings, seen);
        Interlocked.Increment(ref _polls);
    }

    /// <summary>Dead letters from the run's topics, and the newest one's reason and detail.</summary>
    public async Task<(long Count, string? Newest)> DeadLettersAsync(CancellationToken token)
    {
        string like = $"%/{_layout.Run}-hub%";
        await using var count = _connection.CreateCommand();
        count.CommandText = $"SELECT count(*) FROM {ReadingTables.DeadLetterTable} WHERE topic LIKE @p";
        AddParameter(count, "@p", like);
        long n = Convert.ToInt64(await count.ExecuteScalarAsync(token), CultureInfo.InvariantCulture);
        if (n == 0)
        {
            return (0, null);
        }

        await using var newest = _connection.CreateCommand();
        newest.CommandText = $"SELECT reason, detail FROM {ReadingTables.DeadLetterTable} WHERE topic LIKE @p ORDER BY id DESC LIMIT 1";
        AddParameter(newest, "@p", like);
        await using var reader = await newest.ExecuteReaderAsync(token);
        return (n, await reader.ReadAsync(token) ? $"{reader.GetString(0)}: {reader.GetString(1)}" : null);
    }

    private async Task ResolveDevicesAsync(CancellationToken token)
    {
        await using var command = _connection.CreateCommand();
        command.CommandText = $"SELECT serial, id FROM {ReadingTables.DeviceTable} WHERE serial LIKE @p";
        AddParameter(command, "@p", _layout.SerialPrefix + "%");
        int before = _deviceIds.Count;
        await using (var reader = await command.ExecuteReaderAsync(token))
        {
            while (await reader.ReadAsync(token))
            {
                _deviceIds[reader.GetString(0)] = reader.GetInt32(1);
            }
        }

        if (_deviceIds.Count != before)
        {
            await BuildCommandsAsync(token);
        }
    }

    private async Task BuildCommandsAsync(CancellationToken token)
    {
        foreach (var command in _commands)
        {
            await command.DisposeAsync();
        }

        _commands.Clear();
        _sensorByKey.Clear();
        var known = _layout.Sensors.Where(s => _deviceIds.ContainsKey(s.Device.Serial)).ToList();
        foreach (var sensor in known)
        {
            _sensorByKey[(_deviceIds[sensor.Device.Serial], sensor.Channel)] = sensor.Id;
        }

        if (_database.Keys == KeyStrategy.Natural)
        {
            foreach (var chunk in known.Chunk(SensorsPerCommand))
            {
                var command = _connection.CreateCommand();
                command.CommandText = string.Join("\nUNION ALL\n", chunk.Select(s =>
                    string.Create(CultureInfo.InvariantCulture,
                        $"SELECT {s.Id}, count(*), max(ts) FROM {ReadingTables.TableName(s.Device.Kind, _database.Keys, StorageTier.Hot)} " +
                        $"WHERE device_id = {_deviceIds[s.Device.Serial]} AND channel = {s.Channel} AND ts > @w{s.Id}")));
                foreach (var s in chunk)
                {
                    var parameter = command.CreateParameter();
                    parameter.ParameterName = "@w" + s.Id.ToString(CultureInfo.InvariantCulture);
                    parameter.Value = Watermark(s.Id);
                    command.Parameters.Add(parameter);
                }

                await command.PrepareAsync(token);
                _commands.Add(command);
            }
        }
        else
        {
            foreach (var kind in known.Select(s => s.Device.Kind).Distinct())
            {
                var ids = known.Where(s => s.Device.Kind == kind).Select(s => _deviceIds[s.Device.Serial]).Distinct();
                var command = _connection.CreateCommand();
                command.CommandText = new StringBuilder()
                    .Append(CultureInfo.InvariantCulture, $"SELECT device_id, channel, count(*), max(ts) FROM {ReadingTables.TableName(kind, _database.Keys, StorageTier.Hot)} ")
                    .Append(CultureInfo.InvariantCulture, $"WHERE device_id IN ({string.Join(',', ids)}) GROUP BY device_id, channel").ToString();
                _commands.Add(command);
            }
        }
    }

    private void SetWatermarks(DbCommand command)
    {
        foreach (DbParameter parameter in command.Parameters)
        {
            parameter.Value = Watermark(int.Parse(parameter.ParameterName.AsSpan(2), CultureInfo.InvariantCulture));
        }
    }

    /// <summary>The newest ts seen in order for a sensor, as the database compares it (SQLite: microseconds; PostgreSQL: timestamptz).</summary>
    private object Watermark(int sensor) =>
        _database.Provider == StorageProvider.Sqlite ? _watermark[sensor] : DateTime.UnixEpoch.AddTicks(_watermark[sensor] * 10);

    private long Micros(DbDataReader reader, int ordinal) =>
        _database.Provider == StorageProvider.Sqlite ? reader.GetInt64(ordinal) : (reader.GetDateTime(ordinal).Ticks - DateTime.UnixEpoch.Ticks) / 10;

    private static void AddParameter(DbCommand command, string name, object value)
    {
        var parameter = command.CreateParameter();
        parameter.ParameterName = name;
        parameter.Value = value;
        command.Parameters.Add(parameter);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var command in _commands)
        {
            await command.DisposeAsync();
        }

        await _connection.DisposeAsync();
    }
}

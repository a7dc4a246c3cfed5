using Microsoft.Data.Sqlite;
using SQLitePCL;
using Saito.Storage.Keys;
using Saito.Readings;
using Saito.Storage.Schema;

namespace Saito.Storage.Sqlite;

/// <summary>
/// The one connection that writes to the hot file, with its prepared statements: an <c>INSERT OR IGNORE</c> per
/// reading kind (and, for a key already stored, the select and update of <see cref="DuplicateReadings"/>), the
/// dead-letter insert and the registry upsert. Parameters are created once; a row only sets
/// their values. Not thread-safe: <see cref="SqliteReadingStore"/> lets one caller at a time use it.
/// </summary>
internal sealed class SqliteWriter : IDisposable
{
    private const int CancellationCheckInterval = 1024;

    private readonly SqliteConnection _connection;
    private readonly ReadingInsert[] _inserts;
    private readonly SqliteCommand _deadLetter;
    private readonly SqliteParameter[] _deadLetterParameters;
    private readonly SqliteCommand _deviceLookup;
    private readonly SqliteCommand _deviceUpsert;

    public SqliteWriter(SqliteConnection connection, KeyStrategy keys)
    {
        _connection = connection;
        _inserts = new ReadingInsert[ReadingKinds.All.Count];
        foreach (var kind in ReadingKinds.All)
        {
            _inserts[(int)kind] = new ReadingInsert(connection, kind, keys);
        }

        _deadLetter = connection.CreateCommand();
        _deadLetter.CommandText =
            $"INSERT INTO {ReadingTables.DeadLetterTable} (received_at, topic, client_id, reason, detail, payload, payload_bytes) " +
            "VALUES ($received_at, $topic, $client_id, $reason, $detail, $payload, $payload_bytes)";
        _deadLetterParameters =
        [
            _deadLetter.Parameters.Add("$received_at", SqliteType.Integer),
            _deadLetter.Parameters.Add("$topic", SqliteType.Text),
            _deadLetter.Parameters.Add("$client_id", SqliteType.Text),
            _deadLetter.Parameters.Add("$reason", SqliteType.Text),
            _deadLetter.Parameters.Add("$detail", SqliteType.Text),
            _deadLetter.Parameters.Add("$payload", SqliteType.Text),
            _deadLetter.Parameters.Add("$payload_bytes", SqliteType.Blob),
        ];
        _deadLetter.Prepare();

        _deviceLookup = connection.CreateCommand();
        _deviceLookup.CommandText = $"SELECT id, hub FROM {ReadingTables.DeviceTable} WHERE serial = $serial";
        _deviceLookup.Parameters.Add("$serial", SqliteType.Text);
        _deviceLookup.Prepare();

        // A hello records what the device says; what it leaves out keeps its earlier value. (Without a hello a registered
        // device is found by the lookup first, so its hub is only ever set here by a hello, or on insert.)
        _deviceUpsert = connection.CreateCommand();
        _deviceUpsert.CommandText =
            $"""
             INSERT INTO {ReadingTables.DeviceTable} (serial, kind, channels, firmware, hub, first_seen, last_hello)
             VALUES ($serial, $kind, $channels, $firmware, $hub, $now, $last_hello)
             ON CONFLICT (serial) DO UPDATE SET
                 kind = coalesce(excluded.kind, kind),
                 channels = coalesce(excluded.channels, channels),
                 firmware = coalesce(excluded.firmware, firmware),
                 hub = coalesce(excluded.hub, hub),
                 last_hello = coalesce(excluded.last_hello, last_hello)
             RETURNING id, hub
             """;
        _deviceUpsert.Parameters.Add("$serial", SqliteType.Text);
        _deviceUpsert.Parameters.Add("$kind", SqliteType.Text);
        _deviceUpsert.Parameters.Add("$channels", SqliteType.Integer);
        _deviceUpsert.Parameters.Add("$firmware", SqliteType.Text);
        _deviceUpsert.Parameters.Add("$hub", SqliteType.Text);
        _deviceUpsert.Parameters.Add("$now", SqliteType.Integer);
        _deviceUpsert.Parameters.Add("$last_hello", SqliteType.Integer);
        _deviceUpsert.Prepare();
    }

    /// <summary>The batch in one <c>BEGIN IMMEDIATE</c> transaction; rolled back if anything fails or is cancelled.</summary>
    public BatchWriteResult Write(ReadingBatch batch, CancellationToken cancellationToken)
    {
        cancellationToken.ThrowIfCancellationRequested();
        using var transaction = _connection.BeginTransaction(deferred: false);
        var tally = new BatchTally();
        foreach (var kind in ReadingKinds.All)
        {
            var readings = batch.Of(kind);
            if (readings.Count == 0)
            {
                continue;
            }

            var insert = _inserts[(int)kind];
            using var order = ReadingOrder.ByteOrdered(readings, insert.Keys, StorageProvider.Sqlite);
            for (int position = 0; position < order.Count; position++)
            {
                if (position % CancellationCheckInterval == 0)
                {
                    cancellationToken.ThrowIfCancellationRequested();
                }

                int index = order.IndexAt(position);
                if (insert.Execute(readings[index], order.Ids[index]) == 1)
                {
                    tally.Inserted++;
                    continue;
                }

                // Its key is stored already: the same reading again, or values to add, or a conflict (DuplicateReadings).
                var outcome = insert.Reconcile(readings[index], out var conflict);
                if ((outcome & DuplicateOutcome.Added) != 0)
                {
                    tally.Inserted++;
                }
                else if (conflict is not null)
                {
                    tally.Conflicted++;
                }

                if (conflict is not null)
                {
                    (tally.Conflicts ??= []).Add(conflict);
                }
            }

            tally.Sent += readings.Count;
        }

        var conflicts = tally.Conflicts;
        int deadLetterCount = batch.DeadLetters.Count + (conflicts?.Count ?? 0);
        if (deadLetterCount > 0)
        {
            _deadLetter.Transaction = transaction;
            var p = _deadLetterParameters;
            // The batch's own list is left as it is: a batch that fails is written again, and would add them twice.
            var deadLetters = conflicts is null ? batch.DeadLetters : [.. batch.DeadLetters, .. conflicts];
            for (int i = 0; i < deadLetters.Count; i++)
            {
                var letter = deadLetters[i];
                p[0].Value = ReadingTime.ToUnixMicroseconds(letter.ReceivedAt);
                p[1].Value = letter.Topic;
                p[2].Value = (object?)letter.ClientId ?? DBNull.Value;
                p[3].Value = letter.Reason;
                p[4].Value = letter.Detail;
                p[5].Value = letter.Payload;
                p[6].Value = (object?)letter.PayloadBytes ?? DBNull.Value;
                _deadLetter.ExecuteNonQuery();
            }
        }

        cancellationToken.ThrowIfCancellationRequested();
        transaction.Commit();
        return tally.Result(deadLetterCount);
    }

    /// <summary>The devices' ids and hubs, registering those that are new, in one transaction (all or nothing).</summary>
    public Dictionary<string, RegisteredDevice> RegisterDevices(IReadOnlyList<DeviceRegistration> devices, DateTime now)
    {
        var registered = new Dictionary<string, RegisteredDevice>(devices.Count, StringComparer.Ordinal);
        using var transaction = _connection.BeginTransaction(deferred: false);
        _deviceLookup.Transaction = transaction;
        _deviceUpsert.Transaction = transaction;
        foreach (var device in devices)
        {
            registered[device.Serial] = RegisterDevice(device, now);
        }

        transaction.Commit();
        return registered;
    }

    private RegisteredDevice RegisterDevice(DeviceRegistration device, DateTime now)
    {
        var announcement = device.Announcement;
        if (announcement is null)
        {
            _deviceLookup.Parameters[0].Value = device.Serial;
            using var known = _deviceLookup.ExecuteReader();
            if (known.Read())
            {
                return Registered(known);
            }
        }

        var p = _deviceUpsert.Parameters;
        p[0].Value = device.Serial;
        p[1].Value = (object?)announcement?.Kind ?? DBNull.Value;
        p[2].Value = (object?)announcement?.Channels ?? DBNull.Value;
        p[3].Value = (object?)announcement?.Firmware ?? DBNull.Value;
        p[4].Value = (object?)device.NewHub ?? DBNull.Value;
        long micros = ReadingTime.ToUnixMicroseconds(ReadingTime.Truncate(now));
        p[5].Value = micros;
        p[6].Value = announcement is null ? DBNull.Value : micros;
        using var row = _deviceUpsert.ExecuteReader();
        return row.Read() ? Registered(row) : throw new InvalidOperationException($"Device '{device.Serial}' could not be registered: SQLite returned no row.");
    }

    private static RegisteredDevice Registered(SqliteDataReader row) =>
        new(checked((int)row.GetInt64(0)), row.IsDBNull(1) ? null : row.GetString(1));

    public void Dispose()
    {
        foreach (var insert in _inserts)
        {
            insert.Dispose();
        }

        _deadLetter.Dispose();
        _deviceLookup.Dispose();
        _deviceUpsert.Dispose();
        _connection.Dispose();
    }

    /// <summary>
    /// The prepared <c>INSERT OR IGNORE</c> of one kind into its hot table, driven through SQLite's own API
    /// (<c>sqlite3_bind_*</c>, <c>sqlite3_step</c>, <c>sqlite3_reset</c>) on the writer's connection: the same
    /// prepared statement ADO.NET would use, without boxing eight parameter values per row. It runs inside the
    /// connection's open transaction like any other statement on it.
    /// </summary>
    private sealed class ReadingInsert : IDisposable
    {
        private readonly sqlite3 _db;
        private readonly sqlite3_stmt _statement;
        private readonly bool _hasId;
        private readonly int _valueCount;
        private readonly bool _valuesNullable;

        // SQLite copies a bound blob (SQLITE_TRANSIENT), so one buffer serves every row.
        private readonly byte[] _idBytes = new byte[16];

        // The insert's and the connection's pointers, held for the statement's life (SqliteNative: every row's calls).
        private readonly SqliteNative.Lease _statementLease;
        private readonly SqliteNative.Lease _dbLease;

        // The duplicate path (a key already stored): the stored row's values by its natural key, and their update.
        private readonly sqlite3_stmt _select;
        private readonly sqlite3_stmt _update;

        public ReadingInsert(SqliteConnection connection, ReadingKind kind, KeyStrategy keys)
        {
            Keys = keys;
            _valuesNullable = kind == ReadingKind.Biosensor;
            _hasId = keys != KeyStrategy.Natural;
            _valueCount = ReadingTables.ValueColumns(kind).Count;
            _db = connection.Handle ?? throw new InvalidOperationException("The SQLite writer connection is not open.");
            var columns = ReadingTables.Columns(kind, keys);
            string sql =
                $"INSERT OR IGNORE INTO {ReadingTables.TableName(kind, keys, StorageTier.Hot)} ({string.Join(", ", columns)}) " +
                $"VALUES ({string.Join(", ", columns.Select(_ => "?"))})";
            int rc = raw.sqlite3_prepare_v2(_db, sql, out _statement);
            SqliteException.ThrowExceptionForRC(rc, _db);
            string table = ReadingTables.TableName(kind, keys, StorageTier.Hot);
            var values = ReadingTables.ValueColumns(kind);
            const string key = "device_id = ? AND channel = ? AND ts = ?";
            SqliteException.ThrowExceptionForRC(raw.sqlite3_prepare_v2(_db, $"SELECT {string.Join(", ", values)} FROM {table} WHERE {key}", out _select), _db);
            SqliteException.ThrowExceptionForRC(
                raw.sqlite3_prepare_v2(_db, $"UPDATE {table} SET {string.Join(", ", values.Select(v => v + " = ?"))} WHERE {key}", out _update), _db);
            _statementLease = new SqliteNative.Lease(_statement);
            _dbLease = new SqliteNative.Lease(_db);
        }

        public KeyStrategy Keys { get; }

        /// <summary>1 when the row went in, 0 when a row with its key was already there.</summary>
        public int Execute(in Reading reading, Guid id)
        {
            var statement = _statementLease.Pointer;
            int column = 1;
            if (_hasId)
            {
                id.TryWriteBytes(_idBytes, bigEndian: true, out _);
                Bind(SqliteNative.BindBlob(statement, column++, _idBytes));
            }

            Bind(SqliteNative.BindInt64(statement, column++, reading.DeviceId));
            Bind(SqliteNative.BindInt64(statement, column++, reading.Channel));
            Bind(SqliteNative.BindInt64(statement, column++, ReadingTime.ToUnixMicroseconds(reading.Timestamp)));
            for (int i = 0; i < _valueCount; i++)
            {
                double? value = ReadingTables.Value(reading, i);
                if (value.HasValue)
                {
                    Bind(SqliteNative.BindDouble(statement, column++, value.GetValueOrDefault()));
                }
                else if (_valuesNullable)
                {
                    Bind(SqliteNative.BindNull(statement, column++));
                }
                else
                {
                    // INSERT OR IGNORE would skip the row silently (and count it a duplicate): refuse it instead.
                    throw MissingValue(reading, i);
                }
            }

            Bind(SqliteNative.BindInt64(statement, column, ReadingTime.ToUnixMicroseconds(reading.ReceivedAt)));
            int rc = SqliteNative.Step(statement);
            if (rc != raw.SQLITE_DONE)
            {
                // Take the message before the reset: it is the statement's (a constraint, a trigger's RAISE...).
                var error = new SqliteException(raw.sqlite3_errmsg(_db).utf8_to_string(), rc, raw.sqlite3_extended_errcode(_db));
                SqliteNative.Reset(statement);
                throw error;
            }

            SqliteNative.Reset(statement);
            return SqliteNative.Changes(_dbLease.Pointer);
        }

        /// <summary>
        /// A reading whose key <see cref="Execute"/> found stored: compared with the stored row, whose missing values it
        /// adds (<see cref="DuplicateReadings"/>); <paramref name="conflict"/> is the dead letter of a value that differs.
        /// </summary>
        public DuplicateOutcome Reconcile(in Reading reading, out DeadLetter? conflict)
        {
            var stored = new double?[_valueCount];
            BindKey(_select, 1, reading);
            int rc = raw.sqlite3_step(_select);
            try
            {
                if (rc != raw.SQLITE_ROW)
                {
                    Step(rc, raw.SQLITE_DONE);
                    // The row that refused the insert is not found by its natural key: a GUID table whose row has this id
                    // under another key. Nothing is written over it.
                    conflict = null;
                    return DuplicateOutcome.Same;
                }

                for (int i = 0; i < _valueCount; i++)
                {
                    stored[i] = raw.sqlite3_column_type(_select, i) == raw.SQLITE_NULL ? null : raw.sqlite3_column_double(_select, i);
                }
            }
            finally
            {
                raw.sqlite3_reset(_select);
            }

            var outcome = DuplicateReadings.Compare(reading, stored, out conflict);
            if ((outcome & DuplicateOutcome.Added) != 0)
            {
                for (int i = 0; i < _valueCount; i++)
                {
                    Bind(stored[i] is { } value ? raw.sqlite3_bind_double(_update, i + 1, value) : raw.sqlite3_bind_null(_update, i + 1));
                }

                BindKey(_update, _valueCount + 1, reading);
                rc = raw.sqlite3_step(_update);
                try
                {
                    Step(rc, raw.SQLITE_DONE);
                }
                finally
                {
                    raw.sqlite3_reset(_update);
                }
            }

            return outcome;
        }

        private int BindKey(sqlite3_stmt statement, int column, in Reading reading)
        {
            Bind(raw.sqlite3_bind_int64(statement, column++, reading.DeviceId));
            Bind(raw.sqlite3_bind_int64(statement, column++, reading.Channel));
            Bind(raw.sqlite3_bind_int64(statement, column++, ReadingTime.ToUnixMicroseconds(reading.Timestamp)));
            return column;
        }

        private void Step(int rc, int expected)
        {
            if (rc != expected)
            {
                throw new SqliteException(raw.sqlite3_errmsg(_db).utf8_to_string(), rc, raw.sqlite3_extended_errcode(_db));
            }
        }

        public void Dispose()
        {
            _statementLease.Dispose();
            _dbLease.Dispose();
            _statement.Dispose();
            _select.Dispose();
            _update.Dispose();
        }

        private void Bind(int rc)
        {
            if (rc != raw.SQLITE_OK)
            {
                SqliteException.ThrowExceptionForRC(rc, _db);
            }
        }

        private static ArgumentException MissingValue(in Reading reading, int index) => new(
            $"A {ReadingKinds.Name(reading.Kind)} reading needs {ReadingTables.ValueColumns(reading.Kind)[index]} " +
            $"(device {reading.DeviceId}, channel {reading.Channel}, {reading.Timestamp:O}); the batch is not written.",
            nameof(reading));
    }
}

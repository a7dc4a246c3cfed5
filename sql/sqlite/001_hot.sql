-- Saito: SQLite schema of the hot tier, the file saito-hot.db in Storage:HotPath (fast storage).
-- GENERATED from src/Saito.Storage/Sqlite/SqliteSchema.cs: do not edit by hand. To regenerate:
--   SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
-- Saito runs the same statements on start for whatever is missing; this script is for a DBA who
-- creates the files beforehand:  sqlite3 data/hot/saito-hot.db < sql/sqlite/001_hot.sql
-- Times are INTEGER microseconds since 1970-01-01 UTC; the v_* views show them as ISO-8601 text.
-- Every key strategy's tables exist; Storage:KeyStrategy chooses the ones Saito writes.
-- Saito sets per connection: PRAGMA synchronous = FULL (or NORMAL, Storage:Sqlite:Synchronous), busy_timeout,
-- cache_size, wal_autocheckpoint = 100000 (Storage:Sqlite:WalAutoCheckpointPages).

PRAGMA journal_mode = WAL;

-- Registered devices: the readings' device_id. A hello message updates kind, channels, firmware, hub and last_hello; ingestion sets last_seen every few seconds; staff set retired_at through the registry.
CREATE TABLE IF NOT EXISTS device (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    serial     TEXT    NOT NULL UNIQUE,
    kind       TEXT,
    channels   INTEGER,
    firmware   TEXT,
    hub        TEXT,
    first_seen INTEGER NOT NULL,
    last_hello INTEGER,
    last_seen  INTEGER,
    retired_at INTEGER
) STRICT;

-- Messages (or single readings) Saito could not store as readings, with the reason. Newest: ORDER BY id DESC.
-- payload is the rejected bytes as text, exactly, when they are UTF-8 without NUL; otherwise a 4096-character preview,
-- and payload_bytes holds the exact bytes (NULL when payload is exact). A table made by an older Saito has no
-- payload_bytes; Saito adds it on start: ALTER TABLE dead_letter ADD COLUMN payload_bytes BLOB
CREATE TABLE IF NOT EXISTS dead_letter (
    id            INTEGER PRIMARY KEY,
    received_at   INTEGER NOT NULL,
    topic         TEXT    NOT NULL,
    client_id     TEXT,
    reason        TEXT    NOT NULL,
    detail        TEXT    NOT NULL,
    payload       TEXT    NOT NULL,
    payload_bytes BLOB
) STRICT;

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS reading_biosensor (
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    heart_rate  REAL,
    systolic    REAL,
    diastolic   REAL,
    skin_temp   REAL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, channel, ts)
) WITHOUT ROWID, STRICT;

-- Location readings (x, y, z in metres), hot tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS reading_location (
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, channel, ts)
) WITHOUT ROWID, STRICT;

-- Pressure readings (kPa), hot tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS reading_pressure (
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, channel, ts)
) WITHOUT ROWID, STRICT;

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS reading_biosensor_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    heart_rate  REAL,
    systolic    REAL,
    diastolic   REAL,
    skin_temp   REAL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_biosensor_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_biosensor_guid_natural ON reading_biosensor_guid (device_id, channel, ts);

-- Location readings (x, y, z in metres), hot tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS reading_location_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_location_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_location_guid_natural ON reading_location_guid (device_id, channel, ts);

-- Pressure readings (kPa), hot tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS reading_pressure_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_pressure_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_pressure_guid_natural ON reading_pressure_guid (device_id, channel, ts);

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS reading_biosensor_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    heart_rate  REAL,
    systolic    REAL,
    diastolic   REAL,
    skin_temp   REAL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_biosensor_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_biosensor_seqguid_natural ON reading_biosensor_seqguid (device_id, channel, ts);

-- Location readings (x, y, z in metres), hot tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS reading_location_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_location_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_location_seqguid_natural ON reading_location_seqguid (device_id, channel, ts);

-- Pressure readings (kPa), hot tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS reading_pressure_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of reading_pressure_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_reading_pressure_seqguid_natural ON reading_pressure_seqguid (device_id, channel, ts);

-- The hot biosensor readings for a person: device serial, times as ISO-8601 UTC text (milliseconds), every key strategy's table.
--   sqlite3 data/hot/saito-hot.db "SELECT * FROM v_biosensor ORDER BY ts DESC LIMIT 5"
CREATE VIEW IF NOT EXISTS v_biosensor AS
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.heart_rate, r.systolic, r.diastolic, r.skin_temp, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'natural' AS key_strategy
  FROM reading_biosensor AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.heart_rate, r.systolic, r.diastolic, r.skin_temp, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'guid' AS key_strategy
  FROM reading_biosensor_guid AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.heart_rate, r.systolic, r.diastolic, r.skin_temp, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'sequential-guid' AS key_strategy
  FROM reading_biosensor_seqguid AS r LEFT JOIN device AS d ON d.id = r.device_id;

-- The hot location readings for a person: device serial, times as ISO-8601 UTC text (milliseconds), every key strategy's table.
--   sqlite3 data/hot/saito-hot.db "SELECT * FROM v_location ORDER BY ts DESC LIMIT 5"
CREATE VIEW IF NOT EXISTS v_location AS
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.x, r.y, r.z, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'natural' AS key_strategy
  FROM reading_location AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.x, r.y, r.z, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'guid' AS key_strategy
  FROM reading_location_guid AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.x, r.y, r.z, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'sequential-guid' AS key_strategy
  FROM reading_location_seqguid AS r LEFT JOIN device AS d ON d.id = r.device_id;

-- The hot pressure readings for a person: device serial, times as ISO-8601 UTC text (milliseconds), every key strategy's table.
--   sqlite3 data/hot/saito-hot.db "SELECT * FROM v_pressure ORDER BY ts DESC LIMIT 5"
CREATE VIEW IF NOT EXISTS v_pressure AS
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.kpa, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'natural' AS key_strategy
  FROM reading_pressure AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.kpa, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'guid' AS key_strategy
  FROM reading_pressure_guid AS r LEFT JOIN device AS d ON d.id = r.device_id
UNION ALL
SELECT d.serial, r.device_id, r.channel, strftime('%Y-%m-%dT%H:%M:%fZ', (r.ts / 1000) / 1000.0, 'unixepoch') AS ts, r.kpa, strftime('%Y-%m-%dT%H:%M:%fZ', (r.received_at / 1000) / 1000.0, 'unixepoch') AS received_at, 'sequential-guid' AS key_strategy
  FROM reading_pressure_seqguid AS r LEFT JOIN device AS d ON d.id = r.device_id;

-- The device registry with its times as ISO-8601 UTC text.
CREATE VIEW IF NOT EXISTS v_device AS
SELECT id, serial, kind, channels, firmware, hub, strftime('%Y-%m-%dT%H:%M:%fZ', (first_seen / 1000) / 1000.0, 'unixepoch') AS first_seen, strftime('%Y-%m-%dT%H:%M:%fZ', (last_hello / 1000) / 1000.0, 'unixepoch') AS last_hello
  FROM device;

-- Dead letters with received_at as ISO-8601 UTC text.
CREATE VIEW IF NOT EXISTS v_dead_letter AS
SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', (received_at / 1000) / 1000.0, 'unixepoch') AS received_at, topic, client_id, reason, detail, payload
  FROM dead_letter;

-- Saito: SQLite schema of the archive tier, the file saito-archive.db in Storage:ArchivePath (slow storage).
-- GENERATED from src/Saito.Storage/Sqlite/SqliteSchema.cs: do not edit by hand. To regenerate:
--   SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
-- Saito runs the same statements on start for whatever is missing; this script is for a DBA who
-- creates the files beforehand:  sqlite3 data/archive/saito-archive.db < sql/sqlite/002_archive.sql
-- The archive tables have the shapes of the hot tables in saito-hot.db; the archiver moves old readings here.

PRAGMA journal_mode = WAL;

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS archive_biosensor (
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

-- Location readings (x, y, z in metres), archive tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS archive_location (
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, channel, ts)
) WITHOUT ROWID, STRICT;

-- Pressure readings (kPa), archive tier, natural key: the clustered primary key (device_id, channel, ts).
CREATE TABLE IF NOT EXISTS archive_pressure (
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (device_id, channel, ts)
) WITHOUT ROWID, STRICT;

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS archive_biosensor_guid (
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

-- The natural key (device_id, channel, ts) of archive_biosensor_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_biosensor_guid_natural ON archive_biosensor_guid (device_id, channel, ts);

-- Location readings (x, y, z in metres), archive tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS archive_location_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of archive_location_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_location_guid_natural ON archive_location_guid (device_id, channel, ts);

-- Pressure readings (kPa), archive tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS archive_pressure_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of archive_pressure_guid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_pressure_guid_natural ON archive_pressure_guid (device_id, channel, ts);

-- Biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS archive_biosensor_seqguid (
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

-- The natural key (device_id, channel, ts) of archive_biosensor_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_biosensor_seqguid_natural ON archive_biosensor_seqguid (device_id, channel, ts);

-- Location readings (x, y, z in metres), archive tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS archive_location_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    x           REAL    NOT NULL,
    y           REAL    NOT NULL,
    z           REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of archive_location_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_location_seqguid_natural ON archive_location_seqguid (device_id, channel, ts);

-- Pressure readings (kPa), archive tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS archive_pressure_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

-- The natural key (device_id, channel, ts) of archive_pressure_seqguid, for the readings queries (a device's time range, newest reading, cross-tier de-duplication);
-- created on start when missing, so databases made by an older Saito get it too.
CREATE INDEX IF NOT EXISTS ix_archive_pressure_seqguid_natural ON archive_pressure_seqguid (device_id, channel, ts);

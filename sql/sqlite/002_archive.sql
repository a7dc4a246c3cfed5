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

-- Pressure readings (kPa), archive tier, key: a GUID derived from the reading (version 5), 16 bytes in RFC order, scattered.
CREATE TABLE IF NOT EXISTS archive_pressure_guid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

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

-- Pressure readings (kPa), archive tier, key: a GUID derived from the reading with the time in its first bytes, so BLOB order is time order.
CREATE TABLE IF NOT EXISTS archive_pressure_seqguid (
    id          BLOB    NOT NULL PRIMARY KEY CHECK (length(id) = 16),
    device_id   INTEGER NOT NULL,
    channel     INTEGER NOT NULL,
    ts          INTEGER NOT NULL,
    kpa         REAL    NOT NULL,
    received_at INTEGER NOT NULL
) WITHOUT ROWID, STRICT;

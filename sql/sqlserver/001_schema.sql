-- Saito: SQL Server schema (SQL Server 2016 SP1 or later, Azure SQL Database, Azure SQL Managed Instance).
--
-- GENERATED from src/Saito.Storage/SqlServer/SqlServerSchema.cs: do not edit by hand. Saito runs these
-- same statements on start (Storage:Provider=sqlserver) and creates only what is missing, so applying
-- this script first is optional: it is for DBAs who create schemas themselves. Every statement is
-- guarded (the views are CREATE OR ALTER) and can be run again:
--   sqlcmd -b -d saito -i sql/sqlserver/001_schema.sql
-- Regenerate after changing the C#:
--   SAITO_REGENERATE_SQL=1 dotnet test tests/Saito.Storage.Tests --filter FullyQualifiedName~SqlScriptTests
--
-- Tables (names: src/Saito.Storage/ReadingTables.cs): device and dead_letter, then one reading table
-- per kind, key strategy and tier, then the views v_biosensor, v_location and v_pressure:
--   reading_<kind>[_guid|_seqguid]  hot tier, written by Saito
--   archive_<kind>[_guid|_seqguid]  archive tier, written by the archiver
-- Every key strategy's tables exist, so switching Storage:KeyStrategy (natural, guid, sequential-guid)
-- needs no migration; Saito writes the ones it is configured for. Times are UTC in datetime2(6)
-- (microseconds, as Saito holds them), values float, GUID keys uniqueidentifier.
--
-- Duplicates: every reading table's clustered primary key is WITH (IGNORE_DUP_KEY = ON). Saito
-- bulk-copies batches straight into the hot tables, and a reading that is already stored (an MQTT
-- redelivery) is dropped by the engine with the warning "Duplicate key was ignored." (3604) instead of
-- failing the batch. Keep the option if you create these tables another way: Saito checks for it on
-- start and refuses to run without it.
--
-- Filegroups: device, dead_letter and the reading_* tables are created ON Storage:SqlServer:HotFilegroup,
-- the archive_* tables ON Storage:SqlServer:ArchiveFilegroup (PRIMARY when unset, as below). When
-- *FilePath is set too, Saito adds a missing filegroup and its data file <folder>/<database>_<filegroup>.ndf
-- (the folder must exist on the database server) with the statements of the commented example that
-- follows, then creates the tables ON that filegroup. The example is for a database named saito with
-- HotFilegroup=saito_hot, HotFilePath=/var/opt/mssql/data/fast, ArchiveFilegroup=saito_archive and
-- ArchiveFilePath=/var/opt/mssql/data/slow. To place the tables yourself, run such statements and replace
-- ON [PRIMARY] below with your hot filegroup (device, dead_letter, reading_*) and archive filegroup (archive_*).

-- filegroup [saito_hot]
-- IF NOT EXISTS (SELECT 1 FROM sys.filegroups WHERE [name] = N'saito_hot')
--     ALTER DATABASE CURRENT ADD FILEGROUP [saito_hot];
-- GO

-- file /var/opt/mssql/data/fast/saito_saito_hot.ndf
-- IF NOT EXISTS (SELECT 1 FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id WHERE g.[name] = N'saito_hot')
--     ALTER DATABASE CURRENT ADD FILE (NAME = N'saito_saito_hot', FILENAME = N'/var/opt/mssql/data/fast/saito_saito_hot.ndf') TO FILEGROUP [saito_hot];
-- GO

-- filegroup [saito_archive]
-- IF NOT EXISTS (SELECT 1 FROM sys.filegroups WHERE [name] = N'saito_archive')
--     ALTER DATABASE CURRENT ADD FILEGROUP [saito_archive];
-- GO

-- file /var/opt/mssql/data/slow/saito_saito_archive.ndf
-- IF NOT EXISTS (SELECT 1 FROM sys.database_files AS f JOIN sys.filegroups AS g ON g.data_space_id = f.data_space_id WHERE g.[name] = N'saito_archive')
--     ALTER DATABASE CURRENT ADD FILE (NAME = N'saito_saito_archive', FILENAME = N'/var/opt/mssql/data/slow/saito_saito_archive.ndf') TO FILEGROUP [saito_archive];
-- GO

-- device: registered devices (the readings' device_id); a hello message updates kind, channels, firmware, hub, last_hello; ingestion sets last_seen; staff set retired_at.
IF OBJECT_ID(N'[dbo].[device]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[device] (
        [id] int IDENTITY(1, 1) NOT NULL,
        [serial] nvarchar(128) COLLATE Latin1_General_100_BIN2 NOT NULL,
        [kind] nvarchar(32) NULL,
        [channels] int NULL,
        [firmware] nvarchar(64) NULL,
        [hub] nvarchar(128) NULL,
        [first_seen] datetime2(6) NOT NULL CONSTRAINT [df_device_first_seen] DEFAULT (SYSUTCDATETIME()),
        [last_hello] datetime2(6) NULL,
        [last_seen] datetime2(6) NULL,
        [retired_at] datetime2(6) NULL,
        CONSTRAINT [pk_device] PRIMARY KEY CLUSTERED ([id]),
        CONSTRAINT [uq_device_serial] UNIQUE ([serial])
    ) ON [PRIMARY];
END;
IF COL_LENGTH(N'[dbo].[device]', N'last_seen') IS NULL
    ALTER TABLE [dbo].[device] ADD [last_seen] datetime2(6) NULL;
IF COL_LENGTH(N'[dbo].[device]', N'retired_at') IS NULL
    ALTER TABLE [dbo].[device] ADD [retired_at] datetime2(6) NULL;
GO

-- dead_letter: messages (or single readings) Saito could not store as readings, with the reason; newest: ORDER BY id DESC.
IF OBJECT_ID(N'[dbo].[dead_letter]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[dead_letter] (
        [id] bigint IDENTITY(1, 1) NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        [topic] nvarchar(1024) NOT NULL,
        [client_id] nvarchar(256) NULL,
        [reason] nvarchar(64) NOT NULL,
        [detail] nvarchar(1024) NOT NULL,
        [payload] nvarchar(max) NOT NULL,
        [payload_bytes] varbinary(max) NULL,
        CONSTRAINT [pk_dead_letter] PRIMARY KEY CLUSTERED ([id])
    ) ON [PRIMARY];
END;
IF COL_LENGTH(N'[dbo].[dead_letter]', N'payload_bytes') IS NULL
    ALTER TABLE [dbo].[dead_letter] ADD [payload_bytes] varbinary(max) NULL;
GO

-- reading_biosensor: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[reading_biosensor]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_biosensor] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_biosensor] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- reading_location: location readings (x, y, z in metres), hot tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[reading_location]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_location] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_location] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- reading_pressure: pressure readings (kPa), hot tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[reading_pressure]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_pressure] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_pressure] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- reading_biosensor_guid: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_biosensor_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_biosensor_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_biosensor_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_biosensor_guid]') AND [name] = N'ix_reading_biosensor_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_biosensor_guid_natural] ON [dbo].[reading_biosensor_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- reading_location_guid: location readings (x, y, z in metres), hot tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_location_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_location_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_location_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_location_guid]') AND [name] = N'ix_reading_location_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_location_guid_natural] ON [dbo].[reading_location_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- reading_pressure_guid: pressure readings (kPa), hot tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_pressure_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_pressure_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_pressure_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_pressure_guid]') AND [name] = N'ix_reading_pressure_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_pressure_guid_natural] ON [dbo].[reading_pressure_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- reading_biosensor_seqguid: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), hot tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_biosensor_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_biosensor_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_biosensor_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_biosensor_seqguid]') AND [name] = N'ix_reading_biosensor_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_biosensor_seqguid_natural] ON [dbo].[reading_biosensor_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- reading_location_seqguid: location readings (x, y, z in metres), hot tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_location_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_location_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_location_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_location_seqguid]') AND [name] = N'ix_reading_location_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_location_seqguid_natural] ON [dbo].[reading_location_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- reading_pressure_seqguid: pressure readings (kPa), hot tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[reading_pressure_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[reading_pressure_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_reading_pressure_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[reading_pressure_seqguid]') AND [name] = N'ix_reading_pressure_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_reading_pressure_seqguid_natural] ON [dbo].[reading_pressure_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_biosensor: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[archive_biosensor]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_biosensor] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_biosensor] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- archive_location: location readings (x, y, z in metres), archive tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[archive_location]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_location] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_location] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- archive_pressure: pressure readings (kPa), archive tier, natural key: clustered primary key (device_id, channel, ts).
IF OBJECT_ID(N'[dbo].[archive_pressure]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_pressure] (
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_pressure] PRIMARY KEY CLUSTERED ([device_id], [channel], [ts])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
GO

-- archive_biosensor_guid: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_biosensor_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_biosensor_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_biosensor_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_biosensor_guid]') AND [name] = N'ix_archive_biosensor_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_biosensor_guid_natural] ON [dbo].[archive_biosensor_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_location_guid: location readings (x, y, z in metres), archive tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_location_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_location_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_location_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_location_guid]') AND [name] = N'ix_archive_location_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_location_guid_natural] ON [dbo].[archive_location_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_pressure_guid: pressure readings (kPa), archive tier, guid key: a name-based GUID of the reading (scattered) as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_pressure_guid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_pressure_guid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_pressure_guid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_pressure_guid]') AND [name] = N'ix_archive_pressure_guid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_pressure_guid_natural] ON [dbo].[archive_pressure_guid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_biosensor_seqguid: biosensor readings (heart rate, systolic, diastolic, skin temperature; any may be NULL), archive tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_biosensor_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_biosensor_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [heart_rate] float NULL,
        [systolic] float NULL,
        [diastolic] float NULL,
        [skin_temp] float NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_biosensor_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_biosensor_seqguid]') AND [name] = N'ix_archive_biosensor_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_biosensor_seqguid_natural] ON [dbo].[archive_biosensor_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_location_seqguid: location readings (x, y, z in metres), archive tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_location_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_location_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [x] float NOT NULL,
        [y] float NOT NULL,
        [z] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_location_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_location_seqguid]') AND [name] = N'ix_archive_location_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_location_seqguid_natural] ON [dbo].[archive_location_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- archive_pressure_seqguid: pressure readings (kPa), archive tier, sequential-guid key: a GUID of the reading, time first in uniqueidentifier sort order, as clustered primary key.
IF OBJECT_ID(N'[dbo].[archive_pressure_seqguid]', N'U') IS NULL
BEGIN
    CREATE TABLE [dbo].[archive_pressure_seqguid] (
        [id] uniqueidentifier NOT NULL,
        [device_id] int NOT NULL,
        [channel] int NOT NULL,
        [ts] datetime2(6) NOT NULL,
        [kpa] float NOT NULL,
        [received_at] datetime2(6) NOT NULL,
        CONSTRAINT [pk_archive_pressure_seqguid] PRIMARY KEY CLUSTERED ([id])
            WITH (IGNORE_DUP_KEY = ON)
    ) ON [PRIMARY];
END;
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE [object_id] = OBJECT_ID(N'[dbo].[archive_pressure_seqguid]') AND [name] = N'ix_archive_pressure_seqguid_natural')
    CREATE NONCLUSTERED INDEX [ix_archive_pressure_seqguid_natural] ON [dbo].[archive_pressure_seqguid] ([device_id], [channel], [ts]) ON [PRIMARY];
GO

-- v_biosensor: the hot biosensor readings of every key strategy's table, with the device's serial, for a person:
--   SELECT TOP (5) * FROM dbo.v_biosensor ORDER BY ts DESC;
CREATE OR ALTER VIEW [dbo].[v_biosensor] AS
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[heart_rate], r.[systolic], r.[diastolic], r.[skin_temp], r.[received_at], N'natural' AS [key_strategy]
  FROM [dbo].[reading_biosensor] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[heart_rate], r.[systolic], r.[diastolic], r.[skin_temp], r.[received_at], N'guid' AS [key_strategy]
  FROM [dbo].[reading_biosensor_guid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[heart_rate], r.[systolic], r.[diastolic], r.[skin_temp], r.[received_at], N'sequential-guid' AS [key_strategy]
  FROM [dbo].[reading_biosensor_seqguid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id];
GO

-- v_location: the hot location readings of every key strategy's table, with the device's serial, for a person:
--   SELECT TOP (5) * FROM dbo.v_location ORDER BY ts DESC;
CREATE OR ALTER VIEW [dbo].[v_location] AS
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[x], r.[y], r.[z], r.[received_at], N'natural' AS [key_strategy]
  FROM [dbo].[reading_location] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[x], r.[y], r.[z], r.[received_at], N'guid' AS [key_strategy]
  FROM [dbo].[reading_location_guid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[x], r.[y], r.[z], r.[received_at], N'sequential-guid' AS [key_strategy]
  FROM [dbo].[reading_location_seqguid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id];
GO

-- v_pressure: the hot pressure readings of every key strategy's table, with the device's serial, for a person:
--   SELECT TOP (5) * FROM dbo.v_pressure ORDER BY ts DESC;
CREATE OR ALTER VIEW [dbo].[v_pressure] AS
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'natural' AS [key_strategy]
  FROM [dbo].[reading_pressure] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'guid' AS [key_strategy]
  FROM [dbo].[reading_pressure_guid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id]
UNION ALL
SELECT d.[serial], r.[device_id], r.[channel], r.[ts], r.[kpa], r.[received_at], N'sequential-guid' AS [key_strategy]
  FROM [dbo].[reading_pressure_seqguid] AS r LEFT JOIN [dbo].[device] AS d ON d.[id] = r.[device_id];
GO

-- Run by compose.sqlserver.yaml's sqlserver-init as sa, on every `up`; every step is skipped when already done.
-- $(SAITO_DB_PASSWORD) is a sqlcmd variable: sqlcmd takes it from the environment variable of that name.
-- Saito creates its tables itself on first start (sql/sqlserver/ has the same DDL for DBAs who prefer to).
-- A new database starts in the SIMPLE recovery model: its log is reused after each checkpoint instead of growing
-- until a log backup, which nothing here schedules. Nightly full backups (docs/operations.md) then bound what a lost
-- disk costs; for point-in-time restores, switch to FULL and schedule log backups.
IF DB_ID(N'saito') IS NULL
BEGIN
    CREATE DATABASE saito;
    ALTER DATABASE saito SET RECOVERY SIMPLE;
END
GO
-- The tiers (docs/operations.md): the hot tables on SAITO_HOT, a file on the fast disk (beside the system databases
-- under /var/opt/mssql); the archive tables on SAITO_ARCHIVE, a file on the slow disk (/var/opt/mssql-archive).
-- Saito's Storage:SqlServer:HotFilegroup / ArchiveFilegroup name them.
IF NOT EXISTS (SELECT 1 FROM saito.sys.filegroups WHERE name = N'SAITO_HOT')
    ALTER DATABASE saito ADD FILEGROUP SAITO_HOT;
GO
IF NOT EXISTS (SELECT 1 FROM saito.sys.database_files WHERE name = N'saito_hot')
    ALTER DATABASE saito ADD FILE (NAME = N'saito_hot', FILENAME = N'/var/opt/mssql/data/saito_hot.ndf', SIZE = 1GB, FILEGROWTH = 1GB) TO FILEGROUP SAITO_HOT;
GO
IF NOT EXISTS (SELECT 1 FROM saito.sys.filegroups WHERE name = N'SAITO_ARCHIVE')
    ALTER DATABASE saito ADD FILEGROUP SAITO_ARCHIVE;
GO
IF NOT EXISTS (SELECT 1 FROM saito.sys.database_files WHERE name = N'saito_archive')
    ALTER DATABASE saito ADD FILE (NAME = N'saito_archive', FILENAME = N'/var/opt/mssql-archive/saito_archive.ndf', SIZE = 1GB, FILEGROWTH = 1GB) TO FILEGROUP SAITO_ARCHIVE;
GO
-- Saito's login: owner of its database and nothing else. Running this again after changing SAITO_DB_PASSWORD sets
-- the new password (restart the Saito containers so they connect with it).
IF SUSER_ID(N'saito') IS NULL
    CREATE LOGIN saito WITH PASSWORD = N'$(SAITO_DB_PASSWORD)', DEFAULT_DATABASE = saito;
ELSE
    ALTER LOGIN saito WITH PASSWORD = N'$(SAITO_DB_PASSWORD)';
GO
USE saito;
IF USER_ID(N'saito') IS NULL
    CREATE USER saito FOR LOGIN saito;
ALTER ROLE db_owner ADD MEMBER saito;
GO

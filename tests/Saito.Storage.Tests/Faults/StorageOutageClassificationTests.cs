using Microsoft.Data.Sqlite;
using Microsoft.Extensions.Logging.Abstractions;
using Npgsql;
using Saito.Storage.Keys;
using Saito.Storage.Postgres;
using Saito.Storage.Sqlite;
using Saito.Storage.SqlServer;
using Saito.Storage.Tests.SqlServer;

namespace Saito.Storage.Tests.Faults;

/// <summary>
/// A full disk or log is the database's storage failing, not the data being wrong (issue 32, item 12): every database's
/// out-of-space and I/O errors are transient (the batch is held and retried, its acknowledgements withheld) and are
/// told apart as storage outages (retried every half second, reported by /health), never refused as bad data, which
/// would acknowledge the message as a <c>database-rejected</c> dead letter.
/// </summary>
public sealed class StorageOutageClassificationTests
{
    private static readonly SqliteReadingStore Sqlite = new(new StorageOptions(), NullLogger<SqliteReadingStore>.Instance);

    private static readonly PostgresReadingStore Postgres = new(
        new StorageOptions { Provider = StorageProvider.Postgres, ConnectionString = "Host=127.0.0.1;Port=1;Username=nobody" },
        NullLogger<PostgresReadingStore>.Instance);

    private static readonly SqlServerReadingStore SqlServer = new(
        new StorageOptions { Provider = StorageProvider.SqlServer, ConnectionString = "Server=127.0.0.1,1;Database=saito;Connect Timeout=2;Encrypt=false" },
        NullLogger<SqlServerReadingStore>.Instance);

    [Theory]
    [InlineData(SQLitePCL.raw.SQLITE_FULL, SQLitePCL.raw.SQLITE_FULL)]
    [InlineData(SQLitePCL.raw.SQLITE_IOERR, SQLitePCL.raw.SQLITE_IOERR)]
    [InlineData(SQLitePCL.raw.SQLITE_IOERR_WRITE, SQLitePCL.raw.SQLITE_IOERR_WRITE)] // an extended code as the result code
    [InlineData(SQLitePCL.raw.SQLITE_IOERR, SQLitePCL.raw.SQLITE_IOERR_FSYNC)]
    [InlineData(SQLitePCL.raw.SQLITE_IOERR, SQLitePCL.raw.SQLITE_IOERR_SHMSIZE)]
    public void Sqlite_full_and_io_errors_are_storage_outages_held_and_retried(int code, int extended)
    {
        var error = new SqliteException("database or disk is full", code, extended);

        Sqlite.IsTransient(error).ShouldBeTrue();
        Sqlite.IsStorageOutage(error).ShouldBeTrue();
    }

    [Theory]
    [InlineData(SQLitePCL.raw.SQLITE_CONSTRAINT)]
    [InlineData(SQLitePCL.raw.SQLITE_ERROR)]
    [InlineData(SQLitePCL.raw.SQLITE_MISMATCH)]
    public void Sqlite_data_errors_are_neither(int code)
    {
        var error = new SqliteException("refused", code);

        Sqlite.IsTransient(error).ShouldBeFalse();
        Sqlite.IsStorageOutage(error).ShouldBeFalse();
    }

    [Fact]
    public void Sqlite_busy_is_transient_but_not_a_storage_outage()
    {
        var busy = new SqliteException("database is locked", SQLitePCL.raw.SQLITE_BUSY);

        Sqlite.IsTransient(busy).ShouldBeTrue();
        Sqlite.IsStorageOutage(busy).ShouldBeFalse();
    }

    [Theory]
    [InlineData("53100")] // disk_full
    [InlineData("53000")] // insufficient_resources
    [InlineData("53200")] // out_of_memory
    [InlineData("53300")] // too_many_connections
    [InlineData("53400")] // configuration_limit_exceeded
    [InlineData("58030")] // io_error
    public void Postgres_insufficient_resources_and_io_errors_are_storage_outages_held_and_retried(string sqlState)
    {
        PostgresErrors.IsStorageOutageSqlState(sqlState).ShouldBeTrue();
        PostgresErrors.IsTransientSqlState(sqlState).ShouldBeTrue();
        var error = new PostgresException("could not extend file: No space left on device", "ERROR", "ERROR", sqlState);
        Postgres.IsTransient(error).ShouldBeTrue();
        Postgres.IsStorageOutage(error).ShouldBeTrue();
        Postgres.IsStorageOutage(new InvalidOperationException("wrapped", error)).ShouldBeTrue();
    }

    [Theory]
    [InlineData("40001")] // serialization_failure
    [InlineData("40P01")] // deadlock_detected
    [InlineData("57P01")] // admin_shutdown
    [InlineData("57P03")] // cannot_connect_now
    [InlineData("08006")] // connection_failure
    public void Postgres_connection_and_concurrency_errors_are_transient_but_not_storage_outages(string sqlState)
    {
        var error = new PostgresException("passing", "FATAL", "FATAL", sqlState);

        Postgres.IsTransient(error).ShouldBeTrue();
        Postgres.IsStorageOutage(error).ShouldBeFalse();
    }

    [Theory]
    [InlineData("23505")] // unique_violation
    [InlineData("23502")] // not_null_violation
    [InlineData("22P02")] // invalid_text_representation
    [InlineData("42P01")] // undefined_table
    [InlineData("58P01")] // undefined_file: a missing tablespace folder stays missing
    public void Postgres_data_and_schema_errors_are_neither(string sqlState)
    {
        PostgresErrors.IsTransientSqlState(sqlState).ShouldBeFalse();
        var error = new PostgresException("refused", "ERROR", "ERROR", sqlState);
        Postgres.IsTransient(error).ShouldBeFalse();
        Postgres.IsStorageOutage(error).ShouldBeFalse();
    }

    [Theory]
    [InlineData(9002)]  // the transaction log is full
    [InlineData(1105)]  // the filegroup is full
    [InlineData(1101)]  // no more pages in the filegroup: disk full
    [InlineData(40544)] // Azure: size quota reached
    [InlineData(40552)] // Azure: too much transaction log space used
    public void Sql_server_log_and_filegroup_full_are_storage_outages_held_and_retried(int number)
    {
        SqlServerErrors.IsStorageFullNumber(number).ShouldBeTrue();
        SqlServerErrors.IsTransientNumber(number).ShouldBeTrue();
        var error = SqlExceptions.Create(number);
        SqlServer.IsTransient(error).ShouldBeTrue();
        SqlServer.IsStorageOutage(error).ShouldBeTrue();
    }

    [Theory]
    [InlineData(1205)] // deadlock: transient, not storage
    [InlineData(-2)]   // timeout
    public void Sql_server_passing_errors_are_transient_but_not_storage_outages(int number)
    {
        SqlServerErrors.IsTransientNumber(number).ShouldBeTrue();
        SqlServerErrors.IsStorageFullNumber(number).ShouldBeFalse();
        SqlServer.IsStorageOutage(SqlExceptions.Create(number)).ShouldBeFalse();
    }

    [Theory]
    [InlineData(2627)] // primary key violation
    [InlineData(515)]  // NULL into a NOT NULL column
    [InlineData(8152)] // string or binary data would be truncated
    public void Sql_server_data_errors_are_neither(int number)
    {
        SqlServerErrors.IsTransientNumber(number).ShouldBeFalse();
        SqlServerErrors.IsStorageFullNumber(number).ShouldBeFalse();
        SqlServer.IsStorageOutage(SqlExceptions.Create(number)).ShouldBeFalse();
    }
}
